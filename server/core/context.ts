import type Database from 'better-sqlite3'
import type { GatehouseConfig } from '../config/schema.js'
import type { DB } from '../db/index.js'
import type { Storage } from '../db/storage.js'
import { noEvents, type ServerEvents } from './events.js'
import type { Mailer } from '../mail/types.js'
import type { SharedCaches } from '../secondary-storage/shared-cache.js'

/** Time comes from here, never from Date.now() in the domain, so expiry is testable without sleeping. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** Who is asking: recorded on sessions and audit events. */
export interface RequestMeta {
  ipAddress: string | null
  userAgent: string | null
  /** The request's id (its X-Request-Id answer header), recorded on its audit events. */
  requestId?: string | null
  /**
   * Set when the request's session is an impersonation (core/impersonation.ts): `by` is the
   * session's impersonatedBy (an admin's user id, or the panel link's marker), `userId` the person.
   */
  impersonation?: { by: string; userId: string }
}

export interface AuthContext {
  /** The query handle of the current async context (a transaction's inside `storage.transaction`). */
  readonly db: DB
  /** The storage port: transactions and the dialect. Rules never touch a driver directly. */
  storage: Storage
  /**
   * SQLite only (null on PostgreSQL): the driver, for what is SQLite by nature (health's write
   * probe, backup's VACUUM INTO). Never used by rules.
   */
  sqlite: Database.Database | null
  /** The live configuration: read it at use, never cache it, so panel edits apply at once. */
  config(): GatehouseConfig
  clock: Clock
  secret: string
  /** Origin + base path, e.g. http://127.0.0.1:4280/api/auth */
  baseURL: string
  mailer: Mailer
  /**
   * Caches shared by every instance through the secondary storage (PostgreSQL with --redis-url
   * only; server/secondary-storage/shared-cache.ts). Absent otherwise: each instance's in-memory
   * caches and the database answer.
   */
  sharedCaches?: SharedCaches
  /**
   * What the server tells its observers (core/events.ts): the metrics feature replaces it at start
   * when `metrics.enabled`; `noEvents` otherwise.
   */
  events: ServerEvents
}

/**
 * An AuthContext on an open database: `db` always reads the storage port's current handle (the
 * transaction's inside `storage.transaction`). The one constructor for the server and the CLI tools.
 */
export function createAuthContext(
  database: { storage: Storage; sqlite: Database.Database | null },
  rest: Omit<AuthContext, 'db' | 'storage' | 'sqlite' | 'events'> & { events?: ServerEvents },
): AuthContext {
  return {
    events: noEvents,
    get db() {
      return this.storage.db
    },
    storage: database.storage,
    sqlite: database.sqlite,
    ...rest,
  }
}
