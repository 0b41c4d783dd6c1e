import type { AuthContext } from '../../core/context.js'
import { toPublicUser } from '../../core/users.js'
import { defineRoute, type Route, TextBody } from '../../http/route.js'
import { jwksJSON, signSessionToken } from './keys.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().jwt.enabled

/** better-auth's jwt plugin endpoints: `GET /token` and `GET /jwks`. */
export const jwtRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/token',
    auth: 'session',
    enabled,
    handler: async ({ ctx, session, response }) => {
      response.headers.set('cache-control', 'no-store')
      return { token: await signSessionToken(ctx, { session: session.session, user: toPublicUser(session.user) }) }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/jwks',
    enabled,
    handler: async ({ ctx, response }) => {
      // Verifiers may cache the set; a rotated key stays published for the grace period, which
      // is far longer than this, so a cached set never lacks a key that still signs tokens in use.
      response.headers.set('cache-control', `public, max-age=${ctx.config().jwt.jwks.cacheMaxAge}`)
      return new TextBody(await jwksJSON(ctx), 'application/json')
    },
  }),
]
