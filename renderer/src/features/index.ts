import type { PanelFeature } from './panel-feature'
import { overviewPanel } from './overview'
import { adminPanel } from './admin'
import { organizationPanel } from './organization'
import { groupsPanel } from './groups'
import { socialPanel } from './social'
import { mailPanel } from './mail'
import { auditPanel } from './audit'
import { networkPanel } from './network'
import { backupPanel } from './backup'
import { apiKeyPanel } from './api-key'
import { jwtPanel } from './jwt'
import { oidcProviderPanel } from './oidc-provider'
import { forwardAuthPanel } from './forward-auth'
import { ldapPanel } from './ldap'
import { settingsPanel } from './settings'
import { emailPasswordPanel } from './email-password'
import { usernamePanel } from './username'
import { magicLinkPanel } from './magic-link'
import { emailOtpPanel } from './email-otp'
import { oneTimeTokenPanel } from './one-time-token'
import { lastLoginMethodPanel } from './last-login-method'
import { twoFactorPanel } from './two-factor'
import { passkeyPanel } from './passkey'
import { hostedPagesPanel } from './hosted-pages'
import { bearerPanel } from './bearer'
import { multiSessionPanel } from './multi-session'
import { accountPanel } from './account'
import { metricsPanel } from './metrics'
import { anonymousPanel } from './anonymous'
import { deviceAuthorizationPanel } from './device-authorization'
import { genericOAuthPanel } from './generic-oauth'
import { samlPanel } from './saml'
import { importPanel } from './import'
import { appPasswordsPanel } from './app-passwords'

/**
 * Every feature folder of the control panel, once, as server/features/index.ts lists the server's.
 * The navigation is built from their views, in this order; the Settings sections from their
 * fields, in this order within each section (settings/settings-fields.ts). Adding a capability to
 * the panel is its folder (an index.ts with definePanelFeature) and one line here;
 * tests/features/settings/settings-fields.panel.test.ts checks that each folder declares only keys of its own
 * server feature's config.
 */
export const panelFeatures: PanelFeature[] = [
  overviewPanel,
  adminPanel,
  organizationPanel,
  groupsPanel,
  socialPanel,
  mailPanel,
  auditPanel,
  networkPanel,
  backupPanel,
  apiKeyPanel,
  jwtPanel,
  oidcProviderPanel,
  forwardAuthPanel,
  ldapPanel,
  samlPanel,
  settingsPanel,
  emailPasswordPanel,
  usernamePanel,
  magicLinkPanel,
  emailOtpPanel,
  oneTimeTokenPanel,
  lastLoginMethodPanel,
  twoFactorPanel,
  passkeyPanel,
  hostedPagesPanel,
  bearerPanel,
  multiSessionPanel,
  accountPanel,
  metricsPanel,
  anonymousPanel,
  deviceAuthorizationPanel,
  genericOAuthPanel,
  importPanel,
  appPasswordsPanel,
]
