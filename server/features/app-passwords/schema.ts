import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { user } from '../../db/core-schema.js'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

/**
 * App passwords: secrets a person makes for one client that cannot do a second factor (an LDAP
 * bind from a NAS, a mail client). The secret is random (≥ 128 bits), so a fast keyed hash is
 * enough: `hash` is HMAC-SHA256 of it under a key derived from the auth secret (verify.ts), base64url.
 * `hint` is its last four characters, for the person to tell them apart. Revoking deletes the row
 * (the audit log keeps the record); an expired row stays until revoked, and never verifies.
 */
export const appPassword = sqliteTable(
  'appPassword',
  {
    id: text('id').primaryKey(),
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    hash: text('hash').notNull(),
    hint: text('hint').notNull(),
    createdAt: timestamp('createdAt').notNull(),
    expiresAt: timestamp('expiresAt'),
    lastUsedAt: timestamp('lastUsedAt'),
  },
  (t) => [index('appPassword_userId_idx').on(t.userId), uniqueIndex('appPassword_hash_unique').on(t.hash)],
)

export type AppPasswordRow = typeof appPassword.$inferSelect
