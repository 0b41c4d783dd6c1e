import { classifyOutage } from '../outage-codes.js'
import { AsyncLocalStorage } from 'node:async_hooks'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import { type DB, migrationsFolder } from '../index.js'
import type { ChangeSignal as CacheChangeSignal, Storage, TransactionOptions } from '../storage.js'
import type { ChangeSignal } from './change-signal.js'
import { pgSchema } from './schema.js'
import { journalOf, NewerDatabaseError, newerDatabaseMessage, RELEASE_TABLE } from '../release.js'
import { packageVersion } from '../../version.js'
import { idleOff } from '../../idle-scope.js'

export type PgDB = NodePgDatabase<typeof pgSchema>

/** Beside the SQLite migrations (whose path also holds when bundled into dist/server/*.mjs). */
export const pgMigrationsFolder = join(migrationsFolder, '..', 'pg', 'migrations')

/** The key of the advisory lock migrations run under ("gatehouse" as a 64-bit number). */
export const MIGRATION_LOCK_KEY = 0x6761746568_6f7573n

/**
 * int8 (count(*), sum, bigint columns) and numeric come back from node-postgres as strings; every
 * such value Gatehouse reads is far below 2^53, so they are parsed to numbers (a value that would
 * lose precision stays a string rather than silently change). drizzle's node-postgres driver reads
 * pg's global parsers for every type but dates, hence the global registration (once per process).
 */
let parsersSet = false
export function setNumberParsers(): void {
  if (parsersSet) return
  parsersSet = true
  const toNumber = (value: string): number | string => {
    const n = Number(value)
    return Number.isSafeInteger(n) || (!Number.isInteger(n) && Number.isFinite(n)) ? n : value
  }
  pg.types.setTypeParser(pg.types.builtins.INT8, toNumber)
  pg.types.setTypeParser(pg.types.builtins.NUMERIC, toNumber)
}

/** U+0000, and a surrogate without its pair: characters SQLite stores and PostgreSQL refuses. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is the character looked for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
/** The same characters as JSON escapes (how a jsonb parameter carries them). */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f][0-9a-f]{2})/i

function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\ufffd')
  if (Array.isArray(value)) return value.map(storableJson)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(UNSTORABLE, '\ufffd'), storableJson(v)]))
  }
  return value
}

/**
 * A query parameter as PostgreSQL can take it. Text cannot hold U+0000 (SQLSTATE 22021) and jsonb
 * refuses the escapes \u0000 and a lone surrogate (22P05, 22P02), where SQLite stores all of them:
 * a request carrying one (a user id, a name, an audit detail echoing the input) failed with a 500
 * on PostgreSQL only. They are sent as U+FFFD instead, which node-postgres already does for a lone
 * surrogate in text: such a value is stored with the replacement character, and a lookup by it
 * finds nothing, as on SQLite.
 */
export function storableParam(value: unknown): unknown {
  if (typeof value !== 'string') return value
  const text = value.includes('\u0000') ? value.replaceAll('\u0000', '\ufffd') : value
  if ((text.startsWith('{') || text.startsWith('[')) && UNSTORABLE_ESCAPE.test(text)) {
    try {
      return JSON.stringify(storableJson(JSON.parse(text)))
    } catch {
      // Not JSON after all: plain text, sent as it is.
    }
  }
  return text
}

/** Makes every query of a pool's client send its parameters through `storableParam`. */
function storableParams(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [config, values] = args
    if (Array.isArray(values)) args[1] = values.map(storableParam)
    else if (config && typeof config === 'object' && !('submit' in config) && Array.isArray((config as pg.QueryConfig).values)) {
      args[0] = { ...config, values: (config as pg.QueryConfig).values?.map(storableParam) }
    }
    return query(...args)
  }
}

export interface PostgresOptions {
  /** Connections in the pool (config `database.poolSize`); 10 by default. */
  poolSize?: number
  /** Isolation of `storage.transaction`; serializable by default (see postgresStorage). */
  isolation?: 'serializable' | 'repeatable read' | 'read committed'
  migrationsFolder?: string
  /** Skip migrations (the target check of `gatehouse migrate --to` opens before migrating). */
  migrate?: boolean
}

export interface PostgresDatabase {
  /** The pool's handle; `storage.db` is the one to use (the transaction's inside one). */
  db: PgDB
  pool: pg.Pool
  storage: Storage
  migrationsFolder: string
  close(): Promise<void>
}

/**
 * Applies pending migrations while holding a session-level advisory lock on one connection, so
 * instances starting together run them once: the first takes the lock and migrates, the others
 * wait for it, then find nothing left to apply.
 */
