import { defineFeature } from '../../feature.js'
import { passkeyPanel } from './panel.js'
import { passkeyRoutes } from './routes.js'
import { PASSKEY_ERRORS } from './errors.js'
import * as tables from './schema.js'
import { configSections } from './config.js'

/** @better-auth/passkey: WebAuthn registration and discoverable sign-in on @simplewebauthn/server. */
export const passkeyFeature = defineFeature({
  id: 'passkey',
  config: configSections,
  tables,
  errors: PASSKEY_ERRORS,
  routes: passkeyRoutes,
  // A passkey sign-in is a sign-in: the strict rule of /sign-in (better-auth's passkey plugin
  // declares none, so there it gets the default 100 per 10 s; listed in README's compatibility table).
  rateLimit: [{ pathMatcher: (path) => path === '/passkey/verify-authentication', rule: (ctx) => ctx.config().rateLimit.strict }],
  panel: passkeyPanel,
})
