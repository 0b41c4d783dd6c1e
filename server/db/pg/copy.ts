/**
 * The one copy of every table between the engines, both ways: SQLite → PostgreSQL (`gatehouse
 * migrate --to`, and `gatehouse restore --database-url`, which restores an archive's SQLite file
 * into PostgreSQL) and PostgreSQL → SQLite (a backup on a PostgreSQL install: the logical export
 * into a SQLite file, archived like a SQLite install's).
 *
 * - Rows go through both drizzle mirrors (the SQLite tables server/schema.ts hands down, and
 *   pg/schema.ts): the same JS values on both sides (epoch ms → timestamptz as Date, 0/1 → boolean,
 *   JSON text → jsonb), in foreign-key order (`copyOrder`), in keyset pages.
 * - Verification: per table, the row count and an order-independent checksum (sum modulo 2^64 and
 *   xor of the SHA-256 of each row's canonical JSON) of what the source held and of what the target
 *   holds, read back inside the target's transaction, before it commits.
 * - Each side is one transaction: the source a consistent snapshot (SQLite: one read transaction;
 *   PostgreSQL: REPEATABLE READ, READ ONLY), the target everything or nothing.
 * - A PostgreSQL target holds the migration advisory lock meanwhile (a server starting on it waits).
 */
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Column, getTableColumns, getTableName, sql } from 'drizzle-orm'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import { getTableConfig as pgTableConfig, type PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as sqliteTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import pg from 'pg'
import { maskUrlPassword } from '../../config/url-password.js'
import { type Database_, openDatabase } from '../index.js'
import { journalOf } from '../release.js'
import { sqliteTables } from '../schema.js'
import { pgSchema } from './schema.js'
import { MIGRATION_LOCK_KEY, pgMigrationsFolder, setNumberParsers } from './storage.js'

/** An operator's error (not empty, unreachable, another schema version, in use): one line, nothing changed. */
export class CopyRefused extends Error {}

export interface TableReport {
  table: string
  rows: number
  checksum: string
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

type PgSide = { engine: 'postgres'; client: pg.Client | pg.PoolClient; db: NodePgDatabase<typeof pgSchema> }
type SqliteSide = { engine: 'sqlite'; database: Database_ }
type Side = PgSide | SqliteSide

const engineName = (side: Side) => (side.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL')

/** The columns a table has on one side (null: no such table), by name. */
async function columnsOn(side: Side, table: string): Promise<Set<string> | null> {
  if (side.engine === 'sqlite') {
    const rows = side.database.sqlite.prepare(`PRAGMA table_info("${table.replaceAll('"', '""')}")`).all() as { name: string }[]
    return rows.length ? new Set(rows.map((r) => r.name)) : null
  }
  const { rows } = await side.client.query<{ name: string }>(
    "select column_name as name from information_schema.columns where table_schema = 'public' and table_name = $1",
    [table],
  )
  return rows.length ? new Set(rows.map((r) => r.name)) : null
}

/** A table's mirror on each side. */
const sqliteTable = (key: string) => sqliteTables()[key as keyof ReturnType<typeof sqliteTables>] as unknown as SQLiteTable
const pgTable = (key: string) => (pgSchema as unknown as Record<string, PgTable>)[key] as PgTable
const columnsOf = (table: SQLiteTable | PgTable): Record<string, Column> => getTableColumns(table) as Record<string, Column>

/**
 * One table's rows in keyset pages (SQLite's rowid, PostgreSQL's primary key, one column or
 * composite), reading only `properties` (the columns both sides have).
 */
async function* pages(side: Side, key: string, properties: string[], batch: number): AsyncGenerator<Record<string, unknown>[]> {
  if (side.engine === 'sqlite') {
    const from = sqliteTable(key)
    const columns = columnsOf(from)
    const picked = Object.fromEntries(properties.map((p) => [p, columns[p] as Column]))
    let last = 0
    for (;;) {
      const page = (await side.database.db
        .select({ rid: sql<number>`rowid`, row: picked as never })
        .from(from as never)
        .where(sql`rowid > ${last}`)
        .orderBy(sql`rowid`)
        .limit(batch)) as unknown as { rid: number; row: Record<string, unknown> }[]
      if (page.length === 0) return
      last = page[page.length - 1]?.rid ?? last
      yield page.map((p) => p.row)
    }
  }
  const table = pgTable(key)
  const columns = columnsOf(table)
  const config = pgTableConfig(table)
  const single = config.columns.find((c) => c.primary)
  const keyColumns = single ? [single] : (config.primaryKeys[0]?.columns ?? [])
  if (keyColumns.length === 0) throw new Error(`${config.name} has no primary key`)
  // By name: a composite key's columns (getTableConfig's primaryKeys) are not the table's own objects.
  const propertyOf = (column: Column) => Object.entries(columns).find(([, c]) => c.name === column.name)?.[0] as string
  const keyProperties = keyColumns.map(propertyOf)
  const selected = Object.fromEntries([...new Set([...properties, ...keyProperties])].map((p) => [p, columns[p] as Column]))
  let after: unknown[] | undefined
  for (;;) {
    const where =
      after === undefined
        ? undefined
        : sql`(${sql.join(keyColumns, sql`, `)}) > (${sql.join(
            after.map((value) => sql`${value}`),
            sql`, `,
          )})`
    const page = (await side.db
      .select(selected as never)
      .from(table)
      .where(where)
      .orderBy(...keyColumns)
      .limit(batch)) as Record<string, unknown>[]
    if (page.length === 0) return
    const last = page[page.length - 1] as Record<string, unknown>
    after = keyProperties.map((p) => last[p])
    yield page.map((row) => Object.fromEntries(properties.map((p) => [p, row[p]])))
  }
}

/**
 * Writes rows: into PostgreSQL through its mirror; into SQLite by a plain INSERT of the copied
 * columns only, each value as the SQLite mirror stores it (the file may be at an earlier schema
 * than the mirror: a pre-upgrade backup).
 */
async function insertRows(side: Side, key: string, properties: string[], rows: Record<string, unknown>[]): Promise<void> {
  if (side.engine === 'postgres') {
    await side.db.insert(pgTable(key)).values(rows as never)
    return
  }
  const table = sqliteTable(key)
  const columns = columnsOf(table)
  const names = properties.map((p) => `"${(columns[p] as Column).name.replaceAll('"', '""')}"`)
  const insert = side.database.sqlite.prepare(
    `INSERT INTO "${getTableName(table).replaceAll('"', '""')}" (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
  )
  for (const row of rows) {
    insert.run(
      ...properties.map((p) => {
        const value = row[p]
        return value === null || value === undefined ? null : (columns[p] as Column).mapToDriverValue(value)
      }),
    )
  }
}

/** PostgreSQL's identity columns (auditEvent.id) continue after the copied ids (SQLite's AUTOINCREMENT follows by itself). */
async function continueIdentityCounters(side: Side, key: string): Promise<void> {
  if (side.engine !== 'postgres') return
  const to = (pgSchema as unknown as Record<string, PgTable>)[key] as PgTable
  const name = pgTableConfig(to).name
  for (const column of pgTableConfig(to).columns) {
    if ((column as unknown as { generatedIdentity?: unknown }).generatedIdentity) {
      await side.client.query(
        `select setval(pg_get_serial_sequence($1, $2), coalesce((select max("${column.name}") from "${name}"), 0) + 1, false)`,
        [`"${name}"`, column.name],
      )
    }
  }
}

/**
 * Copies every table of `from` into the (open transaction of) `to` and verifies each: count and
 * checksum of what the source held against what the target holds. The columns copied are those
 * both sides have (all of them between two databases at this build's schema; a pre-upgrade backup
 * reads an earlier schema into a SQLite file at that schema); a table one side lacks is left out.
 */
export async function copyTables(
  from: Side,
  to: Side,
  options: { batch?: number; log?: (line: string) => void } = {},
): Promise<TableReport[]> {
  const batch = options.batch ?? 500
  const reports: TableReport[] = []
  for (const key of copyOrder()) {
    const name = getTableName(sqliteTable(key))
    const [there, here] = [await columnsOn(from, name), await columnsOn(to, name)]
    if (!there || !here) continue
    const properties = Object.entries(columnsOf(sqliteTable(key)))
      .filter(([, column]) => there.has(column.name) && here.has(column.name))
      .map(([property]) => property)
    const expected = new Checksum()
    for await (const rows of pages(from, key, properties, batch)) {
      for (const row of rows) expected.add(row)
      await insertRows(to, key, properties, rows)
    }
    await continueIdentityCounters(to, key)
    const actual = new Checksum()
    for await (const rows of pages(to, key, properties, batch * 4)) for (const row of rows) actual.add(row)
    if (actual.rows !== expected.rows) {
      throw new Error(`${name}: ${expected.rows} rows in ${engineName(from)}, ${actual.rows} in ${engineName(to)}`)
    }
    if (actual.toString() !== expected.toString()) {
      throw new Error(`${name}: checksums differ (${engineName(from)} ${expected}, ${engineName(to)} ${actual})`)
    }
    const report = { table: name, rows: expected.rows, checksum: expected.toString() }
    reports.push(report)
    options.log?.(`  ${report.table.padEnd(14)} ${String(report.rows).padStart(9)} rows  checksum ${report.checksum}  ok`)
  }
  return reports
}

async function connect(url: string): Promise<pg.Client> {
  setNumberParsers()
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
  } catch (error) {
    throw new CopyRefused(`cannot connect to ${maskUrlPassword(url)}: ${(error as Error).message}`)
  }
  return client
}

/** Refuses a target holding any table (public schema) or drizzle's migration journal. */
async function refuseNonEmptyTarget(client: pg.Client): Promise<void> {
  const existing = await client.query<{ name: string }>(
    `select table_schema || '.' || table_name as name from information_schema.tables
      where table_schema = 'public' or (table_schema = 'drizzle' and table_name = '__drizzle_migrations') order by 1`,
  )
  if (existing.rows.length > 0) {
    const names = existing.rows.map((r) => r.name)
    throw new CopyRefused(
      `the target database is not empty (${names.length} table${names.length === 1 ? '' : 's'}: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}); migrate copies into an empty database only`,
    )
  }
}

/** Other sessions on the database (a running Gatehouse holds at least its LISTEN connection). */
async function otherSessions(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    'select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  )
  return rows[0]?.n ?? 0
}

/**
 * Inside the open transaction: drops what Gatehouse's migrations created (every table of the public
 * schema, its functions that no extension owns, drizzle's journal and release tables), so the
 * schema can be applied afresh. Extensions (pg_trgm) stay.
 */
async function dropGatehouseObjects(client: pg.Client): Promise<void> {
  const tables = await client.query<{ name: string }>(
    "select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
  )
  for (const { name } of tables.rows) await client.query(`drop table if exists public."${name.replaceAll('"', '""')}" cascade`)
  const functions = await client.query<{ signature: string }>(
    `select p.oid::regprocedure::text as signature from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')`,
  )
  for (const { signature } of functions.rows) await client.query(`drop function if exists ${signature} cascade`)
  await client.query('drop schema if exists drizzle cascade')
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

export interface IntoPostgresOptions {
  /** Replace what the database holds (a restore) instead of refusing a non-empty one (migrate). */
  replace?: boolean
  /** A restore's stored configuration: written to the shared configuration table in the same transaction. */
  sharedConfig?: Record<string, unknown>
  batch?: number
  migrationsFolder?: string
  log?: (line: string) => void
}

/**
 * Copies a SQLite database file (at this build's schema) into PostgreSQL in one transaction: the
 * schema (pg migrations, run inside it), every table, the verification; any failure rolls it all
 * back. Without `replace` a target holding any table is refused; with it, one other sessions use
 * (a running server) is refused, and the rest is dropped and rebuilt inside the transaction.
 */
export async function copySqliteIntoPostgres(file: string, url: string, options: IntoPostgresOptions = {}): Promise<TableReport[]> {
  const source = openDatabase(file)
  try {
    const client = await connect(url)
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()])
      if (!options.replace) await refuseNonEmptyTarget(client)
      else {
        const others = await otherSessions(client)
        if (others > 0) {
          throw new CopyRefused(
            `${others} other session${others === 1 ? ' is' : 's are'} connected to ${maskUrlPassword(url)} (a running Gatehouse?): stop every instance before restoring into it`,
          )
        }
      }
      const target = drizzle({ client, schema: pgSchema })
      source.sqlite.exec('BEGIN')
      await client.query('BEGIN')
      try {
        if (options.replace) await dropGatehouseObjects(client)
        await applySchema(client, options.migrationsFolder ?? pgMigrationsFolder)
        const reports = await copyTables({ engine: 'sqlite', database: source }, { engine: 'postgres', client, db: target }, options)
        if (options.sharedConfig) {
          await client.query(`insert into "gatehouseConfig" ("id", "config", "updatedAt") values (1, $1::jsonb, now())`, [
            JSON.stringify(options.sharedConfig),
          ])
        }
        await client.query('COMMIT')
        return reports
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        if (source.sqlite.inTransaction) source.sqlite.exec('ROLLBACK')
      }
    } finally {
      await client.end().catch(() => {})
    }
  } finally {
    source.close()
  }
}

/** Where a PostgreSQL database's schema stands: migrations applied, the newest one's time, and this build's count. */
export interface PostgresSchemaState {
  applied: number
  /** `when` of the newest applied migration (drizzle's journal `created_at`), 0 when none. */
  newest: number
  /** This build's pg migrations not applied (0 for a database a newer release migrated). */
  pending: number
}

async function schemaState(client: pg.Client | pg.PoolClient, pgMigrations: string): Promise<PostgresSchemaState> {
  const journal = await client.query<{ present: boolean }>("select to_regclass('drizzle.__drizzle_migrations') is not null as present")
  if (!journal.rows[0]?.present) return { applied: 0, newest: 0, pending: 0 }
  const { rows } = await client.query<{ n: number; newest: string | null }>(
    'select count(*)::int as n, max(created_at)::text as newest from drizzle.__drizzle_migrations',
  )
  const applied = rows[0]?.n ?? 0
  const newest = Number(rows[0]?.newest ?? 0)
  return { applied, newest, pending: applied === 0 ? 0 : journalOf(pgMigrations).filter((e) => e.when > newest).length }
}

/** The schema state of the database at `url` (the pre-upgrade backup asks before `serve` migrates). */
export async function postgresSchemaState(url: string, pgMigrations = pgMigrationsFolder): Promise<PostgresSchemaState> {
  const client = await connect(url)
  try {
    return await schemaState(client, pgMigrations)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * The SQLite migrations matching a PostgreSQL database at an earlier schema, copied with their
 * journal into `folder`: those generated up to its newest applied pg migration (a release's
 * migrations, both engines', are all generated before the next release's), less any last ones that
 * add a table or column of the mirror the database lacks (within one release's changes the
 * engines' migrations may be generated in another order).
 */
async function earlierSqliteMigrations(
  client: pg.Client | pg.PoolClient,
  sqliteMigrations: string,
  newest: number,
  folder: string,
): Promise<string> {
  const journal = JSON.parse(readFileSync(join(sqliteMigrations, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string; when: number }>
  }
  const { rows } = await client.query<{ t: string; c: string }>(
    "select table_name as t, column_name as c from information_schema.columns where table_schema = 'public'",
  )
  const inPostgres = new Set(rows.map((r) => `${r.t}.${r.c}`))
  const mirrored = new Set(copyOrder().map((key) => getTableName(sqliteTable(key))))
  let entries = journal.entries.filter((e) => e.when <= newest)
  for (;;) {
    rmSync(folder, { recursive: true, force: true })
    mkdirSync(join(folder, 'meta'), { recursive: true })
    writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }))
    for (const entry of entries) copyFileSync(join(sqliteMigrations, `${entry.tag}.sql`), join(folder, `${entry.tag}.sql`))
    if (entries.length <= 1) return folder
    const probe = openDatabase(':memory:', { migrations: folder })
    try {
      const lacking = [...mirrored].some((table) =>
        (probe.sqlite.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).some(
          (c) => !inPostgres.has(`${table}.${c.name}`),
        ),
      )
      if (!lacking) return folder
    } finally {
      probe.close()
    }
    entries = entries.slice(0, -1)
  }
}

/**
 * The logical export of a PostgreSQL database into a new SQLite file at this build's schema
 * (`sqliteMigrations`), read in one REPEATABLE READ transaction: the database as of its start,
 * whatever the servers write meanwhile. The database must be at this build's schema version (its
 * pg migrations all applied, none unknown): another version is refused, naming both; except with
 * `earlierSchema` (the pre-upgrade backup, before `serve` migrates), where a database this build
 * would migrate is exported into a SQLite file at the matching earlier schema, which the release
 * that ran on it restores.
 */
export async function exportPostgresToSqlite(
  source: string | pg.Pool,
  file: string,
  options: { sqliteMigrations: string; pgMigrations?: string; batch?: number; earlierSchema?: boolean },
): Promise<TableReport[]> {
  if (existsSync(file)) throw new Error(`${file} exists`)
  // A URL (the CLI), or a running server's pool (the panel, the schedule): one connection of it.
  const client = typeof source === 'string' ? await connect(source) : await source.connect()
  const where = typeof source === 'string' ? maskUrlPassword(source) : 'the database'
  const earlier = `${file}.migrations`
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const state = await schemaState(client, options.pgMigrations ?? pgMigrationsFolder)
    const known = journalOf(options.pgMigrations ?? pgMigrationsFolder).length
    if (state.applied === 0) throw new CopyRefused(`${where} holds no Gatehouse database (no migration applied)`)
    const older = state.pending > 0
    if (state.applied !== known && !(older && options.earlierSchema)) {
      throw new CopyRefused(
        `${where} is at schema version ${state.applied}, this Gatehouse's is ${known}: back it up with the Gatehouse release that runs on it${older ? ' (or start this one once: it migrates, after its own pre-upgrade backup)' : ''}`,
      )
    }
    const migrations = older
      ? await earlierSqliteMigrations(client, options.sqliteMigrations, state.newest, earlier)
      : options.sqliteMigrations
    const target = openDatabase(file, { migrations })
    try {
      target.sqlite.exec('BEGIN')
      try {
        // Rows referring to rows of their own table may come in any order: checked at COMMIT.
        target.sqlite.pragma('defer_foreign_keys = ON')
        const reports = await copyTables(
          { engine: 'postgres', client, db: drizzle({ client, schema: pgSchema }) },
          { engine: 'sqlite', database: target },
          options,
        )
        target.sqlite.exec('COMMIT')
        return reports
      } finally {
        if (target.sqlite.inTransaction) target.sqlite.exec('ROLLBACK')
      }
    } finally {
      target.close()
    }
  } finally {
    rmSync(earlier, { recursive: true, force: true })
    await client.query('ROLLBACK').catch(() => {})
    if (typeof source === 'string') await client.end().catch(() => {})
    else (client as pg.PoolClient).release()
  }
}
