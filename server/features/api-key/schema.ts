import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

/**
 * The `apikey` table of current @better-auth/api-key (1.7): the owner is `referenceId` (a user id,
 * or an organization id for organization-owned keys), `key` is the SHA-256 of the key in base64url
 * without padding (the plugin's default hasher), `start` its first characters for display.
 * Durations (`refillInterval`, `rateLimitTimeWindow`) are milliseconds, as upstream.
 */
export const apikey = sqliteTable(
  'apikey',
  {
    id: text('id').primaryKey(),
    configId: text('configId').notNull().default('default'),
    name: text('name'),
    start: text('start'),
    prefix: text('prefix'),
    key: text('key').notNull(),
    referenceId: text('referenceId').notNull(),
    refillInterval: integer('refillInterval'),
    refillAmount: integer('refillAmount'),
    lastRefillAt: timestamp('lastRefillAt'),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    rateLimitEnabled: integer('rateLimitEnabled', { mode: 'boolean' }).notNull().default(true),
    rateLimitTimeWindow: integer('rateLimitTimeWindow'),
    rateLimitMax: integer('rateLimitMax'),
    requestCount: integer('requestCount').notNull().default(0),
    remaining: integer('remaining'),
    lastRequest: timestamp('lastRequest'),
    expiresAt: timestamp('expiresAt'),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt').notNull(),
    /** JSON: resource → actions. */
    permissions: text('permissions'),
    /** JSON object. */
    metadata: text('metadata'),
  },
  (t) => [
    index('apikey_reference_id_idx').on(t.referenceId),
    index('apikey_config_id_idx').on(t.configId),
    uniqueIndex('apikey_key_unique').on(t.key),
  ],
)

export type ApiKeyRow = typeof apikey.$inferSelect
