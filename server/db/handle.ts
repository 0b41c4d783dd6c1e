import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import type { Tables } from './tables.js'

/**
 * The query handle rules use (`ctx.db`): drizzle over the whole schema. On its own so the storage
 * port can name it without importing the module that opens databases, which imports the port.
 */
export type DB = BetterSQLite3Database<Tables>
