import type { GatehouseConfig } from '../config/schema.js'
import { hmacBase64Url, safeEqual, signValue, unsignValue } from '../crypto/sign.js'
import { APIError } from '../core/errors.js'

/** Cookie names and attributes exactly as better-auth writes them (reference §2). */
export interface CookieNames {
  sessionToken: string
  sessionData: string
  dontRemember: string
  adminSession: string
  secure: boolean
  /** The Domain attribute of every cookie (advanced.crossSubDomainCookies), else undefined (host-only). */
  domain: string | undefined
}

const namesCache = new WeakMap<GatehouseConfig, { baseURL: string; names: CookieNames }>()

/** The names for a configuration, computed once per configuration object (it is replaced on every change). */
export function cookieNames(config: GatehouseConfig, baseURL: string): CookieNames {
  const cached = namesCache.get(config)
  if (cached?.baseURL === baseURL) return cached.names
  const names = computeCookieNames(config, baseURL)
  namesCache.set(config, { baseURL, names })
  return names
}

function computeCookieNames(config: GatehouseConfig, baseURL: string): CookieNames {
  const secure = config.advanced.useSecureCookies ?? baseURL.startsWith('https://')
  const prefix = `${secure ? '__Secure-' : ''}${config.advanced.cookiePrefix}.`
  const cross = config.advanced.crossSubDomainCookies
  return {
    domain: cross.enabled ? cross.domain || new URL(baseURL).hostname : undefined,
    sessionToken: `${prefix}session_token`,
    sessionData: `${prefix}session_data`,
    dontRemember: `${prefix}dont_remember`,
    adminSession: `${prefix}admin_session`,
    secure,
  }
}

/**
 * The base URL's host must be the cookie domain or a name under it: a browser refuses a cookie whose
 * Domain does not cover the host that sets it, so every sign-in would end signed out (a silent
 * loop). Null when cross-subdomain cookies are off or have no domain of their own.
 */
export function cookieDomainIssue(config: GatehouseConfig, baseURL: string): { path: string; message: string } | null {
  const cross = config.advanced.crossSubDomainCookies
  if (!cross.enabled || !cross.domain) return null
  const domain = cross.domain.replace(/^\./, '').toLowerCase()
  let host: string
  try {
    host = new URL(baseURL).hostname.toLowerCase()
  } catch {
    return null
  }
  if (host === domain || host.endsWith(`.${domain}`)) return null
  return {
    path: 'advanced.crossSubDomainCookies.domain',
    message: `"${cross.domain}" does not cover the base URL's host "${host}" (browsers would drop every cookie: sign-in would never stick): serve Gatehouse under it (--base-url https://auth.${domain}) or set the domain to a parent of "${host}"`,
  }
}

/** `name=value; Max-Age=…; [Domain=…; ]Path=/; HttpOnly; [Secure; ]SameSite=Lax`, better-auth's attribute order. */
export function serializeCookie(name: string, value: string, secure: boolean, maxAge?: number, domain?: string): string {
  let out = `${name}=${value}`
  if (maxAge !== undefined) out += `; Max-Age=${Math.max(0, Math.floor(maxAge))}`
  if (domain) out += `; Domain=${domain}`
  out += '; Path=/; HttpOnly'
  if (secure) out += '; Secure'
  return `${out}; SameSite=Lax`
}

export function parseCookieHeader(header: string | null): Map<string, string> {
  const out = new Map<string, string>()
  if (!header) return out
  // Each `;`-separated part in place (no array of parts: every authenticated request parses one).
  const length = header.length
  let start = 0
  while (start <= length) {
    let end = header.indexOf(';', start)
    if (end === -1) end = length
    const eq = header.indexOf('=', start)
    // A part without `=`, or starting with it, is skipped.
    if (eq > start && eq < end) {
      const name = header.slice(start, eq).trim()
      if (!out.has(name)) out.set(name, header.slice(eq + 1, end).trim())
    }
    start = end + 1
  }
  return out
}

export const signedCookieValue = (secret: string, value: string): string => encodeURIComponent(signValue(secret, value))

/**
 * The session token a request carries, as better-auth with its bearer plugin reads it: a valid
 * `Authorization: Bearer` value (while `bearer.enabled`) stands in for the session cookie, in any
 * of the forms better-auth clients store (percent-encoded signed, decoded signed, or, unless
 * `requireSignature`, the raw 32-character token); else the signed session cookie.
 */
export function readSessionToken(
  secret: string,
  names: CookieNames,
  cookies: Map<string, string>,
  authorization: string | null,
  bearer: { enabled: boolean; requireSignature: boolean },
): string | null {
  if (authorization && bearer.enabled) {
    const token = bearerToken(secret, authorization, bearer.requireSignature)
    if (token) return token
  }
  const cookie = cookies.get(names.sessionToken)
  return cookie ? unsignValue(secret, cookie) : null
}

function bearerToken(secret: string, authorization: string, requireSignature: boolean): string | null {
  if (authorization.slice(0, 7).toLowerCase() !== 'bearer ') return null
  const bearer = authorization.slice(7).trim()
  if (!bearer) return null
  if (bearer.includes('.') || bearer.includes('%')) return unsignValue(secret, bearer)
  return !requireSignature && /^[A-Za-z0-9]{32}$/.test(bearer) ? bearer : null
}

/** Session-data cookie cache (SPEC §3): base64url JSON with an HMAC over its content. */
const COOKIE_CACHE_LIMIT = 4093

interface CachePayload {
  session: unknown
  expiresAt: number
  signature: string
}

/** What the signature covers (better-auth): the session data's fields spread beside expiresAt. */
const signedCacheBody = (data: unknown, expiresAt: number): string => JSON.stringify({ ...(data as Record<string, unknown>), expiresAt })

export function encodeSessionCache(secret: string, data: unknown, expiresAt: number): string {
  const body = signedCacheBody(data, expiresAt)
  const payload = { session: data, expiresAt, signature: hmacBase64Url(secret, body) }
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url')
  if (encoded.length > COOKIE_CACHE_LIMIT) {
    throw new APIError(500, 'SESSION_DATA_TOO_LARGE', 'Session data exceeds cookie size limit')
  }
  return encoded
}

/**
 * The cached get-session answer if the cookie is authentic and unexpired, else null. It is
 * returned to the client as is, so it stays in its JSON form.
 */
export function decodeSessionCache(secret: string, cookie: string, now: number): unknown {
  try {
    const payload = JSON.parse(Buffer.from(cookie, 'base64url').toString('utf8')) as CachePayload
    if (typeof payload?.signature !== 'string' || typeof payload.expiresAt !== 'number') return null
    if (typeof payload.session !== 'object' || payload.session === null) return null
    const expected = hmacBase64Url(secret, signedCacheBody(payload.session, payload.expiresAt))
    if (!safeEqual(expected, payload.signature) || payload.expiresAt <= now) return null
    return payload.session
  } catch {
    return null
  }
}