export async function migratePostgres(pool: pg.Pool, migrationsFolder = pgMigrationsFolder): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()])
    try {
      // A database a newer Gatehouse migrated is refused before anything is written (issue 50 §7).
      await refuseNewerPostgres(client, migrationsFolder)
      await migrate(drizzle({ client, schema: pgSchema }), { migrationsFolder })
      await client.query(
        `CREATE TABLE IF NOT EXISTS drizzle.${RELEASE_TABLE} (id integer PRIMARY KEY CHECK (id = 1), version text NOT NULL)`,
      )
      await client.query(
        `INSERT INTO drizzle.${RELEASE_TABLE} (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = excluded.version WHERE drizzle.${RELEASE_TABLE}.version <> excluded.version`,
        [packageVersion()],
      )
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()])
    }
  } finally {
    client.release()
  }
}

/** The SQLite check's twin (server/db/release.ts) on drizzle's journal in the `drizzle` schema. */
async function refuseNewerPostgres(client: pg.PoolClient, migrationsFolder: string): Promise<void> {
  const exists = await client.query(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = 'drizzle' AND table_name = '__drizzle_migrations'",
  )
  if (exists.rowCount === 0) return
  const known = journalOf(migrationsFolder)
  const newest = Math.max(0, ...known.map((e) => e.when))
  const { rows } = await client.query<{ newer: string; applied: string }>(
    'SELECT count(*) FILTER (WHERE created_at > $1) AS newer, count(*) AS applied FROM drizzle.__drizzle_migrations',
    [newest],
  )
  if (Number(rows[0]?.newer ?? 0) === 0) return
  const release = await client
    .query<{ version: string }>(`SELECT version FROM drizzle.${RELEASE_TABLE} WHERE id = 1`)
    .then((r) => r.rows[0]?.version ?? null)
    .catch(() => null)
  throw new NewerDatabaseError(
    newerDatabaseMessage({
      location: '(PostgreSQL)',
      applied: Number(rows[0]?.applied ?? 0),
      release,
      known: known.length,
      restore:
        "the pre-upgrade backup in a data directory's backups/ folder (gatehouse restore <file> --data-dir <dir> --database-url <url>)",
    }),
  )
}

/** Opens a pool on `url` and (unless told not to) applies pending migrations. */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresDatabase> {
  setNumberParsers()
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 })
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => {})
  pool.on('connect', storableParams)
  // Nor a checked-out one: pg-pool drops its own 'error' listener while a client is lent out, and a
  // connection lost between two statements of a transaction is then an unhandled 'error' event
  // (issue 31 §6). The statement that needs the client fails on its own, and is answered as an outage.
  pool.on('connect', (client) => client.on('error', () => {}))
  const folder = options.migrationsFolder ?? pgMigrationsFolder
  try {
    if (options.migrate !== false) await migratePostgres(pool, folder)
  } catch (error) {
    await pool.end()
    throw error
  }
  const db = drizzle({ client: pool, schema: pgSchema })
  return {
    db,
    pool,
    storage: postgresStorage(db, { isolation: options.isolation }),
    migrationsFolder: folder,
    close: () => pool.end(),
  }
}

/** SQLSTATEs after which a whole transaction may simply run again. */
const RETRYABLE = new Set(['40001', '40P01'])
/**
 * Each round of colliding transactions lets at least one commit: a burst of N writers of one row
 * (30 devices signing in to one account at once: the login throttle's row) needs up to N rounds,
 * and ten were measured too few for 30 on a loaded machine; fifty leaves room.
 */
const MAX_ATTEMPTS = 50
/** The pause before a retry grows up to this many milliseconds (jittered below it). */
const MAX_RETRY_PAUSE_MS = 256

function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as Error & { code?: unknown }).code
    if (typeof code === 'string') return code
  }
  return undefined
}

/**
 * PostgreSQL through node-postgres: `db` is the pool's handle, or inside `transaction` the
 * transaction's (an AsyncLocalStorage holds it, so store functions called from the body join it
 * without being handed a `tx`; a nested `transaction` call joins the outer one).
 *
 * Transactions are SERIALIZABLE by default and re-run on a serialization failure or deadlock
 * (40001/40P01), up to fifty times: the store code was written against SQLite, where BEGIN IMMEDIATE
 * serialises every writer, so its read-then-write bodies (the last free seat of an organization,
 * one user per email) rely on serializable behaviour. A body awaits only queries (storage rules),
 * so running it again is safe.
 */
