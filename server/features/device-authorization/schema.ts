import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

/**
 * better-auth's `deviceCode` table (device authorization plugin, RFC 8628), same columns: a
 * pending request `status` 'pending' | 'approved' | 'denied'; `userId` is set when a signed-in
 * person opens the user code (GET /device claims it) and names who approved or denied it;
 * `pollingInterval` is in milliseconds, as upstream; `lastPolledAt` is the device's last poll at
 * /device/token (slow_down). The row is deleted when its token is issued, denied or expired.
 * `userId` has no foreign key, as upstream: /device/code may pre-bind a request to a user id
 * (`user_id`) that only that user can then approve.
 */
export const deviceCode = sqliteTable(
  'deviceCode',
  {
    id: text('id').primaryKey(),
    deviceCode: text('deviceCode').notNull(),
    userCode: text('userCode').notNull(),
    userId: text('userId'),
    expiresAt: timestamp('expiresAt').notNull(),
    status: text('status').notNull(),
    lastPolledAt: timestamp('lastPolledAt'),
    pollingInterval: integer('pollingInterval'),
    clientId: text('clientId'),
    scope: text('scope'),
  },
  (t) => [
    uniqueIndex('deviceCode_deviceCode_unique').on(t.deviceCode),
    uniqueIndex('deviceCode_userCode_unique').on(t.userCode),
    index('deviceCode_expires_at_idx').on(t.expiresAt),
  ],
)

export type DeviceCodeRow = typeof deviceCode.$inferSelect
