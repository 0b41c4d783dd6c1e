import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { session, user } from '../../db/core-schema.js'

/**
 * better-auth's `twoFactor` table (plugins/two-factor/schema.ts), column for column. `secret` and
 * `backupCodes` hold values sealed by crypto/encrypt.ts. `failedVerificationCount` and
 * `lockedUntil` are kept for databases moved from better-auth; Gatehouse counts failures in the
 * shared login throttle (auth/throttle.ts) instead. `user.twoFactorEnabled` is in columns.ts.
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

/**
 * Gatehouse's marker of a session that passed a second factor: written when a sign-in completes
 * through the second step (a TOTP, mailed or backup code) or on a trusted device (the step was
 * passed on that browser within `trustDeviceMaxAge`). Nothing else on a session says so, and
 * forward auth's `two-factor` policy needs it. One row per session, gone with it (cascade).
 */
export const twoFactorSession = sqliteTable('twoFactorSession', {
  sessionId: text('sessionId')
    .primaryKey()
    .references(() => session.id, { onDelete: 'cascade' }),
  method: text('method').notNull(),
  createdAt: integer('createdAt', { mode: 'timestamp_ms' }).notNull(),
})
