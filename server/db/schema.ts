/**
 * The tables store code queries: one live binding per table, core and features alike. This floor
 * imports no feature: the composition floor (server/schema.ts) assembles the SQLite tables (the
 * core ones of core-schema.ts with the features' columns, and the features' own tables) and hands
 * them down as it loads (`provideTables`), their type through tables.ts's `DatabaseSchema`.
 *
 * The dialect switch: store code imports its tables from THIS module only (tests/unit/
 * pg-schema.test.ts checks it). The exports are `let` bindings; `provideTables` binds them to the
 * SQLite tables, and a process that runs on PostgreSQL calls `bindTables(pgSchema)` once, at open,
 * before any query, after which every importer sees the pg-core mirror (server/db/pg/schema.ts)
 * through ES modules' live bindings: no lookup per query, no context to thread, nothing on
 * get-session's hot path. The TypeScript types stay the SQLite ones (the two mirrors have the same
 * properties and JS types). One dialect per process: tests that need both engines run each in its
 * own process (or file). Before the tables are handed down, every binding throws on use.
 */
import { bindFeatureTables } from './feature-bindings.js'
import { type Tables, unbound } from './tables.js'

export type { DatabaseSchema, Tables } from './tables.js'

export let user: Tables['user'] = unbound('user')
export let session: Tables['session'] = unbound('session')
export let account: Tables['account'] = unbound('account')
export let verification: Tables['verification'] = unbound('verification')
export let rateLimit: Tables['rateLimit'] = unbound('rateLimit')
export let auditEvent: Tables['auditEvent'] = unbound('auditEvent')
export let mailOutbox: Tables['mailOutbox'] = unbound('mailOutbox')
export let loginThrottle: Tables['loginThrottle'] = unbound('loginThrottle')
// A feature's tables are imported from here like the core ones (generated bindings, by name only).
export * from './feature-bindings.js'

/** Which tables the exports hold now (null: none yet). */
export let boundDialect: 'sqlite' | 'postgres' | null = null

let provided: Tables | null = null

/**
 * The composition floor (server/schema.ts) hands the assembled SQLite tables down, once, as it
 * loads; the bindings then hold them unless PostgreSQL was bound already.
 */
export function provideTables(tables: Tables): void {
  if (provided && provided !== tables) throw new Error('provideTables: the tables were already provided')
  provided = tables
  if (boundDialect === null) bindTables(tables, 'sqlite')
}

/**
 * The SQLite tables, by property name, as the composition floor provided them (drizzle's schema
 * object for the better-sqlite3 handle, the reference the PostgreSQL mirror is checked against).
 */
export function sqliteTables(): Tables {
  if (!provided) throw new Error('the tables are not handed down yet (server/schema.ts provides them as it loads)')
  return provided
}

/**
 * Rebinds every table export to `tables` (the pg-core mirror, or the SQLite tables), before the
 * first query. Every table of the provided schema must be present: a table left on the other
 * dialect would fail at run time.
 */
export function bindTables(tables: { [K in keyof Tables]: unknown }, dialect: 'sqlite' | 'postgres'): void {
  for (const key of Object.keys(sqliteTables()) as (keyof Tables)[]) {
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
