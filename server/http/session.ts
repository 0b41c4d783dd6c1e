import { type ResolvedSession, resolveCachedSession, resolveSession, type SessionWithUser } from '../core/sessions.js'
import { toPublicUser } from '../core/users.js'
import { noteImpersonation } from '../core/impersonation.js'
import { unsignValue } from '../crypto/sign.js'
import { encodeSessionCache, readSessionToken, serializeCookie, signedCookieValue } from './cookies.js'
import type { RouteContext } from './route.js'
import { hooksWith } from './feature-hooks.js'

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

/** The session as the wire shows it. */
export function publicSession(data: SessionWithUser) {
  return { session: data.session, user: toPublicUser(data.user) }
}

/**
 * The get-session answer serialised. Session lookups hand out the same object until the database
 * changes (server/core/session-cache.ts), so its JSON is kept with it: serialising six dates
 * costs more than the rest of the request.
 */
const serialized = new WeakMap<SessionWithUser, string>()
export function publicSessionJSON(data: SessionWithUser): string {
  let json = serialized.get(data)
  if (json === undefined) {
    json = JSON.stringify(publicSession(data))
    serialized.set(data, json)
  }
  return json
}

/** True when the request carries a validly signed dont_remember cookie (rememberMe was off). */
export function hasDontRemember(rc: AnyRouteContext): boolean {
  const raw = rc.cookies.get(rc.names.dontRemember)
  return raw !== undefined && unsignValue(rc.ctx.secret, raw) === 'true'
}

export function requestSessionToken(rc: AnyRouteContext): string | null {
  return readSessionToken(rc.ctx.secret, rc.names, rc.cookies, rc.request.headers.get('authorization'), rc.ctx.config().bearer)
}

function appendCookie(rc: AnyRouteContext, name: string, value: string, maxAge?: number): void {
  rc.response.headers.append('set-cookie', serializeCookie(name, value, rc.names.secure, maxAge, rc.names.domain))
}

/**
 * Sets the session cookie (plus dont_remember when rememberMe was off, plus the cookie cache when
 * enabled), as better-auth does after sign-in, sign-up and refresh.
 */
export function setSessionCookies(rc: AnyRouteContext, data: SessionWithUser, options: { dontRemember: boolean; maxAge?: number }): void {
  const { ctx, names } = rc
  const conf = ctx.config().session
  const signed = signedCookieValue(ctx.secret, data.session.token)
  appendCookie(rc, names.sessionToken, signed, options.dontRemember ? undefined : (options.maxAge ?? conf.expiresIn))
  if (options.dontRemember) appendCookie(rc, names.dontRemember, signedCookieValue(ctx.secret, 'true'))
  if (conf.cookieCache.enabled) setSessionCacheCookie(rc, publicSession(data))
  // better-auth's bearer plugin: lets apps that cannot keep cookies pick the token up.
  if (ctx.config().bearer.enabled) {
    rc.response.headers.set('set-auth-token', signed)
    rc.response.headers.set('access-control-expose-headers', 'set-auth-token')
  }
}

/** The session_data cookie cache holding a get-session answer for `cookieCache.maxAge` seconds. */
export function setSessionCacheCookie(rc: AnyRouteContext, answer: ReturnType<typeof publicSession>): void {
  const maxAge = rc.ctx.config().session.cookieCache.maxAge
  const cache = encodeSessionCache(rc.ctx.secret, answer, rc.ctx.clock.now() + maxAge * 1000)
  appendCookie(rc, rc.names.sessionData, cache, maxAge)
}

export function expireCookie(rc: AnyRouteContext, name: string): void {
  appendCookie(rc, name, '', 0)
}

export function clearSessionCookies(rc: AnyRouteContext): void {
  for (const name of [rc.names.sessionToken, rc.names.sessionData, rc.names.dontRemember]) expireCookie(rc, name)
}

/**
 * Resolves the request's session with the lifecycle rules, and keeps the cookies in step: an
 * expired or unknown session clears them, a refreshed one re-sets them with the remaining lifetime.
 * A feature may stand in for the cookie (an API key). Synchronous when nothing needs waiting for
 * (no feature claims the request and the session is a cache hit, active and not due a refresh):
 * the hot path of get-session then creates no promise. `await` it either way. An impersonation
 * session marks the request's meta, so its audit events name the impersonator (core/impersonation.ts).
 */
export function resolveRequestSession(
  rc: AnyRouteContext,
  options: { disableRefresh?: boolean } = {},
): ResolvedSession | Promise<ResolvedSession> {
  const resolved = fromFeatures(rc, options, 0)
  return resolved instanceof Promise ? resolved.then((settled) => noted(rc, settled)) : noted(rc, resolved)
}

function noted(rc: AnyRouteContext, resolved: ResolvedSession): ResolvedSession {
  if (resolved.status === 'active' && resolved.data.session.impersonatedBy) noteImpersonation(rc.meta, resolved.data)
  return resolved
}

function fromFeatures(
  rc: AnyRouteContext,
  options: { disableRefresh?: boolean },
  start: number,
): ResolvedSession | Promise<ResolvedSession> {
  const features = hooksWith(rc.ctx, 'requestSession')
  for (let i = start; i < features.length; i++) {
    const pending = features[i]?.requestSession(rc)
    if (pending === undefined) continue
    return pending.then((data) => (data ? { status: 'active', data, refreshed: false } : fromFeatures(rc, options, i + 1)))
  }
  const token = requestSessionToken(rc)
  if (!token) return { status: 'none' }
  const dontRemember = hasDontRemember(rc)
  const allowRefresh = !dontRemember && !options.disableRefresh
  return resolveCachedSession(rc.ctx, token, { allowRefresh }) ?? settleSession(rc, token, dontRemember, allowRefresh)
}

async function settleSession(rc: AnyRouteContext, token: string, dontRemember: boolean, allowRefresh: boolean): Promise<ResolvedSession> {
  const result = await resolveSession(rc.ctx, token, { allowRefresh })
  if (result.status === 'expired') clearSessionCookies(rc)
  if (result.status === 'active' && result.refreshed) {
    const remaining = (result.data.session.expiresAt.getTime() - rc.ctx.clock.now()) / 1000
    setSessionCookies(rc, result.data, { dontRemember, maxAge: remaining })
  }
  return result
}
