import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { defineRoute } from '../../http/route.js'
import { connectedApps, revokeConsent } from './consent.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().oidcProvider.enabled

/** The signed-in person's connected applications (the hosted "Connected apps" page calls these). */
export const oidcProviderRoutes = [
  defineRoute({
    method: 'GET',
    path: '/oidc/connected-apps',
    auth: 'session',
    enabled,
    handler: async ({ ctx, session, response }) => {
      response.headers.set('cache-control', 'no-store')
      return { apps: await connectedApps(ctx, session.user.id) }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/oidc/connected-apps/revoke',
    auth: 'session',
    enabled,
    body: z.object({ clientId: z.string().min(1).max(200) }),
    handler: async ({ ctx, session, body, meta }) => {
      await revokeConsent(ctx, session.user.id, body.clientId, { via: 'account', actorUserId: session.user.id, meta })
      return { success: true }
    },
  }),
]
