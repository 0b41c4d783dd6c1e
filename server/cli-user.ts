import { parseArgs } from 'node:util'
import { openToolContext } from './core/tool-context.js'
import { APIError } from './core/errors.js'
import { findUserByEmail } from './core/users.js'
import { parseRoleList } from './core/access-control.js'
import { createUser, inviteToSignUp, setRole, systemActor } from './features/admin/index.js'

/**
 * `gatehouse user ...`: user administration straight on the data directory, whether or not a
 * server is running on it (SQLite WAL with a busy timeout lets both write), so the first
 * administrator of a fresh install needs no HTTP call. It goes through the same domain functions
 * as the admin endpoints, as the operator, and is audited as such.
 */

export const USER_USAGE = `Usage: gatehouse user create --email <email> (--password <password> | --password-stdin) --name <name> [--role <role>[,<role>...]]
       gatehouse user set-role --email <email> --role <role>[,<role>...] [--config <file>]
       gatehouse user invite --email <email> [--base-url <url>]

Options:
  --password-stdin                        read the password from standard input (keeps it out of ps and shell history)
  --base-url <url>                        invite: the server's public URL for the printed link (default http://127.0.0.1)
  --data-dir <dir>   GATEHOUSE_DATA_DIR   data directory (default ./data)
  --config <file>    GATEHOUSE_CONFIG     JSON file merged over the stored config, as serve reads it
  -h, --help                              this help

Roles are the built-in admin and user plus the custom roles (admin.roles) of the data directory's
config and of the --config file.
invite prints a sign-up link for the address, good for 7 days (signUp.mode "invitation" lets it sign up).
`

const OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  name: { type: 'string' },
  role: { type: 'string' },
  'base-url': { type: 'string' },
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/** The first line of a stream (a password piped in), without its line ending. */
async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string> {
  let text = ''
  for await (const chunk of stream) {
    text += chunk.toString()
    if (text.includes('\n')) break
  }
  return text.split(/\r?\n/)[0] ?? ''
}

export interface CliIO {
  out(line: string): void
  err(line: string): void
}

const stdio: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}

/** Runs `gatehouse user <subcommand>`; returns the exit code (0 done, 1 refused, 2 usage). */
export async function userCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, io: CliIO = stdio): Promise<number> {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    io.out(USER_USAGE)
    return sub === undefined ? 2 : 0
  }
  if (sub !== 'create' && sub !== 'set-role' && sub !== 'invite') {
    io.err(`gatehouse: unknown user command "${sub}"\n\n${USER_USAGE}`)
    return 2
  }
  let values: { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string }
  try {
    values = parseArgs({ args: rest, options: OPTIONS, allowPositionals: false, strict: true }).values
  } catch (e) {
    io.err(`gatehouse: ${(e as Error).message}\n\n${USER_USAGE}`)
    return 2
  }
  if (values.help) {
    io.out(USER_USAGE)
    return 0
  }
  if (values['password-stdin'] && values.password === undefined) values = { ...values, password: await readFirstLine(process.stdin) }
  const required =
    sub === 'create' ? (['email', 'password', 'name'] as const) : sub === 'invite' ? (['email'] as const) : (['email', 'role'] as const)
  const missing = required.filter((k) => !values[k])
  if (missing.length > 0) {
    io.err(`gatehouse: user ${sub} needs ${missing.map((k) => `--${k}`).join(', ')}\n\n${USER_USAGE}`)
    return 2
  }
  const roles = values.role !== undefined ? parseRoleList(values.role) : undefined
  if (roles !== undefined && roles.length === 0) {
    io.err('gatehouse: --role must name at least one role')
    return 2
  }
  const opened = await openToolContext(values['data-dir'], {
    env,
    log: (line) => io.err(line),
    configFile: values.config ?? (env.GATEHOUSE_CONFIG || undefined),
  })
  if ('error' in opened) {
    io.err(`gatehouse: ${opened.error}`)
    return 2
  }
  const { ctx } = opened
  const actor = systemActor('cli')
  try {
    const email = values.email as string
    if (sub === 'create') {
      const created = await createUser(
        ctx,
        actor,
        { email, password: values.password as string, name: values.name as string, role: roles },
        null,
      )
      io.out(`Created user ${created.email} (id ${created.id}, role ${created.role})`)
      return 0
    }
    if (sub === 'invite') {
      const invited = await inviteToSignUp(ctx, actor, { email }, null)
      const link = values['base-url']
        ? invited.link.replace(ctx.baseURL, `${values['base-url'].replace(/\/+$/, '')}${ctx.config().basePath}`)
        : invited.link
      io.out(`Invited ${invited.email} to sign up until ${new Date(invited.expiresAt).toISOString()}:\n${link}`)
      return 0
    }
    const target = await findUserByEmail(ctx, email)
    if (!target) {
      io.err(`gatehouse: no user with email ${email}`)
      return 1
    }
    const updated = await setRole(ctx, actor, { userId: target.id, role: roles as string[] }, null)
    io.out(`Set role of ${updated.email} to ${updated.role} (was ${target.role ?? 'none'})`)
    return 0
  } catch (e) {
    if (e instanceof APIError) {
      io.err(`gatehouse: ${e.message} (${e.code})`)
      return 1
    }
    throw e
  } finally {
    await opened.close()
  }
}
