import { serializeCookie, signedCookieValue } from './cookies.js'
import type { RouteContext } from './route.js'
import { unsignValue } from '../crypto/sign.js'

type AnyRC = RouteContext<unknown, unknown, unknown>

/** better-auth's plugin cookie names: `${prefix}.two_factor`, `${prefix}.trust_device` (with `__Secure-` on https). */
export const pluginCookieName = (rc: AnyRC, name: string): string => rc.names.sessionToken.replace(/session_token$/, name)

export function setSignedCookie(rc: AnyRC, name: string, value: string, maxAge: number): void {
  rc.response.headers.append(
    'set-cookie',
    serializeCookie(pluginCookieName(rc, name), signedCookieValue(rc.ctx.secret, value), rc.names.secure, maxAge, rc.names.domain),
  )
}

export function readSignedCookie(rc: AnyRC, name: string): string | null {
  const raw = rc.cookies.get(pluginCookieName(rc, name))
  return raw ? unsignValue(rc.ctx.secret, raw) : null
}

export function expirePluginCookie(rc: AnyRC, name: string): void {
  rc.response.headers.append('set-cookie', serializeCookie(pluginCookieName(rc, name), '', rc.names.secure, 0, rc.names.domain))
}
