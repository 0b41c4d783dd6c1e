import { classifyOutage } from './outage-codes.js'
import { AsyncLocalStorage } from 'node:async_hooks'
import { createRequire } from 'node:module'
import { closeSync, fstatSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs'
import type Database from 'better-sqlite3'
import type { DB } from './handle.js'

/**
 * The storage port every store module goes through.
 *
 * Rules (so that a network database can sit behind the same store code):
 * - Queries are awaited (`await db.select()...`, `await db.insert(...)`), never run with the
 *   synchronous `.get()/.run()/.all()` of better-sqlite3. For one row use `firstRow(query)`.
 * - `db` is read at each use (`ctx.db`): inside `transaction` it is the transaction's handle, so a
 *   store function called from a transaction joins it without being handed a `tx`.
 * - A transaction body awaits only queries: no hashing, mail or network inside it (on SQLite the
 *   body holds the single write lock until it ends).
 */
export interface Storage {
  readonly dialect: 'sqlite' | 'postgres'
  /** The handle for the current async context: the open transaction's, or the pool's. */
  readonly db: DB
  /**
   * Runs `body` in one transaction: committed when it resolves, rolled back when it throws. A call
   * from inside a transaction joins the outer one (one commit at the outermost level, at the outer
   * one's isolation).
   */
  transaction<T>(body: () => Promise<T>, options?: TransactionOptions): Promise<T>
  /**
   * Runs a select built with drizzle (`ctx.db.select(...)...`, not awaited) and answers its rows as
   * arrays of the driver's values, in the selection's order, without drizzle's per-row mapping (no
   * object per row, no Date): for a read of a hundred thousand rows, where the mapping is most of
   * the cost. The values are the driver's: SQLite gives integers for timestamps and 0/1 for
   * booleans, PostgreSQL its own types' (the caller selects what it can read on both, e.g.
   * epoch milliseconds). Inside `transaction` it runs in the transaction, as `db` does.
   */
  rows(query: RawQuery): Promise<unknown[][]>
  /**
   * A signal telling an in-memory cache that the database may have changed since it last asked
   * (each signal keeps its own "last seen"). `ownWrites: true` also counts this process's writes
   * (the session cache, which must never serve a row this process just changed); without it only
   * other processes' commits count (caches that invalidate themselves on their own writes).
   * SQLite: `total_changes()` and the WAL-index header of the -shm file (Linux) or
   * `PRAGMA data_version`, read synchronously (no table is touched).
   * PostgreSQL: a version moved by LISTEN/NOTIFY, with `sync()` for strictness.
   * `scope: 'directory'`: only writes to what the LDAP directory shows count (a person's shown
   * columns, organizations, members, teams), every process's own included: SQLite reads the
   * `changeScope` counter its triggers move (migration 0019), only when the database's own signal
   * moved; PostgreSQL counts the notifications with that payload (pg migration 0019).
   */
  changeSignal(options?: { ownWrites?: boolean; scope?: ChangeScope }): ChangeSignal
  /**
   * Runs a scheduled job's body on one instance at a time: on PostgreSQL under a transaction-level
   * advisory lock named after the job (an instance that finds it taken skips this run and answers
   * false); on SQLite, one file on one machine, simply runs it. The body awaits only queries.
   */
  exclusive(job: string, body: () => Promise<void>): Promise<boolean>
  /**
   * Whether the database takes a write within `timeoutMs` (the readiness check). SQLite: an
   * idempotent write (user_version set to itself) under the file's write lock; PostgreSQL: a
   * transaction that takes a transaction id under a statement timeout (refused by a read-only
   * server or standby, a lost connection or a full disk).
   */
  acceptsWrites(timeoutMs: number): Promise<boolean>
  /** Migrations recorded as applied in drizzle's journal table (0 when it does not exist). */
  appliedMigrations(): Promise<number>
  /** PostgreSQL only: this instance's pool, for the metrics (connections, idle ones, requests waiting). */
  poolStats?: () => { total: number; idle: number; waiting: number }
}

export interface TransactionOptions {
  /**
   * PostgreSQL: READ COMMITTED instead of the storage's isolation (serializable by default), for a
   * body whose table locks already keep every writer out of what it reads (counting a list-users
   * term under LOCK TABLE ... IN SHARE MODE): serializable would add nothing there but its
   * predicate locks, about a third more time on a scan of a million index entries. SQLite ignores
   * it (its transactions hold the single write lock).
   */
  isolation?: 'read committed'
}

/** A query `Storage.rows` can run: what drizzle's query builders answer to `toSQL()`. */
export interface RawQuery {
  toSQL(): { sql: string; params: unknown[] }
}

/** The scopes a change signal can be narrowed to (each moved by its own triggers). */
export type ChangeScope = 'directory'

/** Whether the database may have changed since the previous call; the first call answers true. */
export interface ChangeSignal {
  changed(): boolean
  /**
   * PostgreSQL only: resolves once every change committed (by any instance) before the call is
   * reflected in `changed()`. A cache that must have no stale window awaits it before trusting an
   * entry. Absent on SQLite, whose counters are read synchronously and are always current.
   */
  sync?: () => Promise<void>
}

/**
 * The SQLite change signal: `total_changes()` counts every row this connection inserted, updated
 * or deleted; another connection's commit (the CLI on the same data directory, SQL run on the
 * file) is seen in the WAL-index header where the platform allows (below), else through
 * `PRAGMA data_version`. None of them touches a table, so they are cheap enough for every request.
 */
export function sqliteChangeSignal(
  sqlite: Database.Database,
  /** `headerRead: 'pread'` skips the addon even where it is built (tests cover both ways). */
  options: { ownWrites?: boolean; scope?: ChangeScope; headerRead?: WalIndexRead } = {},
): ChangeSignal {
  if (options.scope) {
    // The database's own signal first (a few microseconds, no table touched); the scope's counter
    // (one row by its key) only when that moved. Without the counter (a database migrated before
    // 0019 cannot be, but a copy made by hand could): every change counts.
    const any = sqliteChangeSignal(sqlite, { ownWrites: true, headerRead: options.headerRead })
    let counter: Database.Statement<[string], number> | null = null
    try {
      counter = sqlite.prepare<[string], number>('select version from changeScope where scope = ?').pluck()
    } catch {
      counter = null
    }
    const scope = options.scope
    let seen: number | undefined = -1
    return {
      changed() {
        if (!any.changed()) return false
        if (!counter) return true
        const version = counter.get(scope)
        if (version !== undefined && version === seen) return false
        seen = version
        return true
      },
    }
  }
  if (options.ownWrites) {
    // Two statements: the table-valued form (`select total_changes(), data_version from
    // pragma_data_version`) costs more than both together (a virtual table per call: about 4 µs
    // against 2.5 + 0.1 µs), and this runs on every request.
    const totalChanges = sqlite.prepare<[], number>('select total_changes()').pluck()
    const dataVersion = sqlite.prepare<[], number>('pragma data_version').pluck()
    let header = walIndexHeader(sqlite, options.headerRead)
    if (header) trackReader(sqlite, header.close)
    let headerSeen = Buffer.alloc(WAL_INDEX_HEADERS)
    let headerRead = Buffer.alloc(WAL_INDEX_HEADERS)
    let changesSeen = -1
    let versionSeen = -1
    return {
      changed() {
        let othersSame: boolean
        if (header?.read(headerRead)) {
          othersSame = headerRead.equals(headerSeen)
          ;[headerSeen, headerRead] = [headerRead, headerSeen]
        } else {
          if (header) header = null // unreadable: the pragma from now on
          const version = dataVersion.get() as number
          othersSame = version === versionSeen
          versionSeen = version
        }
        // Every commit rewrites the WAL-index header, this connection's own too, so outside a
        // transaction a header read as before means no write of ours either. Inside one (own
        // writes not committed yet) and without the header, `total_changes()` counts them; skipping
        // it otherwise saves a statement (about 0.2 µs) on every request that looks up a session.
        const changes = header && !sqlite.inTransaction ? changesSeen : (totalChanges.get() as number)
        if (changes === changesSeen && othersSame) return false
        changesSeen = changes
        return true
      },
    }
  }
  const version = sqlite.prepare('pragma data_version').pluck()
  let seen = -1
  return {
    changed() {
      const v = Number(version.get())
      if (v === seen) return false
      seen = v
      return true
    },
  }
}

/** The two copies of the WAL-index header at the start of the -shm file (48 bytes each). */
const WAL_INDEX_HEADERS = 96

/** What closeChangeSignals releases per connection: descriptors read with pread, or mappings. */
const shmReaders = new WeakMap<Database.Database, Array<() => void>>()

/**
 * The optional addon (native/wal-index, built by node-gyp at install, Linux only) that maps the
 * -shm file: a header read is then a 96-byte memory copy instead of a `pread` system call per
 * request, which under load costs several microseconds and disturbs the caches of what follows.
 * Absent (no compiler at install, another platform, a packaging that dropped it): `pread`.
 */
interface WalIndexAddon {
  map(fd: number, length: number): object
  copy(mapping: object, into: Buffer): void
  close(mapping: object): void
}
let walIndexAddon: WalIndexAddon | null | undefined
function loadWalIndexAddon(): WalIndexAddon | null {
  if (walIndexAddon !== undefined) return walIndexAddon
  try {
    walIndexAddon = createRequire(import.meta.url)('@gatehouse/wal-index') as WalIndexAddon
  } catch {
    walIndexAddon = null
  }
  return walIndexAddon
}

/**
 * How this machine reads the WAL-index header of a file database: 'mmap' (the addon is built),
 * 'pread', or null (not Linux: the pragma). Decided without opening any -shm file: a descriptor
 * opened and closed here would drop SQLite's POSIX locks on it (see walIndexHeader).
 */
export function walIndexReadMethod(): WalIndexRead | null {
  if (process.platform !== 'linux') return null
  return loadWalIndexAddon() ? 'mmap' : 'pread'
}

/**
 * Another connection's commits, seen without a read transaction. In WAL mode every commit ends by
 * rewriting the WAL-index header in the -shm file (copy 2, then copy 1), and its `iChange` counter
 * goes up by one at each commit; SQLite itself decides that another connection committed
 * (`PRAGMA data_version` moves) by comparing that header with the copy it saw last. Reading the
 * 96 bytes through a shared mapping costs about 0.1 µs, with one `pread` about 1 µs in a loop and
 * several under load; the pragma opens and closes a read transaction (two `fcntl` locks on the
 * -shm file), which measured 10 to 15 µs per request under load. Any difference from the bytes
 * seen last, torn reads included, counts as a change, so the worst case is one needless emptying
 * of a cache.
 *
 * Used only where it is known to hold: Linux, where `read`, our mapping and SQLite's shared mapping
 * of the file are the same page cache, and only for the very file SQLite has mapped in this
 * process (same path and inode in /proc/self/maps, so a symlink or a stale namesake never stands
 * in). Elsewhere, and if the file ever reads short or fails, null or false: the caller falls back
 * to the pragma.
 */
type WalIndexRead = 'mmap' | 'pread'

function walIndexHeader(
  sqlite: Database.Database,
  prefer: WalIndexRead = 'mmap',
): { method: WalIndexRead; read(into: Buffer): boolean; close(): void } | null {
  if (process.platform !== 'linux' || sqlite.memory) return null
  // Nothing is opened unless SQLite has the file mapped, and a descriptor of SQLite's own file is
  // never closed early: closing any descriptor of a file drops every POSIX lock this process holds
  // on it, SQLite's locks on the -shm file included. Only a namesake (another inode) is closed.
  let handle: number
  try {
    const shmPath = `${realpathSync(sqlite.name)}-shm`
    const inodes = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((line) => line.endsWith(` ${shmPath}`))
      .map((line) => line.trim().split(/\s+/)[4])
    if (inodes.length === 0) return null
    handle = openSync(shmPath, 'r')
    if (!inodes.includes(String(fstatSync(handle).ino))) {
      closeSync(handle)
      return null
    }
  } catch {
    return null
  }
  const addon = prefer === 'mmap' ? loadWalIndexAddon() : null
  if (addon) {
    try {
      const mapping = addon.map(handle, WAL_INDEX_HEADERS)
      // The descriptor stays open as long as the mapping: closing any descriptor of a file drops
      // every POSIX lock this process holds on it, SQLite's own locks on the -shm file included
      // (another process would then take itself for the first connection and reset the file).
      return {
        method: 'mmap',
        read(into) {
          addon.copy(mapping, into)
          return true
        },
        close: () => {
          addon.close(mapping)
          closeSync(handle)
        },
      }
    } catch {
      // Not mappable (a file shorter than the header): pread below, which then reads short.
    }
  }
  return {
    method: 'pread',
    read(into) {
      try {
        return readSync(handle, into, 0, WAL_INDEX_HEADERS, 0) === WAL_INDEX_HEADERS
      } catch {
        return false
      }
    },
    close: () => closeSync(handle),
  }
}

function trackReader(sqlite: Database.Database, close: () => void): void {
  const open = shmReaders.get(sqlite) ?? []
  open.push(close)
  shmReaders.set(sqlite, open)
}

/** Closes the -shm readers of the change signals of a connection (when the database is closed). */
export function closeChangeSignals(sqlite: Database.Database): void {
  for (const close of shmReaders.get(sqlite) ?? []) close()
  shmReaders.delete(sqlite)
}

/** The first row of a query, or undefined: the dialect-neutral form of better-sqlite3's `.get()`. */
export async function firstRow<T>(query: PromiseLike<T[]>): Promise<T | undefined> {
  return (await query)[0]
}

/**
 * SQLite through better-sqlite3: one connection, so transactions are serialised by a promise chain
 * and opened with BEGIN IMMEDIATE (the write lock is taken at the start, never upgraded mid-way,
 * which would fail with SQLITE_BUSY under concurrent writers from other processes).
 * drizzle's own better-sqlite3 transaction cannot take an async body, hence the explicit statements.
 */
export function sqliteStorage(db: DB, sqlite: Database.Database): Storage {
  const inTransaction = new AsyncLocalStorage<true>()
  let tail: Promise<unknown> = Promise.resolve()
  // Outermost transactions queued or running. On Node 20 an enabled AsyncLocalStorage keeps a
  // promise hook on every promise the process creates (the get-session path included); with none
  // pending, no async context can be inside a transaction, so the storage is disabled (getStore()
  // answers undefined) until the next transaction's run() enables it again.
  let pending = 0
  const rawStatements = new Map<string, Database.Statement>()
  const settled = () => {
    pending -= 1
    if (pending === 0) inTransaction.disable()
  }
  return {
    dialect: 'sqlite',
    db,
    async transaction<T>(body: () => Promise<T>): Promise<T> {
      if (inTransaction.getStore()) return body()
      pending += 1
      const run = async (): Promise<T> => {
        sqlite.exec('BEGIN IMMEDIATE')
        try {
          const result = await inTransaction.run(true, body)
          sqlite.exec('COMMIT')
          return result
        } catch (error) {
          if (sqlite.inTransaction) sqlite.exec('ROLLBACK')
          throw error
        }
      }
      const result = tail.then(run, run)
      tail = result.then(settled, settled)
      return result
    },
    async rows(query) {
      const { sql, params } = query.toSQL()
      let statement = rawStatements.get(sql)
      if (!statement) {
        statement = sqlite.prepare(sql).raw(true)
        // A handful of distinct statements (the LDAP index's chunks): kept while the connection lives.
        if (rawStatements.size < 64) rawStatements.set(sql, statement)
      }
      return statement.all(...params) as unknown[][]
    },
    changeSignal: (options) => sqliteChangeSignal(sqlite, options),
    async exclusive(_job, body) {
      await body()
      return true
    },
    async acceptsWrites(timeoutMs) {
      const previous = sqlite.pragma('busy_timeout', { simple: true }) as number
      sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`)
      try {
        sqlite
          .transaction(() => {
            const version = sqlite.pragma('user_version', { simple: true }) as number
            sqlite.pragma(`user_version = ${version}`)
          })
          .immediate()
        return true
      } catch (error) {
        // SQLITE_FULL is a known outage, thrown for the caller to name; SQLITE_BUSY past the timeout, SQLITE_READONLY, ...: false.
        if (classifyOutage(error)) throw error
        return false
      } finally {
        sqlite.pragma(`busy_timeout = ${previous}`)
      }
    },
    async appliedMigrations() {
      const exists = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
      return exists ? (sqlite.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number) : 0
    },
  }
}

/**
 * Whether a write failed on a unique constraint, on either engine, optionally on one column
 * (`'user.email'`): the one place a clash is recognised. SQLite reports
 * `SQLITE_CONSTRAINT_UNIQUE` with "UNIQUE constraint failed: user.email"; PostgreSQL reports
 * SQLSTATE 23505 with the index name (drizzle-kit names them `<table>_<column>_unique`) and a
 * detail "Key (email)=(...) already exists."
 */
export function isUniqueViolation(error: unknown, column?: `${string}.${string}`): boolean {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
  if (!(cause instanceof Error)) return false
  const { code, constraint, detail, table } = cause as Error & { code?: unknown; constraint?: unknown; detail?: unknown; table?: unknown }
  if (code === '23505') {
    if (!column) return true
    const [tableName, columnName] = column.split('.')
    return (
      (typeof constraint === 'string' && constraint.includes(columnName as string) && (table === undefined || table === tableName)) ||
      (typeof detail === 'string' && detail.includes(`(${columnName})`))
    )
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT_UNIQUE')) {
    return !column || cause.message.includes(column)
  }
  return false
}
