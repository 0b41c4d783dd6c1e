import type * as core from './core-schema.js'

/**
 * The type of the whole schema, handed down from the composition floor. This floor imports no
 * feature, so it cannot spell the features' tables, nor `user` and `session` with the columns
 * features add: server/schema.ts assembles them and fills this interface by module augmentation
 * (`declare module './db/tables.js' { interface DatabaseSchema { tables: typeof schema } }`), as
 * config/schema.ts's `WholeConfig` receives the whole config schema. Store code then reads
 * `Tables['user']` (core columns and the features'), through server/db/schema.ts's bindings.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation (server/schema.ts)
export interface DatabaseSchema {}

/** The core tables alone: what `Tables` is when nothing filled `DatabaseSchema`. */
export interface CoreTables {
  user: typeof core.user
  session: typeof core.session
  account: typeof core.account
  verification: typeof core.verification
  rateLimit: typeof core.rateLimit
  auditEvent: typeof core.auditEvent
  mailOutbox: typeof core.mailOutbox
  loginThrottle: typeof core.loginThrottle
}

/** Every table, by property name: the SQLite tables server/schema.ts assembles. */
export type Tables = DatabaseSchema extends { tables: infer T } ? T : CoreTables

/**
 * What a table binding holds until the composition root hands the tables down: any use (a query,
 * a column) throws, naming the table, rather than running against nothing.
 */
export function unbound(name: string): never {
  const refuse = (): never => {
    throw new Error(
      `table ${name}: the tables are not handed down yet (server/schema.ts provides them as it loads; a process entry imports it before its first query)`,
    )
  }
  return new Proxy({}, { get: refuse, has: refuse, ownKeys: refuse, getPrototypeOf: refuse, getOwnPropertyDescriptor: refuse }) as never
}
