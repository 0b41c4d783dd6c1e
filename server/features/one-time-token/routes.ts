import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { defineRoute } from '../../http/route.js'
import { publicSession, setSessionCookies } from '../../http/session.js'
import { oneTimeTokenError } from './errors.js'
import { generateOneTimeToken, verifyOneTimeToken } from './rules.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().oneTimeToken.enabled

/** better-auth's one-time-token endpoints. */
export const oneTimeTokenRoutes = [
  defineRoute({
    method: 'GET',
    path: '/one-time-token/generate',
    auth: 'session',
    enabled,
    handler: async ({ ctx, session }) => {
      // Every request through the HTTP API is a client request (better-auth's `c.request`).
      if (ctx.config().oneTimeToken.disableClientRequest) throw oneTimeTokenError(400, 'CLIENT_REQUESTS_DISABLED')
      return { token: await generateOneTimeToken(ctx, session) }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/one-time-token/verify',
    body: z.object({ token: z.string() }),
    enabled,
    handler: async (rc) => {
      const { found, expired } = await verifyOneTimeToken(rc.ctx, rc.body.token)
      // better-auth sets the cookie before it checks the expiry; its setSessionCookie honours dont_remember.
      if (!rc.ctx.config().oneTimeToken.disableSetSessionCookie) setSessionCookies(rc, found, { dontRemember: false })
      if (expired) throw oneTimeTokenError(400, 'SESSION_EXPIRED')
      return publicSession(found)
    },
  }),
]
