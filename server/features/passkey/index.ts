import { defineFeature } from '../../feature.js'
import { passkeyPanel } from './panel.js'
import { passkeyRoutes } from './routes.js'

/** @better-auth/passkey: WebAuthn registration and discoverable sign-in on @simplewebauthn/server. */
export const passkeyFeature = defineFeature({
  id: 'passkey',
  routes: passkeyRoutes,
  panel: passkeyPanel,
})
