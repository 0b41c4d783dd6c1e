import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { openToolContext } from '../../core/tool-context.js'
import { ACCEPTED_HASH_FORMATS } from '../../crypto/foreign-hashes.js'
import { type ImportOutcome, type ImportProgress, importUsersFile } from './users.js'
import { inferFormat, type UsersFileFormat } from './users-file.js'

/**
 * `gatehouse import users|better-auth` (issue 29): straight on the data directory or the
 * PostgreSQL database, whether or not a server runs on it. Exit codes: 0 done (also a dry run, and
 * --skip-invalid with rows left out), 1 refused (nothing imported), 2 usage.
 */

export const IMPORT_USAGE = `Usage: gatehouse import users --file <file> [--format json|csv] [--skip-invalid] [--dry-run] [--json]
       gatehouse import better-auth --from <better-auth SQLite file | postgres://… URL> [--dry-run] [--json]

Options:
  --file <file>        a JSON array or a CSV with a header: email (required), name, emailVerified,
                       username, role, createdAt, image, passwordHash (format inferred from .json/.csv)
  --skip-invalid       import the valid rows, report the invalid ones (exit 0)
  --dry-run            change nothing, report what the import would do
  --json               print the report as JSON on standard output
  --data-dir <dir>     GATEHOUSE_DATA_DIR      data directory (default ./data)
  --database-url <url> GATEHOUSE_DATABASE_URL  a PostgreSQL database instead of the data directory's SQLite
  -h, --help           this help

Password hashes kept as they come (verified at the user's first sign-in, then replaced by scrypt):
${ACCEPTED_HASH_FORMATS.join(', ')}.
`

export interface ImportIO {
  out(text: string): void
  err(text: string): void
  /** Progress lines are shown (standard error is a terminal). */
  progress: boolean
}

const stdio: ImportIO = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  progress: Boolean(process.stderr.isTTY) || process.env.GATEHOUSE_PROGRESS === '1',
}

