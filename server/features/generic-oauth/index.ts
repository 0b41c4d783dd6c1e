import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { GENERIC_OAUTH_ERRORS } from './errors.js'
import { genericOAuthPanel } from './panel.js'
import { genericOAuthProviders } from './providers.js'
import { genericOAuthRoutes } from './routes.js'

/**
 * Generic OAuth (better-auth 1.7's genericOAuth plugin): any OAuth 2.0 / OpenID Connect provider
 * from `genericOAuth.config` (Keycloak, authentik, Entra, Google Workspace…), found by discovery
 * or given by its endpoints. The social engine runs them as it runs the built-in providers
 * (Feature.oauthProviders): POST /sign-in/social {provider: "<providerId>"}, GET /callback/<providerId>,
 * /link-social, the account-linking rules and the sign-in pipeline. Added, tested and removed in
 * the panel's Providers view.
 */
export const genericOAuthFeature = defineFeature({
  id: 'generic-oauth',
  config: configSections,
  errors: GENERIC_OAUTH_ERRORS,
  routes: genericOAuthRoutes,
  oauthProviders: genericOAuthProviders,
  panel: genericOAuthPanel,
})
