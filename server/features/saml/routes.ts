import type { AuthContext } from '../../core/context.js'
import { defineRoute } from '../../http/route.js'
import { samlProtocol } from './lazy.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().saml.enabled

/** The SAML applications the signed-in person may open (the hosted "Connected apps" page lists them). */
export const samlRoutes = [
  defineRoute({
    method: 'GET',
    path: '/saml/apps',
    auth: 'session',
    enabled,
    handler: async ({ ctx, session, response }) => {
      response.headers.set('cache-control', 'no-store')
      const { appsFor } = await samlProtocol()
      return { apps: await appsFor(ctx, session.user) }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/saml/session-apps',
    auth: 'session',
    enabled,
    handler: async ({ ctx, session, response }) => {
      response.headers.set('cache-control', 'no-store')
      const { sessionAppCount } = await samlProtocol()
      return { count: await sessionAppCount(ctx, session.session.id), logoutPath: '/saml/logout' }
    },
  }),
]
