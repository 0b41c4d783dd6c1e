/**
 * `gatehouse migrate --to postgres://… [--data-dir <dir>]`: copies the data directory's SQLite
 * database into an EMPTY PostgreSQL database and verifies the copy (the copy itself, shared with
 * backups on PostgreSQL and restores into it: server/db/pg/copy.ts).
 *
 * - Refuses a target holding any table (public schema) or drizzle's migration journal.
 * - One PostgreSQL transaction for everything: the schema (the pg migrations, run inside it; DDL is
 *   transactional on PostgreSQL), every table in foreign-key order, identity counters moved past
 *   the copied ids, then the verification; any failure rolls it all back, leaving the target empty.
 *   It holds the migration advisory lock meanwhile, so a server started on the target waits.
 * - Rows go through both drizzle mirrors (the SQLite tables server/schema.ts hands down, and pg/schema.ts): the same JS
 *   values on both sides (epoch ms → timestamptz as Date, 0/1 → boolean, JSON text → jsonb).
 * - Verification: per table, the row count and an order-independent checksum (sum modulo 2^64
 *   and xor of the SHA-256 of each row's canonical JSON) computed from SQLite and from what
 *   PostgreSQL holds inside the transaction, before COMMIT.
 * - SQLite is read inside one read transaction: a consistent snapshot even if a server still runs
 *   (writes made after the snapshot are not copied: stop the server first, the command says so).
 */
import { existsSync, renameSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { runningServer } from '../running-server.js'
import { parseArgs } from 'node:util'
import { ConfigError } from '../../config/store.js'
import { maskUrlPassword } from '../../config/url-password.js'
import { checkDatabaseUrl, type EngineFlags } from '../engine.js'
import { CopyRefused as MigrateRefused, copySqliteIntoPostgres, type TableReport } from './copy.js'

export const MIGRATE_USAGE = `Usage: gatehouse migrate --to postgres://user:password@host:5432/db [--data-dir <dir>]

Copies the data directory's SQLite database into an EMPTY PostgreSQL database (14 or newer),
table by table in one transaction, then verifies row counts and a checksum of every table on
both sides; nothing is kept in PostgreSQL unless everything matched. Stop the server first: writes
made during the copy are not carried over. The data directory is left as it is (its config.json
and secret stay there: give every instance the same GATEHOUSE_SECRET).

Options:
  --to <url>                             the empty PostgreSQL database
  --data-dir <dir>   GATEHOUSE_DATA_DIR  data directory (default ./data)
  -h, --help                             this help
`

/** An operator's error (not empty, unreachable): the copy's refusal. */
export { CopyRefused as MigrateRefused, copyOrder, type TableReport } from './copy.js'

export interface MigrateOptions {
  dataDir: string
  to: string
  /** Rows per INSERT/SELECT batch. */
  batch?: number
  migrationsFolder?: string
  log?: (line: string) => void
}

/** Copies and verifies (server/db/pg/copy.ts); returns the per-table report. Throws MigrateRefused for an operator error. */
export async function migrateToPostgres(options: MigrateOptions): Promise<TableReport[]> {
  const file = join(options.dataDir, 'gatehouse.db')
  if (!existsSync(file)) throw new MigrateRefused(`no Gatehouse database in ${options.dataDir} (expected ${file})`)
  return copySqliteIntoPostgres(file, options.to, { batch: options.batch, migrationsFolder: options.migrationsFolder, log: options.log })
}

/**
 * After a verified copy, the SQLite file and its WAL files are renamed aside
 * (`gatehouse.db.migrated-<time>`), so that nothing takes the stale copy for the data: a backup of
 * the directory, or a start without --database-url that would serve last week's people. Left in
 * place (null) while a server still runs on it.
 */
function retireSqliteFile(dataDir: string, now: number): string | null {
  if (runningServer(dataDir) !== null) return null
  const aside = `gatehouse.db.migrated-${new Date(now).toISOString().replaceAll(':', '-')}`
  for (const suffix of ['', '-wal', '-shm']) {
    const file = join(dataDir, `gatehouse.db${suffix}`)
    if (existsSync(file)) renameSync(file, join(dataDir, `${aside}${suffix}`))
  }
  return aside
}

/** The CLI entry. Exit codes: 0 copied and verified, 1 refused or failed (one line on stderr), 2 usage. */
export async function migrateCommand(argv: string[], engine: EngineFlags): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{ options: { to: { type: 'string' }; 'data-dir': { type: 'string' }; help: { type: 'boolean'; short: 'h' } } }>
  >
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { to: { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    })
  } catch (error) {
    process.stderr.write(`gatehouse: ${(error as Error).message}\n\n${MIGRATE_USAGE}`)
    return 2
  }
  if (parsed.values.help) {
    process.stdout.write(MIGRATE_USAGE)
    return 0
  }
  // --to, else the engine flags (--database-url / GATEHOUSE_DATABASE_URL) name the target.
  const to = parsed.values.to ?? engine.databaseUrl
  if (!to) {
    process.stderr.write(`gatehouse: migrate needs --to postgres://…\n\n${MIGRATE_USAGE}`)
    return 2
  }
  try {
    checkDatabaseUrl(to, '--to')
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`gatehouse: ${error.message}\n`)
      return 2
    }
    throw error
  }
  const dataDir = resolve(parsed.values['data-dir'] ?? (process.env.GATEHOUSE_DATA_DIR || './data'))
  process.stdout.write(`Copying ${dataDir} into ${maskUrlPassword(to)}\n`)
  try {
    const reports = await migrateToPostgres({ dataDir, to, log: (line) => process.stdout.write(`${line}\n`) })
    const rows = reports.reduce((n, r) => n + r.rows, 0)
    process.stdout.write(`Copied and verified ${rows} rows in ${reports.length} tables.\n`)
    const aside = retireSqliteFile(dataDir, Date.now())
    process.stdout.write(
      aside
        ? `Renamed the SQLite file to ${join(dataDir, aside)}: the data now lives in PostgreSQL (delete that file once you no longer need it).\n`
        : `A server still runs on ${dataDir}: stop it, then rename or delete ${join(dataDir, 'gatehouse.db')} (the data now lives in PostgreSQL).\n`,
    )
    process.stdout.write(
      `Next: start each instance with --database-url <the same URL> --data-dir <a copy of ${dataDir}> and the same GATEHOUSE_SECRET.\n`,
    )
    return 0
  } catch (error) {
    process.stderr.write(`gatehouse: migrate: ${(error as Error).message}\n`)
    return 1
  }
}
