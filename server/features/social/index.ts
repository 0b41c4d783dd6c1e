import { defineFeature } from '../../feature.js'
import { socialPanel } from './panel.js'
import { socialRoutes } from './routes.js'
import { SOCIAL_ERRORS } from './errors.js'
import { configSections } from './config.js'

/**
 * Social sign-in (better-auth's `socialProviders`): the 18 OAuth/OIDC providers, /sign-in/social,
 * the callback, /link-social with account linking, ID-token sign-in, provider tokens of an
 * account, and the Providers view.
 */
export const socialFeature = defineFeature({
  id: 'social',
  config: configSections,
  errors: SOCIAL_ERRORS,
  routes: socialRoutes,
  panel: socialPanel,
})
