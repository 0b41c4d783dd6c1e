import { defineFeature } from '../../feature.js'
import { keyFromHeaders, sessionFromApiKey } from './keys.js'
import { apiKeyPanel } from './panel.js'
import { apiKeyRoutes } from './routes.js'
import { flushUsage } from './store.js'
import { API_KEY_ERRORS } from './errors.js'
import * as tables from './schema.js'
import { configSections } from './config.js'

/** API keys (@better-auth/api-key's wire): services call with a key instead of a session. */
export const apiKeyFeature = defineFeature({
  id: 'api-key',
  config: configSections,
  tables,
  errors: API_KEY_ERRORS,
  routes: apiKeyRoutes,
  panel: apiKeyPanel,
  // Counters kept in memory are written when the server stops.
  start:
    ({ ctx }) =>
    async () =>
      await flushUsage(ctx),
  // Nothing to do (no promise, no client address worked out) unless a key header is present.
  requestSession: (rc) => {
    const c = rc.ctx.config().apiKey
    if (!c.enabled || !c.enableSessionForAPIKeys || !keyFromHeaders(c, rc.request.headers)) return undefined
    return sessionFromApiKey(rc.ctx, rc.request.headers, rc.meta)
  },
})
