import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

/**
 * The identity provider's signing keys: an RSA key and its self-signed X.509 certificate (PEM).
 * `privateKey` is the PKCS#8 PEM sealed with the auth secret (server/crypto/encrypt.ts). Every
 * key without `retiredAt` is published in the metadata; the newest of them whose `activatesAt` has come signs.
 */
export const samlKey = sqliteTable('samlKey', {
  id: text('id').primaryKey(),
  certificate: text('certificate').notNull(),
  privateKey: text('privateKey').notNull(),
  createdAt: timestamp('createdAt').notNull(),
  retiredAt: timestamp('retiredAt'),
  /**
   * When the key starts signing (`gatehouse saml cert rotate` publishes it first; `--activate`, or
   * `saml.keyRolloverDays` later). Null: signing since `createdAt` (keys made before rollovers existed).
   */
  activatesAt: timestamp('activatesAt'),
})

/** Service providers added by the CLI or the panel (those of `saml.serviceProviders` live in the config). */
export const samlServiceProvider = sqliteTable('samlServiceProvider', {
  id: text('id').primaryKey(),
  entityId: text('entityId').notNull().unique(),
  name: text('name').notNull(),
  metadataXml: text('metadataXml').notNull(),
  nameIdFormat: text('nameIdFormat').notNull(),
  /** JSON array of group names; empty: everyone. */
  allowedGroups: text('allowedGroups', { mode: 'json' }).$type<string[]>().notNull(),
  createdAt: timestamp('createdAt').notNull(),
  updatedAt: timestamp('updatedAt').notNull(),
})

/**
 * An authentication request received and verified, waiting for the person to sign in (any
 * instance may finish it). `(spEntityId, requestId)` is unique: a replayed request is refused. A
 * LogoutRequest's ID is kept here too, spent at once (`acsUrl` empty), so its replay is refused.
 */
export const samlRequest = sqliteTable(
  'samlRequest',
  {
    id: text('id').primaryKey(),
    spEntityId: text('spEntityId').notNull(),
    /** The AuthnRequest's ID (null for an IdP-initiated sign-in). */
    requestId: text('requestId'),
    relayState: text('relayState'),
    acsUrl: text('acsUrl').notNull(),
    /** The request's ForceAuthn: only a session begun after the request was received answers it. */
    forceAuthn: integer('forceAuthn', { mode: 'boolean' }),
    /** The request's IsPassive: without a usable session, a NoPassive answer rather than the sign-in page. */
    isPassive: integer('isPassive', { mode: 'boolean' }),
    createdAt: timestamp('createdAt').notNull(),
    expiresAt: timestamp('expiresAt').notNull(),
    usedAt: timestamp('usedAt'),
    /**
     * Where an unauthenticated AuthnRequest came from (the rate limiter's identity: the IPv4 address,
     * the IPv6 /64): its pending requests are capped. Null for IdP-initiated requests and LogoutRequests.
     */
    source: text('source'),
  },
  (t) => [
    uniqueIndex('samlRequest_sp_request_uidx').on(t.spEntityId, t.requestId),
    index('samlRequest_expiresAt_idx').on(t.expiresAt),
    index('samlRequest_source_idx').on(t.source, t.expiresAt),
  ],
)

/** Which service providers a Gatehouse session signed in to (single logout), with the NameID and SessionIndex issued. */
export const samlParticipant = sqliteTable(
  'samlParticipant',
  {
    id: text('id').primaryKey(),
    sessionId: text('sessionId').notNull(),
    userId: text('userId').notNull(),
    spEntityId: text('spEntityId').notNull(),
    nameId: text('nameId').notNull(),
    nameIdFormat: text('nameIdFormat').notNull(),
    sessionIndex: text('sessionIndex').notNull(),
    createdAt: timestamp('createdAt').notNull(),
  },
  (t) => [index('samlParticipant_sessionId_idx').on(t.sessionId), index('samlParticipant_sessionIndex_idx').on(t.sessionIndex)],
)

export type SamlKeyRow = typeof samlKey.$inferSelect
export type SamlServiceProviderRow = typeof samlServiceProvider.$inferSelect
export type SamlRequestRow = typeof samlRequest.$inferSelect
export type SamlParticipantRow = typeof samlParticipant.$inferSelect
