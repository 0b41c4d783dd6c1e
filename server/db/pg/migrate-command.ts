/**
 * `gatehouse migrate --to postgres://… [--data-dir <dir>]`: copies the data directory's SQLite
 * database into an EMPTY PostgreSQL database and verifies the copy.
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
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, renameSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { getTableName, sql } from 'drizzle-orm'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import { getTableConfig as pgTableConfig, type PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as sqliteTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import pg from 'pg'
import { ConfigError } from '../../config/store.js'
import { maskUrlPassword } from '../../config/url-password.js'
import { checkDatabaseUrl, type EngineFlags } from '../engine.js'
import { openDatabase } from '../index.js'
import { sqliteTables } from '../schema.js'
import { pgSchema } from './schema.js'
import { MIGRATION_LOCK_KEY, pgMigrationsFolder } from './storage.js'

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

export class MigrateRefused extends Error {}

export interface TableReport {
  table: string
  rows: number
  checksum: string
}

export interface MigrateOptions {
  dataDir: string
  to: string
  /** Rows per INSERT/SELECT batch. */
  batch?: number
  migrationsFolder?: string
  log?: (line: string) => void
}

/** Tables in an order where every foreign key points to a table copied before. */
export function copyOrder(): string[] {
  const schema = sqliteTables()
  const keys = Object.keys(schema) as (keyof typeof schema)[]
  const nameToKey = new Map<string, string>(keys.map((k) => [getTableName(schema[k]), k as string]))
  const deps = new Map(
    keys.map((k) => [
      k as string,
      sqliteTableConfig(schema[k] as SQLiteTable)
        .foreignKeys.map((fk) => nameToKey.get(getTableName(fk.reference().foreignTable)) as string)
        .filter((d) => d !== (k as string)),
    ]),
  )
  const out: string[] = []
  const visit = (k: string, path: Set<string>) => {
    if (out.includes(k)) return
    if (path.has(k)) throw new Error(`foreign-key cycle through ${k}`)
    path.add(k)
    for (const d of deps.get(k) ?? []) visit(d, path)
    path.delete(k)
    out.push(k)
  }
  for (const k of keys) visit(k, new Set())
  return out
}

/** JSON with sorted object keys and dates as epoch ms: the same text for the same row on both engines. */
function canonical(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.getTime())
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value === undefined ? null : value)
}

class Checksum {
  private sum = 0n
  private xor = 0n
  rows = 0
  add(row: unknown): void {
    const digest = createHash('sha256').update(canonical(row)).digest()
    const n = digest.readBigUInt64BE(0)
    this.sum = (this.sum + n) & 0xffffffffffffffffn
    this.xor ^= digest.readBigUInt64BE(8)
    this.rows++
  }
  toString(): string {
    return `${this.sum.toString(16).padStart(16, '0')}${this.xor.toString(16).padStart(16, '0')}`
  }
}

type SourceDatabase = ReturnType<typeof openDatabase>
type TargetDatabase = NodePgDatabase<typeof pgSchema>

/** Refuses a target holding any table (public schema) or drizzle's migration journal. */
async function refuseNonEmptyTarget(client: pg.Client): Promise<void> {
  const existing = await client.query<{ name: string }>(
    `select table_schema || '.' || table_name as name from information_schema.tables
      where table_schema = 'public' or (table_schema = 'drizzle' and table_name = '__drizzle_migrations') order by 1`,
  )
  if (existing.rows.length > 0) {
    const names = existing.rows.map((r) => r.name)
    throw new MigrateRefused(
      `the target database is not empty (${names.length} table${names.length === 1 ? '' : 's'}: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}); migrate copies into an empty database only`,
    )
  }
}

/** The schema, inside the open transaction (drizzle's journal too, so servers find it migrated). */
async function applySchema(client: pg.Client, migrationsFolder: string): Promise<void> {
  await client.query('CREATE SCHEMA IF NOT EXISTS drizzle')
  await client.query(
    'CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)',
  )
  for (const migration of readMigrationFiles({ migrationsFolder })) {
    for (const statement of migration.sql) if (statement.trim()) await client.query(statement)
    await client.query('insert into drizzle.__drizzle_migrations ("hash", "created_at") values ($1, $2)', [
      migration.hash,
      migration.folderMillis,
    ])
  }
}

/** Copies one table's rows in batches; returns the checksum of what SQLite held. */
async function copyRows(source: SourceDatabase, target: TargetDatabase, from: SQLiteTable, to: PgTable, batch: number): Promise<Checksum> {
  const expected = new Checksum()
  let last = 0
  for (;;) {
    // Keyset pagination on SQLite's rowid: constant cost per batch however large the table.
    const page = (await source.db
      .select({ rid: sql<number>`rowid`, row: from as never })
      .from(from as never)
      .where(sql`rowid > ${last}`)
      .orderBy(sql`rowid`)
      .limit(batch)) as unknown as { rid: number; row: Record<string, unknown> }[]
    if (page.length === 0) break
    last = page[page.length - 1]?.rid ?? last
    const rows = page.map((p) => p.row)
    for (const row of rows) expected.add(row)
    await target.insert(to).values(rows as never)
  }
  return expected
}

