import { provideSessionDefaults } from './core/session-defaults.js'
import { provideUserDefaults, provideUserFieldAccess } from './core/user-defaults.js'
import { account, auditEvent, loginThrottle, mailOutbox, rateLimit, sessionTable, userTable, verification } from './db/core-schema.js'
import { provideTables } from './db/schema.js'
import {
  sessionFeatureColumns,
  sessionFeatureDefaults,
  userFeatureColumns,
  userFeatureDefaults,
  userFeatureFieldAccess,
  userFeatureIndexes,
} from './features/columns.js'
import { featureTables } from './features/tables.js'

/**
 * The whole database schema, assembled on the composition floor: db/core-schema.ts's core tables,
 * `user` and `session` built with the columns features add (server/features/columns.ts, generated
 * by bin/gen-features.js from their columns.ts) and every feature's own tables
 * (server/features/tables.ts, generated from their schema.ts). drizzle-kit reads this module
 * (drizzle.config.ts), and the PostgreSQL mirror is generated from it (server/gen-pg-schema.ts).
 *
 * It is handed down as this module loads, as config-schema.ts hands down the config schema: the
 * tables to db/schema.ts (`provideTables`: the bindings store code imports, which PostgreSQL
 * rebinds at open), their type through db/tables.ts's `DatabaseSchema` (the augmentation below),
 * and what a new user and a new session hold in the features' columns to core
 * (`provideUserDefaults`, `provideSessionDefaults`). So no module
 * of db/, core/, config/ or http/ imports a feature. The composition root (gatehouse.ts, cli.ts)
 * imports it first, before any module that queries.
 */
export const user = userTable(userFeatureColumns, userFeatureIndexes)
export const session = sessionTable(sessionFeatureColumns)
export { account, auditEvent, loginThrottle, mailOutbox, rateLimit, verification }
export * from './features/tables.js'

/** The SQLite tables, by property name (drizzle's schema object; the keys store code imports). */
export const schema = {
  user,
  session,
  account,
  verification,
  rateLimit,
  auditEvent,
  mailOutbox,
  loginThrottle,
  // The features' tables (their schema.ts), gathered by bin/gen-features.js.
  ...featureTables,
}

provideTables(schema)
provideUserDefaults(userFeatureDefaults)
provideSessionDefaults(sessionFeatureDefaults)
provideUserFieldAccess(userFeatureFieldAccess)

declare module './db/tables.js' {
  interface DatabaseSchema {
    tables: typeof schema
  }
}
