import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { sessionFeatureColumns, userFeatureColumns, userFeatureIndexes } from './feature-columns.js'

/**
 * Every table of SPEC §3 with better-auth's column names, plus Gatehouse's own
 * (audit events). Dates are stored as epoch milliseconds; booleans as 0/1. The columns a feature
 * adds to `user` and `session` are declared in that feature's columns.ts (and by its defineFeature)
 * and spread in here, so the drizzle schema and both dialects' migrations come from one place.
 */

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

export const user = sqliteTable(
  'user',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    emailVerified: integer('emailVerified', { mode: 'boolean' }).notNull().default(false),
    image: text('image'),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt').notNull(),
    /** Configured additional user fields, as a JSON object (SPEC §3 "configurable additional fields"). */
    additionalFields: text('additionalFields', { mode: 'json' }).$type<Record<string, unknown>>(),
    // The columns features add (their columns.ts), as better-auth plugins declare `schema.user.fields`.
    ...userFeatureColumns,
  },
  (t) => [
    uniqueIndex('user_email_unique').on(t.email),
    ...userFeatureIndexes(t),
    index('user_created_at_idx').on(t.createdAt),
    index('user_name_idx').on(t.name),
  ],
)

export const session = sqliteTable(
  'session',
  {
    id: text('id').primaryKey(),
    token: text('token').notNull(),
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expiresAt').notNull(),
    ipAddress: text('ipAddress'),
    userAgent: text('userAgent'),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt').notNull(),
    ...sessionFeatureColumns,
  },
  (t) => [
    uniqueIndex('session_token_unique').on(t.token),
    index('session_user_id_idx').on(t.userId),
    index('session_expires_at_idx').on(t.expiresAt),
  ],
)

export const account = sqliteTable(
  'account',
  {
    id: text('id').primaryKey(),
    accountId: text('accountId').notNull(),
    providerId: text('providerId').notNull(),
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    accessToken: text('accessToken'),
    refreshToken: text('refreshToken'),
    idToken: text('idToken'),
    accessTokenExpiresAt: timestamp('accessTokenExpiresAt'),
    refreshTokenExpiresAt: timestamp('refreshTokenExpiresAt'),
    scope: text('scope'),
    password: text('password'),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt').notNull(),
  },
  (t) => [index('account_user_id_idx').on(t.userId), uniqueIndex('account_provider_account_unique').on(t.providerId, t.accountId)],
)

export const verification = sqliteTable(
  'verification',
  {
    id: text('id').primaryKey(),
    identifier: text('identifier').notNull(),
    value: text('value').notNull(),
    expiresAt: timestamp('expiresAt').notNull(),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt').notNull(),
  },
  (t) => [index('verification_identifier_idx').on(t.identifier), index('verification_expires_at_idx').on(t.expiresAt)],
)

export const rateLimit = sqliteTable('rateLimit', {
  key: text('key').primaryKey(),
  count: integer('count').notNull(),
  lastRequest: integer('lastRequest').notNull(),
})

/** Referenced by SPEC §3 without fields; better-auth's api-key plugin columns. */
/** Gatehouse's append-only audit log. Never updated or deleted by the application. */
export const auditEvent = sqliteTable(
  'auditEvent',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    type: text('type').notNull(),
    outcome: text('outcome', { enum: ['success', 'failure'] }).notNull(),
    actorUserId: text('actorUserId'),
    targetUserId: text('targetUserId'),
    /** What the action touched beyond a user (a session id, an organization id...). */
    target: text('target'),
    ipAddress: text('ipAddress'),
    userAgent: text('userAgent'),
    detail: text('detail', { mode: 'json' }).$type<Record<string, unknown>>(),
    /** The X-Request-Id of the request that caused the event (null: no request, e.g. the CLI). */
    requestId: text('requestId'),
    createdAt: timestamp('createdAt').notNull(),
  },
  (t) => [
    index('audit_created_at_idx').on(t.createdAt),
    index('audit_type_idx').on(t.type, t.createdAt),
    index('audit_actor_idx').on(t.actorUserId),
    index('audit_target_idx').on(t.targetUserId),
  ],
)

/** Every message the product sends, kept so the panel can show it and failed ones can be retried. */
export const mailOutbox = sqliteTable(
  'mailOutbox',
  {
    id: text('id').primaryKey(),
    to: text('to').notNull(),
    subject: text('subject').notNull(),
    kind: text('kind').notNull(),
    text: text('text').notNull(),
    html: text('html').notNull(),
    status: text('status', { enum: ['queued', 'sending', 'sent', 'failed'] })
      .notNull()
      .default('queued'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt').notNull(),
    sentAt: timestamp('sentAt'),
  },
  (t) => [index('mail_outbox_status_idx').on(t.status, t.createdAt), index('mail_outbox_created_at_idx').on(t.createdAt)],
)

/** Failed password checks per normalised identifier (brute-force defence). */
export const loginThrottle = sqliteTable('loginThrottle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull().default(0),
  windowStart: integer('windowStart').notNull(),
  lockedUntil: integer('lockedUntil'),
})
