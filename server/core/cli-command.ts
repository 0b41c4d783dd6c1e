import { type ParseArgsConfig, parseArgs } from 'node:util'
import { APIError } from './errors.js'
import { openToolContext, type ToolContext } from './tool-context.js'

export type FlagOptions = NonNullable<ParseArgsConfig['options']>
export type FlagValues<O extends FlagOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true }>>['values']

/**
 * A command's flags, parsed strictly (an unknown flag, a missing value, a positional argument): a
 * parse error goes to `usage` (which prints the message and the command's help), whose exit code
 * comes back as `{ exit }`. The commands of `gatehouse oidc`, `gatehouse saml`, … share it.
 */
export function parseFlags<O extends FlagOptions>(
  args: string[],
  options: O,
  usage: (message: string) => number,
): { values: FlagValues<O> } | { exit: number } {
  try {
    return { values: parseArgs({ args, options, strict: true }).values }
  } catch (e) {
    return { exit: usage((e as Error).message) }
  }
}

/**
 * Runs a command's `body` on the data directory's tool context (core/tool-context.ts) and closes
 * it after: a directory that cannot be opened is one line and exit 2, a refusal (an APIError: a
 * duplicate name, an unknown id) one line and exit 1; the body answers the exit code otherwise.
 */
export async function withToolContext(
  dataDir: string | undefined,
  env: NodeJS.ProcessEnv,
  body: (ctx: ToolContext['ctx']) => Promise<number>,
): Promise<number> {
  const opened = await openToolContext(dataDir, { env, log: (line) => process.stderr.write(`${line}\n`) })
  if ('error' in opened) {
    process.stderr.write(`gatehouse: ${opened.error}\n`)
    return 2
  }
  try {
    return await body(opened.ctx)
  } catch (e) {
    if (e instanceof APIError) {
      process.stderr.write(`gatehouse: ${e.message}\n`)
      return 1
    }
    throw e
  } finally {
    await opened.close()
  }
}
