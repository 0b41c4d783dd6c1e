import { defineFeature } from '../../feature.js'
import { APP_PASSWORD_ERRORS } from './errors.js'
import { appPasswordsPanel } from './panel.js'
import { configSections } from './config.js'
import { appPasswordRoutes } from './routes.js'
import { revokeAppPasswordsFor } from './rules.js'
import * as tables from './schema.js'

/**
 * App passwords: random secrets a person makes for one client that cannot ask for a second factor
 * (an LDAP bind). Made, listed and revoked by their owner (API, hosted page), listed and revoked
 * by admins (panel); verify.ts answers the LDAP server. A password change or reset, a ban, "revoke
 * all sessions" and a deletion revoke them all (core/credential-revocation.ts).
 */
export const appPasswordsFeature = defineFeature({
  id: 'app-passwords',
  config: configSections,
  tables,
  errors: APP_PASSWORD_ERRORS,
  routes: appPasswordRoutes,
  panel: appPasswordsPanel,
  credentialsRevoked: revokeAppPasswordsFor,
})
