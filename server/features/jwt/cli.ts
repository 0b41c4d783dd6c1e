import { parseArgs } from 'node:util'
import { openToolContext } from '../../core/tool-context.js'
import { listSigningKeys, rotateSigningKey } from './keys.js'
import { JWT_USAGE } from './usage.js'

/** Runs `gatehouse jwt <subcommand>`; returns the exit code (0 done, 2 usage). */
export async function jwtCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    process.stdout.write(JWT_USAGE)
    return sub === undefined ? 2 : 0
  }
  if (sub !== 'rotate' && sub !== 'keys') {
    process.stderr.write(`gatehouse: unknown jwt command "${sub}"\n\n${JWT_USAGE}`)
    return 2
  }
  let dataDirFlag: string | undefined
  try {
    dataDirFlag = parseArgs({ args: rest, options: { 'data-dir': { type: 'string' } }, strict: true }).values['data-dir']
  } catch (e) {
    process.stderr.write(`gatehouse: ${(e as Error).message}\n\n${JWT_USAGE}`)
    return 2
  }
  const opened = await openToolContext(dataDirFlag, { env, log: (line) => process.stderr.write(`${line}\n`) })
  if ('error' in opened) {
    process.stderr.write(`gatehouse: ${opened.error}\n`)
    return 2
  }
  const { ctx, close } = opened
  try {
    if (sub === 'rotate') {
      const rotated = await rotateSigningKey(ctx, { via: 'cli' })
      process.stdout.write(`New signing key ${rotated.id} (${rotated.alg}); retired: ${rotated.retired.join(', ') || 'none'}\n`)
      return 0
    }
    for (const key of await listSigningKeys(ctx)) {
      const state = key.signing
        ? 'signing'
        : key.retiredAt
          ? `retired, leaves the JWKS ${new Date(key.removedAt ?? 0).toISOString()}`
          : 'published'
      process.stdout.write(`${key.id}  ${key.alg}  created ${new Date(key.createdAt).toISOString()}  ${state}\n`)
    }
    return 0
  } finally {
    await close()
  }
}
