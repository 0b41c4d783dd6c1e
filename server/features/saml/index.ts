import type { IncomingMessage, ServerResponse } from 'node:http'
import { defineFeature } from '../../feature.js'
import type { RouteContext } from '../../http/route.js'
import type { Logger } from '../../log.js'
import { configSections } from './config.js'
import { samlProtocol } from './lazy.js'
import { SAML_ERRORS } from './errors.js'
import { samlPanel } from './panel.js'
import { samlRoutes } from './routes.js'
import * as tables from './schema.js'
import { serviceProvidersNamedGroups } from './service-providers.js'
import { SAML_ASSERTIONS, samlMetrics } from './metrics.js'

/**
 * Gatehouse as a SAML 2.0 identity provider (`saml.enabled`). Its protocol code (xmldom, xml-crypto,
 * the flows) is loaded at the first SAML request: a server with SAML off never loads it.
 */

let logger: Logger = { info() {}, warn: (m) => console.warn(m), error: (m, e) => console.error(m, e ?? '') }
async function handle(rc: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  await (await samlProtocol()).handleSaml(rc, req, res, { logger, onAssertion: (outcome) => rc.ctx.events.count(SAML_ASSERTIONS, outcome) })
}

export const samlFeature = defineFeature({
  id: 'saml',
  config: configSections,
  tables,
  errors: SAML_ERRORS,
  metrics: samlMetrics,
  routes: samlRoutes,
  panel: samlPanel,
  namedGroups: serviceProvidersNamedGroups,
  mount: {
    handles: (ctx, path) => ctx.config().saml.enabled && path.startsWith('/saml/'),
    handle,
  },
  start: (runtime) => {
    logger = runtime.logger
    if (!runtime.ctx.config().saml.enabled) return undefined
    // Answered or abandoned sign-in requests are removed every minute once expired (10 minutes after
    // they came; a request's ID stays refused as a replay until then). /saml/sso sweeps too.
    const timer = setInterval(() => {
      runtime.ctx.storage
        .exclusive('saml-cleanup', async () => {
          const { deleteExpiredRequests } = await samlProtocol()
          await deleteExpiredRequests(runtime.ctx, new Date(runtime.ctx.clock.now()))
          runtime.ctx.events.jobSucceeded('saml-cleanup')
        })
        .catch((error) => runtime.logger.error('SAML cleanup failed:', error))
    }, 60_000)
    timer.unref()
    return () => clearInterval(timer)
  },
})
