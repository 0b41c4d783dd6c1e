import { defineFeature } from '../../feature.js'
import { APP_PASSWORD_ERRORS } from './errors.js'
import { appPasswordsPanel } from './panel.js'
import { appPasswordRoutes } from './routes.js'
import * as tables from './schema.js'

/**
 * App passwords: random secrets a person makes for one client that cannot ask for a second factor
 * (an LDAP bind). Made, listed and revoked by their owner (API, hosted page), listed and revoked
 * by admins (panel); verify.ts answers the LDAP server.
 */
export const appPasswordsFeature = defineFeature({
  id: 'app-passwords',
  tables,
  errors: APP_PASSWORD_ERRORS,
  routes: appPasswordRoutes,
  panel: appPasswordsPanel,
})
