import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { flushAllowedCounts } from './counts.js'
import { FORWARD_AUTH_ERRORS } from './errors.js'
import { forwardAuthPanel } from './panel.js'
import { forwardAuthRoutes } from './routes.js'
import { rulesNamedGroups, rulesNamedRoles } from './rules.js'
import * as tables from './schema.js'
import { forwardAuthMetrics } from './metrics.js'

/** How often allowed answers gathered in memory are added to forwardAuthCount. */
const FLUSH_MS = 60_000

/**
 * Forward auth (issue 28): nginx `auth_request`, Caddy `forward_auth` and Traefik `ForwardAuth` ask
 * Gatehouse whether a request to a protected app may pass, with the same sessions, rules and second
 * factors as everything else (docs/FORWARD-AUTH.md).
 */
export const forwardAuthFeature = defineFeature({
  id: 'forward-auth',
  config: configSections,
  tables,
  errors: FORWARD_AUTH_ERRORS,
  metrics: forwardAuthMetrics,
  routes: forwardAuthRoutes,
  panel: forwardAuthPanel,
  namedGroups: (ctx) => rulesNamedGroups(ctx.config().forwardAuth.rules),
  namedRoles: (ctx) => rulesNamedRoles(ctx.config().forwardAuth.rules),
  start({ ctx, logger }) {
    const flush = () =>
      flushAllowedCounts(ctx).catch((error: unknown) => logger.warn(`forward auth: counts not written (${(error as Error).message})`))
    const timer = setInterval(flush, FLUSH_MS)
    timer.unref()
    return async () => {
      clearInterval(timer)
      await flush()
    }
  },
})