export function postgresStorage(root: PgDB, options: { isolation?: PostgresOptions['isolation']; changes?: ChangeSignal } = {}): Storage {
  // The transaction marker, off while no transaction is in flight (idleOff): on Node 20 an enabled
  // AsyncLocalStorage keeps async_hooks' promise hooks on every promise the process creates, for
  // ever once one transaction ran (a bind's audit row is one), and each LDAP operation, get-session
  // or token request would pay them (as SQLite's storage does, db/storage.ts).
  const current = idleOff(new AsyncLocalStorage<PgDB>())
  const isolationLevel = options.isolation ?? 'serializable'
  return {
    dialect: 'postgres',
    get db() {
      // The store code is typed against the SQLite handle; at run time the pg handle answers the
      // same query-builder calls (select/insert/update/delete, returning, onConflict...).
      return (current.getStore() ?? root) as unknown as DB
    },
    async rows(query) {
      const { sql: text, params } = query.toSQL()
      // drizzle's node-postgres transaction keeps its client on its session; the pool's handle, its pool
      // (whose clients send parameters through storableParam: pool.on('connect') below).
      const tx = current.getStore() as unknown as { session?: { client?: pg.PoolClient } } | undefined
      const client: pg.Pool | pg.PoolClient = tx?.session?.client ?? (root as unknown as { $client: pg.Pool }).$client
      const result = await client.query<unknown[]>({ text, values: params, rowMode: 'array' })
      return result.rows
    },
    /**
     * The caches' "changed?" answered from the LISTEN/NOTIFY version; `sync()` first makes it
     * current (every commit made before the call, by any instance, is counted). Without a
     * listener every call answers true: the caches then never serve a stale entry, they just do
     * not cache.
     */
    changeSignal(signalOptions): CacheChangeSignal {
      const changes = options.changes
      if (!changes) return { changed: () => true }
      const scope = signalOptions?.scope
      let seen = -1
      return {
        changed() {
          const now = scope ? changes.scopeVersion(scope) : changes.version()
          if (now === seen) return false
          seen = now
          return true
        },
        sync: () => changes.sync(),
      }
    },
    async exclusive(job, body) {
      return await root.transaction(
        async (tx) => {
          const got = await tx.execute<{ got: boolean }>(sql`select pg_try_advisory_xact_lock(hashtext(${`gatehouse:${job}`})) as got`)
          if (!got.rows[0]?.got) return false
          await current.run(tx as unknown as PgDB, body)
          return true
        },
        // A cleanup deletes what has expired; it needs no serializable view and must not be re-run.
        { isolationLevel: 'read committed' },
      )
    },
    async acceptsWrites(timeoutMs) {
      try {
        await root.transaction(async (tx) => {
          await tx.execute(sql.raw(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`))
          // pg_current_xact_id() assigns a transaction id: refused on a read-only server or standby.
          await tx.execute(sql`select pg_current_xact_id()`)
        })
        return true
      } catch (error) {
        // A known outage (the server unreachable) is thrown for the caller to name; any other refusal is false.
        if (classifyOutage(error)) throw error
        return false
      }
    },
    async appliedMigrations() {
      const { rows } = await root.execute<{ n: number }>(
        sql`select case when to_regclass('drizzle.__drizzle_migrations') is null then 0 else (select count(*)::int from drizzle.__drizzle_migrations) end as n`,
      )
      return Number(rows[0]?.n ?? 0)
    },
    poolStats() {
      // drizzle's node-postgres handle keeps the pool it was made with.
      const pool = (root as unknown as { $client: pg.Pool }).$client
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
    },
    async transaction<T>(body: () => Promise<T>, transactionOptions?: TransactionOptions): Promise<T> {
      if (current.getStore()) return body()
      const level = transactionOptions?.isolation ?? isolationLevel
      for (let attempt = 1; ; attempt++) {
        try {
          return await root.transaction((tx) => current.run(tx as unknown as PgDB, body), { isolationLevel: level })
        } catch (error) {
          const state = sqlState(error)
          if (!state || !RETRYABLE.has(state) || attempt >= MAX_ATTEMPTS) throw error
          // A short, growing, jittered pause so the colliding transactions do not meet again.
          await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** attempt, MAX_RETRY_PAUSE_MS)))
        }
      }
    },
  }
}

/** Whether the database holds any table of the public schema (used to refuse a non-empty target). */
export async function publicTables(db: PgDB): Promise<string[]> {
  const rows = await db.execute<{ table_name: string }>(
    sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
  )
  return rows.rows.map((r) => r.table_name)
}
