/**
 * The whole schema: the core tables (core-schema.ts) and the tables feature folders declare in their
 * own schema.ts, re-exported here for drizzle-kit (drizzle.config.ts) and the typed database.
 * Feature schemas import core tables from core-schema.ts, never from here (no import cycle).
 *
 * The dialect switch: store code imports its tables from THIS module only (tests/unit/
 * pg-schema.test.ts checks it). The exports are `let` bindings holding the SQLite tables; a process
 * that runs on PostgreSQL calls `bindTables(pgSchema)` once, at open, before any query, and every
 * importer then sees the pg-core mirror (server/db/pg/schema.ts) through ES modules' live
 * bindings: no lookup per query, no context to thread, nothing on get-session's hot path. The
 * TypeScript types stay the SQLite ones (the two mirrors have the same properties and JS types).
 * One dialect per process: tests that need both engines run each in its own process (or file).
 */
import { bindFeatureTables, featureTables } from './feature-tables.js'
import * as core from './core-schema.js'

/** The SQLite tables, by property name (drizzle's schema object for the better-sqlite3 handle). */
export const schema = {
  user: core.user,
  session: core.session,
  account: core.account,
  verification: core.verification,
  rateLimit: core.rateLimit,
  auditEvent: core.auditEvent,
  mailOutbox: core.mailOutbox,
  loginThrottle: core.loginThrottle,
  // The features' tables (their schema.ts), gathered by bin/gen-features.js.
  ...featureTables,
}

export type Tables = typeof schema

export let user = schema.user
export let session = schema.session
export let account = schema.account
export let verification = schema.verification
export let rateLimit = schema.rateLimit
export let auditEvent = schema.auditEvent
export let mailOutbox = schema.mailOutbox
export let loginThrottle = schema.loginThrottle
// A feature's tables are imported from here like the core ones (live bindings, rebound below).
export * from './feature-tables.js'

/** Which tables the exports hold now. */
export let boundDialect: 'sqlite' | 'postgres' = 'sqlite'

/**
 * Rebinds every table export to `tables` (the pg-core mirror), once per process, before the
 * first query. Every key of `schema` must be present: a table left on SQLite would fail at run time.
 */
export function bindTables(tables: { [K in keyof Tables]: unknown }, dialect: 'sqlite' | 'postgres'): void {
  for (const key of Object.keys(schema) as (keyof Tables)[]) {
    if (!tables[key]) throw new Error(`bindTables: no ${dialect} table for ${key}`)
  }
  const t = tables as unknown as Tables
  user = t.user
  session = t.session
  account = t.account
  verification = t.verification
  rateLimit = t.rateLimit
  auditEvent = t.auditEvent
  mailOutbox = t.mailOutbox
  loginThrottle = t.loginThrottle
  bindFeatureTables(t)
  boundDialect = dialect
}
