import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { ONE_TIME_TOKEN_ERR } from './errors.js'
import { oneTimeTokenRoutes } from './routes.js'

/** One-time tokens (better-auth's one-time-token plugin): a session handed over once through a short-lived token. */
export const oneTimeTokenFeature = defineFeature({
  id: 'one-time-token',
  config: configSections,
  errors: ONE_TIME_TOKEN_ERR,
  routes: oneTimeTokenRoutes,
})
