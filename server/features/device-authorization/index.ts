import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { DEVICE_AUTHORIZATION_ERRORS } from './errors.js'
import { deviceAuthorizationRoutes } from './routes.js'
import * as tables from './schema.js'

/**
 * Device authorization (RFC 8628; better-auth's deviceAuthorization plugin): a CLI, a TV or a kiosk
 * shows a user code, a person approves it from a signed-in browser (the hosted page /ui/device),
 * and the device's next poll gets a session token it uses as `Authorization: Bearer`.
 */
export const deviceAuthorizationFeature = defineFeature({
  id: 'device-authorization',
  config: configSections,
  tables,
  errors: DEVICE_AUTHORIZATION_ERRORS,
  routes: deviceAuthorizationRoutes,
})
