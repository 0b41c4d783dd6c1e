/**
 * Which errors of the drivers are known outages of the storage (issue 31 §6), on the floor of the
 * drivers themselves, so the storage classes can name one without asking core; core/outage.ts
 * answers and watches them.
 */
export type OutageCode = 'DATABASE_UNAVAILABLE' | 'STORAGE_FULL' | 'DATABASE_NOT_WRITABLE'

/**
 * Storage that refuses writes (issue 50 §9), the one place they are recognised: SQLite's
 * SQLITE_READONLY* (a read-only file or mount) and SQLITE_IOERR* (the disk refused a write), a
 * read-only file system (EROFS), PostgreSQL's read_only_sql_transaction (25006: a standby, or
 * default_transaction_read_only).
 */
export const NOT_WRITABLE = (code: string): boolean =>
  code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR') || code === 'EROFS' || code === '25006'

// Node's socket errors and pg's own words for a connection that is gone or cannot be made.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const PG_GONE =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended)/

/** The known outage an error (or one of its causes: drizzle wraps driver errors) stands for, or null. */
export function classifyOutage(error: unknown): OutageCode | null {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    if (code === 'SQLITE_FULL') return 'STORAGE_FULL'
    if (typeof code === 'string') {
      if (NOT_WRITABLE(code)) return 'DATABASE_NOT_WRITABLE'
      if (NETWORK_CODES.has(code)) return 'DATABASE_UNAVAILABLE'
      // SQLSTATE class 08 (connection exception); 57P01-03: shutting down, crashed, starting up.
      if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code)) return 'DATABASE_UNAVAILABLE'
    }
    if (PG_GONE.test(current.message)) return 'DATABASE_UNAVAILABLE'
    if (current instanceof AggregateError && current.errors.some((e) => classifyOutage(e) !== null)) {
      return classifyOutage(current.errors.find((e) => classifyOutage(e) !== null))
    }
    current = (current as { cause?: unknown }).cause
  }
  return null
}
