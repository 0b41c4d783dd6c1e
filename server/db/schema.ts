/**
 * The whole schema: the core tables (core-schema.ts) and the tables feature folders declare in their
 * own schema.ts, re-exported here for drizzle-kit (drizzle.config.ts) and the typed database.
 * Feature schemas import core tables from core-schema.ts, never from here (no import cycle).
 */
import { apikey } from '../features/api-key/schema.js'
import { keypair } from '../features/jwt/schema.js'
import { invitation, member, organization, team, teamMember } from '../features/organization/schema.js'
import { oidcClient, oidcModel } from '../features/oidc-provider/schema.js'
import { passkey } from '../features/passkey/schema.js'
import { twoFactor } from '../features/two-factor/schema.js'
import {
  account,
  auditEvent,
  loginThrottle,
  mailOutbox,
  rateLimit,
  session,
  user,
  verification,
} from './core-schema.js'

export * from './core-schema.js'
export { apikey, invitation, keypair, member, oidcClient, oidcModel, organization, passkey, team, teamMember, twoFactor }

export const schema = {
  user,
  session,
  account,
  verification,
  rateLimit,
  keypair,
  organization,
  team,
  member,
  teamMember,
  invitation,
  apikey,
  auditEvent,
  mailOutbox,
  loginThrottle,
  twoFactor,
  passkey,
  oidcModel,
  oidcClient,
}
