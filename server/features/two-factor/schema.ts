import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { user } from '../../db/core-schema.js'

/**
 * better-auth's `twoFactor` table (plugins/two-factor/schema.ts), column for column. `secret` and
 * `backupCodes` hold values sealed by crypto/encrypt.ts. `failedVerificationCount` and
 * `lockedUntil` are kept for databases moved from better-auth; Gatehouse counts failures in the
 * shared login throttle (auth/throttle.ts) instead. `user.twoFactorEnabled` is in db/schema.ts.
 */
export const twoFactor = sqliteTable(
  'twoFactor',
  {
    id: text('id').primaryKey(),
    secret: text('secret').notNull(),
    backupCodes: text('backupCodes').notNull(),
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    verified: integer('verified', { mode: 'boolean' }).default(true),
    failedVerificationCount: integer('failedVerificationCount').default(0),
    lockedUntil: integer('lockedUntil', { mode: 'timestamp_ms' }),
  },
  (t) => [index('twoFactor_secret_idx').on(t.secret), index('twoFactor_userId_idx').on(t.userId)],
)

export type TwoFactorRow = typeof twoFactor.$inferSelect
