import type Database from 'better-sqlite3'

/** All of the readiness check's SQL. */

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
