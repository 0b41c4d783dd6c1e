import type Database from 'better-sqlite3'
import type { AuthContext } from '../../core/context.js'

/**
 * All of the readiness check's SQL. SQLite-specific by nature (a write probe under the file's
 * write lock, drizzle's migration journal read from the file): the readiness route calls only
 * `databaseWritable` and `migrationCount`, which a PostgreSQL storage implements later with its
 * own probe (e.g. `SELECT 1` on a writable connection, `drizzle.__drizzle_migrations`).
 */

/** Whether the database takes a write within `timeoutMs` (see probeWrite). */
export async function databaseWritable(ctx: AuthContext, timeoutMs: number): Promise<boolean> {
  try {
    probeWrite(ctx.sqlite, timeoutMs)
    return true
  } catch {
    return false
  }
}

/** Migrations recorded as applied. */
export async function migrationCount(ctx: AuthContext): Promise<number> {
  return appliedMigrationCount(ctx.sqlite)
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
