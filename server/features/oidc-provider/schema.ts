import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { user } from '../../db/core-schema.js'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

/**
 * What oidc-provider stores through its adapter (sessions, interactions, grants, codes, access
 * and refresh tokens, …): one row per model instance, keyed by kind and id, the payload as JSON,
 * with the columns its lookups need (grantId for revocation, uid for sessions, userCode for the
 * device flow) and the expiry, checked against Gatehouse's clock on every read.
 */
export const oidcModel = sqliteTable(
  'oidcModel',
  {
    kind: text('kind').notNull(),
    id: text('id').notNull(),
    payload: text('payload').notNull(),
    grantId: text('grantId'),
    uid: text('uid'),
    userCode: text('userCode'),
    /** Sessions only: the Gatehouse session it was signed in from (signing out of that ends it). */
    gatehouseSessionId: text('gatehouseSessionId'),
    /** Set by oidc-provider's `consume` (codes, rotated refresh tokens). */
    consumedAt: timestamp('consumedAt'),
    expiresAt: timestamp('expiresAt'),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.id] }),
    index('oidc_model_grant_id_idx').on(t.grantId),
    index('oidc_model_uid_idx').on(t.uid),
    index('oidc_model_user_code_idx').on(t.userCode),
    index('oidc_model_gatehouse_session_id_idx').on(t.gatehouseSessionId),
    index('oidc_model_expires_at_idx').on(t.expiresAt),
  ],
)

/**
 * A relying party (an application signing its users in through Gatehouse). `secretHash` is the
 * SHA-256 of the secret, which is shown once; null for a public client (PKCE, no secret).
 * `allowedOrganizations` / `allowedTeams`: JSON arrays of ids; when either is non-empty only
 * members of one of them may sign in to this client.
 */
export const oidcClient = sqliteTable('oidcClient', {
  clientId: text('clientId').primaryKey(),
  name: text('name').notNull(),
  logo: text('logo'),
  redirectUris: text('redirectUris', { mode: 'json' }).$type<string[]>().notNull(),
  postLogoutRedirectUris: text('postLogoutRedirectUris', { mode: 'json' }).$type<string[]>().notNull(),
  secretHash: text('secretHash'),
  public: integer('public', { mode: 'boolean' }).notNull().default(false),
  pkceRequired: integer('pkceRequired', { mode: 'boolean' }).notNull().default(true),
  skipConsent: integer('skipConsent', { mode: 'boolean' }).notNull().default(false),
  allowedOrganizations: text('allowedOrganizations', { mode: 'json' }).$type<string[]>().notNull(),
  allowedTeams: text('allowedTeams', { mode: 'json' }).$type<string[]>().notNull(),
  /** May introspect every client's tokens (a resource server); otherwise only its own. */
  resourceServer: integer('resourceServer', { mode: 'boolean' }).notNull().default(false),
  /** The ID token's signing algorithm: RS256 (default), ES256 or EdDSA. */
  idTokenSignedResponseAlg: text('idTokenSignedResponseAlg', { enum: ['RS256', 'ES256', 'EdDSA'] })
    .notNull()
    .default('RS256'),
  /**
   * OpenID Connect Back-Channel Logout: where the client takes a logout token when a session that
   * signed in to it ends (implies backchannel_logout_session_required: tokens carry `sid`).
   */
  backchannelLogoutUri: text('backchannelLogoutUri'),
  /** Authorization requests must come through pushed authorization requests (RFC 9126). */
  requirePar: integer('requirePar', { mode: 'boolean' }).notNull().default(false),
  /** A self-registered client (RFC 7591): the id of the initial access token it registered with. */
  registeredByToken: text('registeredByToken'),
  /**
   * Client metadata without a column of its own, under RFC 7591's names: a self-registered
   * client's registration (without its secret), or an admin-created client's `grant_types` when
   * the admin chose them (null: the default of its kind).
   */
  registeredMetadata: text('registeredMetadata', { mode: 'json' }).$type<Record<string, unknown>>(),
  createdAt: timestamp('createdAt').notNull(),
  updatedAt: timestamp('updatedAt').notNull(),
  secretRotatedAt: timestamp('secretRotatedAt'),
  /**
   * The `sub` its tokens carry: `public` (the user id, the same at every client) or `pairwise` (an
   * HMAC of the user id and the client's sector under the server secret, different at each sector).
   */
  subjectType: text('subjectType', { enum: ['public', 'pairwise'] })
    .notNull()
    .default('public'),
  /** Back-channel logout: since when deliveries to it fail (null: the last one went through). */
  backchannelFailingSince: timestamp('backchannelFailingSince'),
  /** Back-channel logout: the last delivery's error while failing. */
  backchannelLastError: text('backchannelLastError'),
})

