import { z } from 'zod'
import {
  listUserSessions,
  revokeAllSessions,
  revokeOtherSessions,
  revokeOwnSession,
  findSessionByToken,
  signOut,
  type ResolvedSession,
} from '../../core/sessions.js'
import type { SessionAnswer } from '../feature-hooks.js'
import { decodeSessionCache } from '../cookies.js'
import { HTML_SECURITY_HEADERS, renderErrorPage } from '../error-page.js'
import { defineRoute, TextBody } from '../route.js'
import {
  clearSessionCookies,
  expireCookie,
  publicSession,
  publicSessionJSON,
  requestSessionToken,
  resolveRequestSession,
  setSessionCacheCookie,
} from '../session.js'
import { hooksOf, hooksWith } from '../feature-hooks.js'
import { packageVersion } from '../../version.js'

/** Read once: the package.json of the running build. */
const RELEASE = packageVersion()

const flag = z
  .union([z.boolean(), z.enum(['true', 'false'])])
  .optional()
  .transform((v) => v === true || v === 'true')

export const coreRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ok',
    // better-auth answers {"ok":true}; the release's version beside it (docs/RELEASING.md), which clients ignore.
    handler: () => ({ ok: true, version: RELEASE }),
  }),

  defineRoute({
    method: 'GET',
    path: '/error',
    query: z.looseObject({ error: z.string().optional(), error_description: z.string().optional() }),
    handler: ({ query, response }) => {
      for (const [name, value] of Object.entries(HTML_SECURITY_HEADERS)) response.headers.set(name, value)
      return new TextBody(renderErrorPage(query.error || 'Unknown', query.error_description), 'text/html; charset=utf-8')
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/sign-out',
    handler: async (rc) => {
      const token = requestSessionToken(rc)
      const current = token ? await findSessionByToken(rc.ctx, token) : null
      if (current) await signOut(rc.ctx, current, rc.meta)
      for (const feature of hooksOf(rc.ctx)) await feature.signingOut?.(rc)
      clearSessionCookies(rc)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/get-session',
    // Apps poll it: answered from node:http without h3's router when asked without a query.
    direct: true,
    query: z.looseObject({ disableCookieCache: flag, disableRefresh: flag }),
    // Not async: on a session-cache hit nothing is awaited and no promise is made (server/http/session.ts).
    handler: (rc) => {
      const { ctx, names, query } = rc
      rc.response.headers.set('cache-control', 'no-store')
      // Feature additions to an answer carrying a session (jwt: the set-auth-jwt header). A
      // promise only when a feature has work to wait for: with none, the answer awaits nothing.
      const answered = (answer: SessionAnswer): Promise<void> | undefined => {
        let chain: Promise<void> | undefined
        for (const feature of hooksWith(ctx, 'sessionAnswered')) {
          if (chain) chain = chain.then(() => feature.sessionAnswered(ctx, answer, rc.response.headers))
          else chain = feature.sessionAnswered(ctx, answer, rc.response.headers) || undefined
        }
        return chain
      }
      const cacheConf = ctx.config().session.cookieCache
      const cachedCookie = rc.cookies.get(names.sessionData)
      if (cachedCookie !== undefined) {
        const cached = cacheConf.enabled && !query.disableCookieCache ? decodeSessionCache(ctx.secret, cachedCookie, ctx.clock.now()) : null
        if (cached) return answered(cached as SessionAnswer)?.then(() => cached) ?? cached
        expireCookie(rc, names.sessionData)
      }
      const answer = (resolved: ResolvedSession) => {
        if (resolved.status !== 'active') return null
        // A refresh already re-issued the cache with the new cookies.
        if (cacheConf.enabled && !resolved.refreshed) setSessionCacheCookie(rc, publicSession(resolved.data))
        const body = new TextBody(publicSessionJSON(resolved.data), 'application/json')
        const featuresAdding = answered(resolved.data)
        if (featuresAdding) return featuresAdding.then(() => body)
        // A cache hit that no feature adds to is the same answer while that session still is; one
        // that sets or expires a cookie is never replayed (server/http/app.ts).
        if (resolved.still) rc.replayWhile = resolved.still
        return body
      }
      const resolved = resolveRequestSession(rc, { disableRefresh: query.disableRefresh })
      return resolved instanceof Promise ? resolved.then(answer) : answer(resolved)
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/list-sessions',
    auth: 'session',
    handler: async ({ ctx, session }) => await listUserSessions(ctx, session.user.id),
  }),

  defineRoute({
    method: 'POST',
    path: '/revoke-session',
    auth: 'session',
    body: z.object({ token: z.string().min(1) }),
    handler: async (rc) => {
      const { ctx, session, body, meta } = rc
      await revokeOwnSession(ctx, session.user.id, body.token, meta)
      // better-auth 1.7: revoking the session the request runs on signs this client out too.
      if (body.token === session.session.token) clearSessionCookies(rc)
      return { status: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/revoke-sessions',
    auth: 'session',
    handler: async (rc) => {
      await revokeAllSessions(rc.ctx, rc.session.user.id, rc.meta)
      clearSessionCookies(rc)
      return { status: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/revoke-other-sessions',
    auth: 'session',
    handler: async ({ ctx, session, meta }) => {
      await revokeOtherSessions(ctx, session, meta)
      return { status: true }
    },
  }),
]
