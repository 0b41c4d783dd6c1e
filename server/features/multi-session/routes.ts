import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { defineRoute } from '../../http/route.js'
import { clearSessionCookies, publicSession, setSessionCookies } from '../../http/session.js'
import { deviceCookies, deviceCookieToken, expireDeviceCookie, multiCookieName } from './cookies.js'
import { multiSessionError } from './errors.js'
import { endSessions, liveSessions, onePerUser } from './rules.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().multiSession.enabled

/** better-auth's multi-session endpoints. */
export const multiSessionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/multi-session/list-device-sessions',
    enabled,
    handler: async (rc) => {
      const tokens = [...deviceCookies(rc).values()]
      if (tokens.length === 0) return []
      return onePerUser(await liveSessions(rc.ctx, tokens)).map(publicSession)
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/multi-session/set-active',
    body: z.object({ sessionToken: z.string() }),
    enabled,
    handler: async (rc) => {
      const name = multiCookieName(rc, rc.body.sessionToken)
      const token = deviceCookieToken(rc, name)
      if (!token) throw multiSessionError(401, 'INVALID_SESSION_TOKEN')
      const [found] = await liveSessions(rc.ctx, [token])
      if (!found) {
        expireDeviceCookie(rc, name)
        throw multiSessionError(401, 'INVALID_SESSION_TOKEN')
      }
      setSessionCookies(rc, found, { dontRemember: false })
      return publicSession(found)
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/multi-session/revoke',
    body: z.object({ sessionToken: z.string() }),
    auth: 'session',
    enabled,
    handler: async (rc) => {
      const name = multiCookieName(rc, rc.body.sessionToken)
      const token = deviceCookieToken(rc, name)
      if (!token) throw multiSessionError(401, 'INVALID_SESSION_TOKEN')
      await endSessions(rc.ctx, [token])
      expireDeviceCookie(rc, name)
      if (rc.session.session.token !== token) return { status: true }
      // The active account was revoked: the next live one of the browser becomes active, else none.
      const [next] = await liveSessions(rc.ctx, [...deviceCookies(rc).values()])
      if (next) setSessionCookies(rc, next, { dontRemember: false })
      else clearSessionCookies(rc)
      return { status: true }
    },
  }),
]