/**
 * Back-channel logout deliveries: one row per client and OIDC session (`sid`) whose Gatehouse
 * session ended, sent by a background job (never while the sign-out answers), retried with
 * backoff across restarts. An instance claims a due row by moving `claimedUntil` forward in one
 * atomic update, so each token is sent by one instance; `sentAt` marks it done (kept a day, so a
 * second notice of the same session is not sent again).
 */
export const oidcLogoutDelivery = sqliteTable(
  'oidcLogoutDelivery',
  {
    id: text('id').primaryKey(),
    clientId: text('clientId').notNull(),
    /** The person (the logout token's `sub`). */
    accountId: text('accountId').notNull(),
    sid: text('sid').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('nextAttemptAt').notNull(),
    claimedUntil: timestamp('claimedUntil'),
    sentAt: timestamp('sentAt'),
    lastError: text('lastError'),
    createdAt: timestamp('createdAt').notNull(),
  },
  (t) => [
    uniqueIndex('oidc_logout_delivery_client_sid_idx').on(t.clientId, t.sid),
    index('oidc_logout_delivery_next_attempt_at_idx').on(t.nextAttemptAt),
  ],
)

/**
 * Remembered consent: what a person allowed an application to see (OIDC scopes and claims), kept
 * across OIDC sessions and browsers until the person or an admin revokes it. `grantId` is the
 * oidc-provider Grant every token issued under this consent belongs to (revoking deletes them).
 */
export const oidcConsent = sqliteTable(
  'oidcConsent',
  {
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    clientId: text('clientId')
      .notNull()
      .references(() => oidcClient.clientId, { onDelete: 'cascade' }),
    scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull(),
    claims: text('claims', { mode: 'json' }).$type<string[]>().notNull(),
    grantId: text('grantId'),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] }), index('oidc_consent_client_id_idx').on(t.clientId)],
)

/**
 * Initial access tokens for dynamic client registration (RFC 7591 §3): shown once when created,
 * stored as their SHA-256. `usesLeft` null: unlimited until it expires or is revoked.
 */
export const oidcRegistrationToken = sqliteTable('oidcRegistrationToken', {
  id: text('id').primaryKey(),
  tokenHash: text('tokenHash').notNull().unique(),
  usesLeft: integer('usesLeft'),
  used: integer('used').notNull().default(0),
  expiresAt: timestamp('expiresAt'),
  revokedAt: timestamp('revokedAt'),
  createdAt: timestamp('createdAt').notNull(),
  /** What the admin wrote to remember it by (what or who it is for); null when none. */
  label: text('label'),
  /** Who created it, as the audit names a caller: the admin's email, `os:<account>`, `recovery-link`, or `cli`. */
  createdBy: text('createdBy'),
})

export type OidcRegistrationTokenRow = typeof oidcRegistrationToken.$inferSelect
export type OidcConsentRow = typeof oidcConsent.$inferSelect
export type OidcModelRow = typeof oidcModel.$inferSelect
export type OidcClientRow = typeof oidcClient.$inferSelect
export type OidcLogoutDeliveryRow = typeof oidcLogoutDelivery.$inferSelect
