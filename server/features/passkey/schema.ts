import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { user } from '../../db/core-schema.js'

/** @better-auth/passkey's `passkey` table, column for column. `publicKey` is the COSE key in base64. */
export const passkey = sqliteTable(
  'passkey',
  {
    id: text('id').primaryKey(),
    name: text('name'),
    publicKey: text('publicKey').notNull(),
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    credentialID: text('credentialID').notNull(),
    counter: integer('counter').notNull(),
    deviceType: text('deviceType').notNull(),
    backedUp: integer('backedUp', { mode: 'boolean' }).notNull(),
    transports: text('transports'),
    createdAt: integer('createdAt', { mode: 'timestamp_ms' }),
    aaguid: text('aaguid'),
  },
  (t) => [index('passkey_userId_idx').on(t.userId), index('passkey_credentialID_idx').on(t.credentialID)],
)

export type PasskeyRow = typeof passkey.$inferSelect
