import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Forward auth's allowed requests, counted per protected app (the request's host) and hour: a busy
 * proxy asks on every request, so allowed answers are aggregated in memory and added here in one
 * write per app and hour at each flush, instead of one audit event each. Refusals go to the audit log.
 */
export const forwardAuthCount = sqliteTable(
  'forwardAuthCount',
  {
    app: text('app').notNull(),
    /** The hour's start, epoch milliseconds. */
    hour: integer('hour').notNull(),
    allowed: integer('allowed').notNull(),
  },
  (t) => [primaryKey({ columns: [t.app, t.hour] })],
)