const USERS_OPTIONS = {
  file: { type: 'string' },
  format: { type: 'string' },
  'skip-invalid': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

const BETTER_AUTH_OPTIONS = {
  from: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/** Rows per second and time left, at most once a second, on standard error. */
function progressPrinter(io: ImportIO): ((p: ImportProgress) => void) | undefined {
  if (!io.progress) return undefined
  const started = performance.now()
  let last = started
  let phase = ''
  return (p) => {
    const now = performance.now()
    if (p.phase !== phase) {
      phase = p.phase
      last = now
    }
    const done = p.bytes >= p.totalBytes
    if (!done && now - last < 1000) return
    last = now
    const seconds = (now - started) / 1000
    const rate = seconds > 0 ? Math.round(p.rows / seconds) : 0
    const fraction = p.totalBytes > 0 ? p.bytes / p.totalBytes : 1
    const eta = fraction > 0 && !done ? Math.round((seconds / fraction) * (1 - fraction)) : 0
    io.err(`${p.phase}: ${p.rows} rows, ${Math.round(fraction * 100)}%, ${rate} rows/s${done ? '' : `, about ${eta} s left`}\n`)
  }
}

function printOutcome(outcome: ImportOutcome, json: boolean, io: ImportIO): number {
  const { report } = outcome
  if (json) {
    io.out(`${JSON.stringify(report)}\n`)
  } else {
    for (const e of report.errors) io.err(`line ${e.line}${e.field ? `, ${e.field}` : ''}: ${e.reason}\n`)
    const what = `${report.users} users, ${report.accounts} accounts, ${report.sessions} sessions, ${report.organizations} organizations`
    const skipped = report.skipped.length > 0 ? `; ${report.skipped.length} already imported (skipped)` : ''
    // Not refused with problems: --skip-invalid left those rows out.
    const errors = report.errors.length > 0 ? `; ${report.errors.length} rows with problems left out (listed above)` : ''
    if (outcome.refused) io.err(`gatehouse: import refused, nothing imported (${report.errors.length} problems, listed above)\n`)
    else if (outcome.dryRun) io.out(`Dry run, nothing changed: would import ${what}${skipped}${errors}\n`)
    else io.out(`Imported ${what}${skipped}${errors}\n`)
  }
  return outcome.refused ? 1 : 0
}

/** Runs `gatehouse import <source>`; returns the exit code. */
export async function importCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, io: ImportIO = stdio): Promise<number> {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    io.out(IMPORT_USAGE)
    return sub === undefined ? 2 : 0
  }
  if (sub !== 'users' && sub !== 'better-auth') {
    io.err(`gatehouse: unknown import source "${sub}"\n\n${IMPORT_USAGE}`)
    return 2
  }
  const usage = (message: string) => {
    io.err(`gatehouse: ${message}\n\n${IMPORT_USAGE}`)
    return 2
  }
  if (sub === 'better-auth') {
    let values: { from?: string; 'dry-run'?: boolean; json?: boolean; 'data-dir'?: string; help?: boolean }
    try {
      values = parseArgs({ args: rest, options: BETTER_AUTH_OPTIONS, allowPositionals: false, strict: true }).values
    } catch (e) {
      return usage((e as Error).message)
    }
    if (values.help) {
      io.out(IMPORT_USAGE)
      return 0
    }
    if (!values.from) return usage('import better-auth needs --from')
    const { importBetterAuth } = await import('./better-auth.js')
    const opened = await openToolContext(values['data-dir'], { env, log: (line) => io.err(`${line}\n`) })
    if ('error' in opened) {
      io.err(`gatehouse: ${opened.error}\n`)
      return 2
    }
    let changed = false
    try {
      const outcome = await importBetterAuth(opened.ctx, { from: values.from, dryRun: Boolean(values['dry-run']), via: 'cli' })
      if ('usage' in outcome) return usage(outcome.usage)
      changed = !outcome.refused && !outcome.dryRun
      return printOutcome(outcome, Boolean(values.json), io)
    } finally {
      await opened.close()
      // An import that changed nothing leaves no data directory, secret or database behind.
      if (!changed) opened.discardCreated()
    }
  }
  let values: {
    file?: string
    format?: string
    'skip-invalid'?: boolean
    'dry-run'?: boolean
    json?: boolean
    'data-dir'?: string
    help?: boolean
  }
  try {
    values = parseArgs({ args: rest, options: USERS_OPTIONS, allowPositionals: false, strict: true }).values
  } catch (e) {
    return usage((e as Error).message)
  }
  if (values.help) {
    io.out(IMPORT_USAGE)
    return 0
  }
  if (!values.file) return usage('import users needs --file')
  const file = resolve(values.file)
  if (!existsSync(file) || !statSync(file).isFile()) return usage(`no such file: ${values.file}`)
  let format: UsersFileFormat
  if (values.format !== undefined) {
    if (values.format !== 'json' && values.format !== 'csv') return usage(`--format must be json or csv, not "${values.format}"`)
    format = values.format
  } else {
    const inferred = inferFormat(file)
    if (!inferred) return usage(`cannot tell the format of ${values.file}: name it .json or .csv, or give --format`)
    format = inferred
  }
  const opened = await openToolContext(values['data-dir'], { env, log: (line) => io.err(`${line}\n`) })
  if ('error' in opened) {
    io.err(`gatehouse: ${opened.error}\n`)
    return 2
  }
  let changed = false
  try {
    const outcome = await importUsersFile(opened.ctx, {
      file,
      format,
      skipInvalid: Boolean(values['skip-invalid']),
      dryRun: Boolean(values['dry-run']),
      onProgress: progressPrinter(io),
      via: 'cli',
    })
    changed = !outcome.refused && !outcome.dryRun
    return printOutcome(outcome, Boolean(values.json), io)
  } finally {
    await opened.close()
    // An import that changed nothing (refused, dry run) leaves no data directory, secret or database behind.
    if (!changed) opened.discardCreated()
  }
}
