import {
  type AnySQLiteColumn,
  index,
  integer,
  type SQLiteColumnBuilderBase,
  type SQLiteTableExtraConfigValue,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core'

/**
 * Every table of SPEC §3 with better-auth's column names, plus Gatehouse's own
 * (audit events). Dates are stored as epoch milliseconds; booleans as 0/1.
 *
 * The columns a feature adds to `user` and `session` are declared in that feature's columns.ts (and
 * by its defineFeature); this floor imports no feature, so it builds those two tables from what it
 * is given: `userTable(featureColumns, featureIndexes)` and `sessionTable(featureColumns)`, which the
 * composition floor (server/schema.ts) calls with the generated server/features/columns.ts, and
 * both dialects' migrations are generated from the result. `user` and `session` below are the same
 * tables with the core columns only: what foreign keys name (a foreign key is a table's name and
 * column: account's, and the features' tables'), and the shape core knows without the features.
 * Queries never use them: stores take their tables from server/db/schema.ts.
 */

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

/** A feature's indexes on its own user columns (columns.ts `xIndexes.user`). */
type FeatureIndexes = (t: never) => SQLiteTableExtraConfigValue[]

const userColumns = () => ({
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  emailVerified: integer('emailVerified', { mode: 'boolean' }).notNull().default(false),
  image: text('image'),
  createdAt: timestamp('createdAt').notNull(),
  updatedAt: timestamp('updatedAt').notNull(),
  /** Configured additional user fields, as a JSON object (SPEC §3 "configurable additional fields"). */
  additionalFields: text('additionalFields', { mode: 'json' }).$type<Record<string, unknown>>(),
})

/**
 * `user` with the columns features add (their columns.ts), as better-auth plugins declare
 * `schema.user.fields`, after the core ones, and the indexes features add over them.
 */
export function userTable<F extends Record<string, SQLiteColumnBuilderBase>>(featureColumns: F, featureIndexes: FeatureIndexes) {
  return sqliteTable('user', { ...userColumns(), ...featureColumns }, (t) => {
    const c = t as unknown as Record<keyof ReturnType<typeof userColumns>, AnySQLiteColumn>
    return [
      uniqueIndex('user_email_unique').on(c.email),
      ...featureIndexes(t as never),
      index('user_created_at_id_idx').on(c.createdAt, c.id),
      index('user_name_idx').on(c.name),
    ]
  })
}

const sessionColumns = () => ({
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
})

/** `session` with the columns features add (their columns.ts), after the core ones. */
export function sessionTable<F extends Record<string, SQLiteColumnBuilderBase>>(featureColumns: F) {
  return sqliteTable('session', { ...sessionColumns(), ...featureColumns }, (t) => {
    const c = t as unknown as Record<keyof ReturnType<typeof sessionColumns>, AnySQLiteColumn>
    return [
      uniqueIndex('session_token_unique').on(c.token),
      index('session_user_id_idx').on(c.userId),
      index('session_expires_at_idx').on(c.expiresAt),
    ]
  })
}

/** `user` with the core columns only: what foreign keys name (see above), never queried. */
export const user = userTable({}, () => [])

/** `session` with the core columns only: what foreign keys name (see above), never queried. */
export const session = sessionTable({})

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
