import type Database from 'better-sqlite3'
import { sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'

/**
 * All of the readiness check's SQL, per engine: the readiness route calls only `databaseWritable`
 * and `migrationCount`. SQLite: a write probe under the file's write lock and drizzle's journal
 * in the file. PostgreSQL: a transaction that takes a transaction id (a read-only standby, a
 * full disk's refusals or a lost connection fail it) within a statement timeout, and drizzle's
 * journal in the `drizzle` schema.
 */

type Executor = { execute(query: ReturnType<typeof sql>): Promise<{ rows: Record<string, unknown>[] }> }

/** Whether the database takes a write within `timeoutMs` (see probeWrite). */
export async function databaseWritable(ctx: AuthContext, timeoutMs: number): Promise<boolean> {
  try {
    if (ctx.sqlite) probeWrite(ctx.sqlite, timeoutMs)
    else
      await ctx.storage.transaction(async () => {
        const db = ctx.db as unknown as Executor
        await db.execute(sql.raw(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`))
        // pg_current_xact_id() assigns a transaction id: refused on a read-only server or standby.
        await db.execute(sql`select pg_current_xact_id()`)
      })
    return true
  } catch {
    return false
  }
}

/** Migrations recorded as applied. */
export async function migrationCount(ctx: AuthContext): Promise<number> {
  if (ctx.sqlite) return appliedMigrationCount(ctx.sqlite)
  const db = ctx.db as unknown as Executor
  const { rows } = await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)
  return Number(rows[0]?.n ?? 0)
}

/**
 * Whether the database takes a write now: a real, idempotent write (the header's user_version set
 * to its own value) in an immediate transaction, waiting at most `timeoutMs` for the write lock.
 * Throws the driver's error (SQLITE_BUSY, SQLITE_READONLY, SQLITE_FULL, ...) when it cannot.
 */
export function probeWrite(sqlite: Database.Database, timeoutMs: number): void {
  const previous = sqlite.pragma('busy_timeout', { simple: true }) as number
  sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`)
  try {
    sqlite
      .transaction(() => {
        const version = sqlite.pragma('user_version', { simple: true }) as number
        sqlite.pragma(`user_version = ${version}`)
      })
      .immediate()
  } finally {
    sqlite.pragma(`busy_timeout = ${previous}`)
  }
}

/** Migrations recorded as applied in the database (drizzle's journal table). */
export function appliedMigrationCount(sqlite: Database.Database): number {
  const exists = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  return exists ? (sqlite.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number) : 0
}
