import type { Feature } from '../feature.js'
import { accountFeature } from './account/index.js'
import { emailPasswordFeature } from './email-password/index.js'
import { usernameFeature } from './username/index.js'
import { adminFeature } from './admin/index.js'
import { apiKeyFeature } from './api-key/index.js'
import { jwtFeature } from './jwt/index.js'
import { organizationFeature } from './organization/index.js'
import { groupsFeature } from './groups/index.js'
import { oidcProviderFeature } from './oidc-provider/index.js'
import { passkeyFeature } from './passkey/index.js'
import { twoFactorFeature } from './two-factor/index.js'
import { networkFeature } from './network/index.js'
import { backupFeature } from './backup/index.js'
import { healthFeature } from './health/index.js'
import { socialFeature } from './social/index.js'
import { auditFeature } from './audit/index.js'
import { overviewFeature } from './overview/index.js'
import { settingsFeature } from './settings/index.js'
import { hostedPagesFeature } from './hosted-pages/index.js'
import { mailFeature } from './mail/index.js'
import { metricsFeature } from './metrics/index.js'
import { importFeature } from './import/index.js'
import { forwardAuthFeature } from './forward-auth/index.js'
import { magicLinkFeature } from './magic-link/index.js'
import { emailOTPFeature } from './email-otp/index.js'
import { bearerFeature } from './bearer/index.js'
import { multiSessionFeature } from './multi-session/index.js'
import { oneTimeTokenFeature } from './one-time-token/index.js'
import { lastLoginMethodFeature } from './last-login-method/index.js'
import { genericOAuthFeature } from './generic-oauth/index.js'
import { deviceAuthorizationFeature } from './device-authorization/index.js'
import { anonymousFeature } from './anonymous/index.js'
import { appPasswordsFeature } from './app-passwords/index.js'
import { ldapFeature } from './ldap/index.js'
import { samlFeature } from './saml/index.js'

/**
 * Every feature folder, once. The composition root mounts their routes and starts their background
 * work; the panel service registers their operations. A feature listed here needs no other edit
 * outside its folder: bin/gen-features.js gathers its config sections, tables, columns and panel
 * contract from the folders this list names, in this order (npm test, npm start and the builds run
 * it); tests/unit/feature-declarations.test.ts checks the result.
 */
export const features: Feature[] = [
  emailPasswordFeature,
  usernameFeature,
  accountFeature,
  adminFeature,
  organizationFeature,
  groupsFeature,
  apiKeyFeature,
  jwtFeature,
  twoFactorFeature,
  passkeyFeature,
  networkFeature,
  backupFeature,
  healthFeature,
  socialFeature,
  auditFeature,
  overviewFeature,
  settingsFeature,
  hostedPagesFeature,
  oidcProviderFeature,
  mailFeature,
  metricsFeature,
  importFeature,
  forwardAuthFeature,
  magicLinkFeature,
  emailOTPFeature,
  bearerFeature,
  oneTimeTokenFeature,
  lastLoginMethodFeature,
  multiSessionFeature,
  genericOAuthFeature,
  deviceAuthorizationFeature,
  anonymousFeature,
  appPasswordsFeature,
  ldapFeature,
  samlFeature,
]
