import { unsignValue } from '../../crypto/sign.js'
import { serializeCookie, signedCookieValue } from '../../http/cookies.js'
import type { RouteContext } from '../../http/route.js'

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

/** better-auth's `isMultiSessionCookie`. */
export const isMultiSessionCookie = (name: string): boolean => name.includes('_multi-')

export const multiCookieName = (rc: AnyRouteContext, token: string): string => `${rc.names.sessionToken}_multi-${token.toLowerCase()}`

/** The request's device-session cookies whose signature holds: cookie name → session token. */
export function deviceCookies(rc: AnyRouteContext): Map<string, string> {
  const out = new Map<string, string>()
  for (const [name, value] of rc.cookies) {
    if (!isMultiSessionCookie(name)) continue
    const token = unsignValue(rc.ctx.secret, value)
    if (token) out.set(name, token)
  }
  return out
}

/** The token a device cookie holds, if the request carries it validly signed. */
export function deviceCookieToken(rc: AnyRouteContext, name: string): string | null {
  const value = rc.cookies.get(name)
  return value === undefined ? null : unsignValue(rc.ctx.secret, value)
}

/** Set with the session cookie's attributes and lifetime, as better-auth sets it. */
export function setDeviceCookie(rc: AnyRouteContext, token: string): void {
  const value = signedCookieValue(rc.ctx.secret, token)
  rc.response.headers.append(
    'set-cookie',
    serializeCookie(multiCookieName(rc, token), value, rc.names.secure, rc.ctx.config().session.expiresIn),
  )
}

export function expireDeviceCookie(rc: AnyRouteContext, name: string): void {
  rc.response.headers.append('set-cookie', serializeCookie(name, '', rc.names.secure, 0))
}