/** Identity columns (auditEvent.id) continue after the copied ids. */
async function continueIdentityCounters(client: pg.Client, to: PgTable, name: string): Promise<void> {
  for (const column of pgTableConfig(to).columns) {
    if ((column as unknown as { generatedIdentity?: unknown }).generatedIdentity) {
      await client.query(
        `select setval(pg_get_serial_sequence($1, $2), coalesce((select max("${column.name}") from "${name}"), 0) + 1, false)`,
        [`"${name}"`, column.name],
      )
    }
  }
}

/** The checksum of what PostgreSQL now holds in a table, read back through the pg mirror. */
async function checksumInPostgres(target: TargetDatabase, to: PgTable, name: string, batch: number): Promise<Checksum> {
  const actual = new Checksum()
  // Keyset pages over the primary key: one column, or a composite one (oidcModel: kind + id).
  const config = pgTableConfig(to)
  const single = config.columns.find((c) => c.primary)
  const keyColumns = single ? [single] : (config.primaryKeys[0]?.columns ?? [])
  if (keyColumns.length === 0) throw new Error(`${name} has no primary key`)
  const propertyOf = (column: unknown) => Object.entries(to).find(([, c]) => c === column)?.[0] as string
  let after: unknown[] | undefined
  for (;;) {
    const where =
      after === undefined
        ? undefined
        : sql`(${sql.join(keyColumns, sql`, `)}) > (${sql.join(
            after.map((value) => sql`${value}`),
            sql`, `,
          )})`
    const page = (await target
      .select()
      .from(to)
      .where(where)
      .orderBy(...keyColumns)
      .limit(batch * 4)) as Record<string, unknown>[]
    if (page.length === 0) break
    for (const row of page) actual.add(row)
    const last = page[page.length - 1] as Record<string, unknown>
    after = keyColumns.map((column) => last[propertyOf(column)])
  }
  return actual
}

/** Copies one table, moves its identity counters on and verifies the copy (count and checksum). */
async function copyTable(
  source: SourceDatabase,
  client: pg.Client,
  target: TargetDatabase,
  key: string,
  batch: number,
): Promise<TableReport> {
  const from = sqliteTables()[key as keyof ReturnType<typeof sqliteTables>] as SQLiteTable
  const to = (pgSchema as unknown as Record<string, PgTable>)[key] as PgTable
  const name = getTableName(from)
  const expected = await copyRows(source, target, from, to, batch)
  await continueIdentityCounters(client, to, name)
  const actual = await checksumInPostgres(target, to, name, batch)
  const count = await client.query<{ n: number }>(`select count(*)::int as n from "${name}"`)
  if (count.rows[0]?.n !== expected.rows || actual.rows !== expected.rows) {
    throw new Error(`${name}: ${expected.rows} rows in SQLite, ${count.rows[0]?.n} in PostgreSQL`)
  }
  if (actual.toString() !== expected.toString()) {
    throw new Error(`${name}: checksums differ (SQLite ${expected}, PostgreSQL ${actual})`)
  }
  return { table: name, rows: expected.rows, checksum: expected.toString() }
}

/** Copies and verifies; returns the per-table report. Throws MigrateRefused for an operator error. */
export async function migrateToPostgres(options: MigrateOptions): Promise<TableReport[]> {
  const log = options.log ?? (() => {})
  const batch = options.batch ?? 500
  const file = join(options.dataDir, 'gatehouse.db')
  if (!existsSync(file)) throw new MigrateRefused(`no Gatehouse database in ${options.dataDir} (expected ${file})`)
  const source = openDatabase(file)
  const client = new pg.Client({ connectionString: options.to })
  try {
    try {
      await client.connect()
    } catch (error) {
      throw new MigrateRefused(`cannot connect to ${maskUrlPassword(options.to)}: ${(error as Error).message}`)
    }
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()])
    await refuseNonEmptyTarget(client)
    const target = drizzle({ client, schema: pgSchema })
    const reports: TableReport[] = []
    source.sqlite.exec('BEGIN')
    await client.query('BEGIN')
    try {
      await applySchema(client, options.migrationsFolder ?? pgMigrationsFolder)
      for (const key of copyOrder()) {
        const report = await copyTable(source, client, target, key, batch)
        reports.push(report)
        log(`  ${report.table.padEnd(14)} ${String(report.rows).padStart(9)} rows  checksum ${report.checksum}  ok`)
      }
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      if (source.sqlite.inTransaction) source.sqlite.exec('ROLLBACK')
    }
    return reports
  } finally {
    await client.end().catch(() => {})
    source.close()
  }
}

/** Whether a server runs on the data directory (its gatehouse.pid names a live process). */
function serverRunsOn(dataDir: string): boolean {
  const pidFile = join(dataDir, 'gatehouse.pid')
  if (!existsSync(pidFile)) return false
  const pid = Number(readFileSync(pidFile, 'utf8').trim())
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * After a verified copy, the SQLite file and its WAL files are renamed aside
 * (`gatehouse.db.migrated-<time>`), so that nothing takes the stale copy for the data: a backup of
 * the directory, or a start without --database-url that would serve last week's people. Left in
 * place (null) while a server still runs on it.
 */
function retireSqliteFile(dataDir: string, now: number): string | null {
  if (serverRunsOn(dataDir)) return null
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
