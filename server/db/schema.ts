/**
 * The whole schema: the core tables (core-schema.ts) and the tables feature folders declare in their
 * own schema.ts, re-exported here for drizzle-kit (drizzle.config.ts) and the typed database.
 * Feature schemas import core tables from core-schema.ts, never from here (no import cycle).
 *
 * The dialect switch: store code imports its tables from THIS module only (tests/unit/
 * pg-schema.test.ts checks it). The exports are `let` bindings holding the SQLite tables; a process
 * that runs on PostgreSQL calls `bindTables(pgSchema)` once, at open, before any query, and every
 * importer then sees the pg-core mirror (server/db/pg/schema.ts) through ES modules' live
 * bindings: no lookup per query, no context to thread, nothing on get-session's hot path. The
 * TypeScript types stay the SQLite ones (the two mirrors have the same properties and JS types).
 * One dialect per process: tests that need both engines run each in its own process (or file).
 */
import * as sqliteApiKey from '../features/api-key/schema.js'
import * as sqliteDeviceAuthorization from '../features/device-authorization/schema.js'
import * as sqliteForwardAuth from '../features/forward-auth/schema.js'
import * as sqliteJwt from '../features/jwt/schema.js'
import * as sqliteOidc from '../features/oidc-provider/schema.js'
import * as sqliteOrganization from '../features/organization/schema.js'
import * as sqlitePasskey from '../features/passkey/schema.js'
import * as sqliteTwoFactor from '../features/two-factor/schema.js'
import * as core from './core-schema.js'

/** The SQLite tables, by property name (drizzle's schema object for the better-sqlite3 handle). */
export const schema = {
  user: core.user,
  session: core.session,
  account: core.account,
  verification: core.verification,
  rateLimit: core.rateLimit,
  keypair: sqliteJwt.keypair,
  organization: sqliteOrganization.organization,
  team: sqliteOrganization.team,
  member: sqliteOrganization.member,
  teamMember: sqliteOrganization.teamMember,
  invitation: sqliteOrganization.invitation,
  apikey: sqliteApiKey.apikey,
  auditEvent: core.auditEvent,
  mailOutbox: core.mailOutbox,
  loginThrottle: core.loginThrottle,
  twoFactor: sqliteTwoFactor.twoFactor,
  twoFactorSession: sqliteTwoFactor.twoFactorSession,
  passkey: sqlitePasskey.passkey,
  oidcModel: sqliteOidc.oidcModel,
  oidcClient: sqliteOidc.oidcClient,
  oidcConsent: sqliteOidc.oidcConsent,
  forwardAuthCount: sqliteForwardAuth.forwardAuthCount,
  deviceCode: sqliteDeviceAuthorization.deviceCode,
}

export type Tables = typeof schema

export let user = schema.user
export let session = schema.session
export let account = schema.account
export let verification = schema.verification
export let rateLimit = schema.rateLimit
export let keypair = schema.keypair
export let organization = schema.organization
export let team = schema.team
export let member = schema.member
export let teamMember = schema.teamMember
export let invitation = schema.invitation
export let apikey = schema.apikey
export let auditEvent = schema.auditEvent
export let mailOutbox = schema.mailOutbox
export let loginThrottle = schema.loginThrottle
export let twoFactor = schema.twoFactor
export let twoFactorSession = schema.twoFactorSession
export let passkey = schema.passkey
export let oidcModel = schema.oidcModel
export let oidcClient = schema.oidcClient
export let oidcConsent = schema.oidcConsent
export let forwardAuthCount = schema.forwardAuthCount
export let deviceCode = schema.deviceCode

/** Which tables the exports hold now. */
export let boundDialect: 'sqlite' | 'postgres' = 'sqlite'

/**
 * Rebinds every table export to `tables` (the pg-core mirror), once per process, before the
 * first query. Every key of `schema` must be present: a table left on SQLite would fail at run time.
 */
export function bindTables(tables: { [K in keyof Tables]: unknown }, dialect: 'sqlite' | 'postgres'): void {
  for (const key of Object.keys(schema) as (keyof Tables)[]) {
    if (!tables[key]) throw new Error(`bindTables: no ${dialect} table for ${key}`)
  }
  const t = tables as unknown as Tables
  user = t.user
  session = t.session
  account = t.account
  verification = t.verification
  rateLimit = t.rateLimit
  keypair = t.keypair
  organization = t.organization
  team = t.team
  member = t.member
  teamMember = t.teamMember
  invitation = t.invitation
  apikey = t.apikey
  auditEvent = t.auditEvent
  mailOutbox = t.mailOutbox
  loginThrottle = t.loginThrottle
  twoFactor = t.twoFactor
  twoFactorSession = t.twoFactorSession
  passkey = t.passkey
  oidcModel = t.oidcModel
  oidcClient = t.oidcClient
  oidcConsent = t.oidcConsent
  forwardAuthCount = t.forwardAuthCount
  deviceCode = t.deviceCode
  boundDialect = dialect
}
