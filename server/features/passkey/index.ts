import { defineFeature } from '../../feature.js'
import { passkeyPanel } from './panel.js'
import { passkeyRoutes } from './routes.js'
import { PASSKEY_ERRORS } from './errors.js'
import * as tables from './schema.js'
import { passkeyConfig } from './config.js'

/** @better-auth/passkey: WebAuthn registration and discoverable sign-in on @simplewebauthn/server. */
export const passkeyFeature = defineFeature({
  id: 'passkey',
  config: { passkey: passkeyConfig },
  tables,
  errors: PASSKEY_ERRORS,
  routes: passkeyRoutes,
  panel: passkeyPanel,
})
