import type { IncomingMessage } from 'node:http'
import type { PanelCaller } from '../core/panel-caller.js'
import { runFromPanelPage } from '../core/panel-relay.js'
import { resolveSession } from '../core/sessions.js'
import { unsignValue } from '../crypto/sign.js'
import { ADMIN_STATEMENTS, hasPermission, isAdministrator } from '../features/admin/access.js'
import { enrolmentOverdue } from '../features/two-factor/service.js'
import { cookieNames, parseCookieHeader, readSessionToken, serializeCookie, signedCookieValue } from '../http/cookies.js'
import type { Gatehouse } from '../gatehouse.js'

/**
 * The browser panel's sign-in (issue 31 §1): an administrator signs in as a Gatehouse user,
 * through the API's own sign-in endpoints (server/http/sign-in.ts: ban, lockout, verified email,
 * second factor, audit), called in-process. The panel listener only relays them: it asks the
 * API for the path under its base path and keeps the API's cookies under names of its own
 * (`<panel cookie>.<API cookie name>`, Path=/, SameSite=Strict, HttpOnly), so the panel's session
 * is a Gatehouse session like any other (it survives a restart, expires as `session.*` says, and
 * is listed and revoked with the user's sessions), and never the session of an app the same
 * browser uses on the API's origin.
 */

/** The API endpoints the panel's sign-in page may call (relative to the API's base path). */
export const PANEL_AUTH_PATHS = new Set([
  '/sign-in/email',
  '/sign-in/username',
  '/two-factor/verify-totp',
  '/two-factor/send-otp',
  '/two-factor/verify-otp',
  '/two-factor/verify-backup-code',
  // The enrolment step (twoFactor.enforcement, issue 49 §10): what counts, and an authenticator app
  // or codes by email set up with the password just given (the app then confirmed by verify-totp).
  '/two-factor/status',
  '/two-factor/enable',
  '/sign-out',
  // Passkeys (issue 31): signing in with one, and an administrator adding one for the panel.
  '/passkey/generate-authenticate-options',
  '/passkey/verify-authentication',
  '/passkey/generate-register-options',
  '/passkey/verify-registration',
])

export interface RelayedAnswer {
  status: number
  body: string
  contentType: string
  /** Set-Cookie headers already renamed for the panel's origin. */
  setCookies: string[]
}

/** The panel's own cookies parsed from a request. */
export function requestCookies(req: IncomingMessage): Map<string, string> {
  const cookies = new Map<string, string>()
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0) cookies.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim())
  }
  return cookies
}

export function createPanelAuth(gatehouse: Gatehouse, cookiePrefix: () => string) {
  const ctx = gatehouse.ctx
  const prefix = () => `${cookiePrefix()}.`

  /** The API's cookies the browser holds for the panel, under their API names. */
  const apiCookieHeader = (req: IncomingMessage): string => {
    const p = prefix()
    const parts: string[] = []
    for (const [name, value] of requestCookies(req)) if (name.startsWith(p)) parts.push(`${name.slice(p.length)}=${value}`)
    return parts.join('; ')
  }

  /** An API Set-Cookie renamed for the panel: its own name, Path=/, SameSite=Strict, no Domain or Secure (loopback http). */
  const renamed = (setCookie: string): string => {
    const [pair = '', ...attributes] = setCookie.split(';').map((s) => s.trim())
    const kept = attributes.filter((a) => /^(max-age|expires)=/i.test(a))
    return [`${prefix()}${pair}`, ...kept, 'Path=/', 'HttpOnly', 'SameSite=Strict'].join('; ')
  }

  /** Asks the API for `path` (under its base path) as the browser's panel session. */
  async function relay(req: IncomingMessage, path: string, body: string | null): Promise<RelayedAnswer> {
    const config = ctx.config()
    const origin = new URL(ctx.baseURL).origin
    const headers = new Headers({
      // The panel listener checked the browser's origin already (same origin only): the API sees its own.
      origin,
      'user-agent': req.headers['user-agent'] ?? 'gatehouse-panel',
      accept: 'application/json',
    })
    const peer = req.socket.remoteAddress
    const forwarded = config.advanced.ipAddress.ipAddressHeaders[0]
    if (peer && forwarded) headers.set(forwarded, peer.replace(/^::ffff:/, ''))
    const cookie = apiCookieHeader(req)
    if (cookie) headers.set('cookie', cookie)
    if (body !== null) headers.set('content-type', 'application/json')
    const request = new Request(`${ctx.baseURL}${path}`, { method: body === null ? 'GET' : 'POST', headers, body })
    // The page the browser is on (its Host was checked: 127.0.0.1 or localhost at the panel's port):
    // a passkey ceremony relayed from it is bound to it (core/panel-relay.ts).
    const host = (req.headers.host ?? '').toLowerCase()
    const page = { origin: `http://${host}`, hostname: host.replace(/:\d+$/, '') }
    const response = await runFromPanelPage(page, () => gatehouse.app.fetch(request))
    return {
      status: response.status,
      body: await response.text(),
      contentType: response.headers.get('content-type') ?? 'application/json',
      setCookies: response.headers.getSetCookie().map(renamed),
    }
  }

  /**
   * The administrator the request's panel session belongs to, or why not: `none` (no session, or
   * an expired one: the sign-in page), `not-admin` (a signed-in user without any `admin.*`
   * permission), `enrolment-required` (an administrator whose second-factor enrolment is overdue,
   * twoFactor.enforcement: the panel, like every face, waits until they enrol on their account
   * page). Cookie refreshes of the session come back in `setCookies`.
   */
  async function sessionCaller(
    req: IncomingMessage,
  ): Promise<
    | { status: 'admin'; caller: PanelCaller; setCookies: string[] }
    | { status: 'none' | 'not-admin' | 'enrolment-required'; setCookies: string[] }
  > {
    // The session rules of get-session (expiry, refresh), in-process: an operation is not an API
    // request, so the panel's own calls never count against the API's rate limit.
    const config = ctx.config()
    const names = cookieNames(config, ctx.baseURL)
    const cookies = parseCookieHeader(apiCookieHeader(req))
    const token = readSessionToken(ctx.secret, names, cookies, null, { enabled: false, requireSignature: true })
    if (!token) return { status: 'none', setCookies: [] }
    const dontRemember = unsignValue(ctx.secret, cookies.get(names.dontRemember) ?? '') === 'true'
    const resolved = await resolveSession(ctx, token, { allowRefresh: !dontRemember })
    if (resolved.status !== 'active') {
      const cleared = [names.sessionToken, names.sessionData, names.dontRemember].map((n) => renamed(serializeCookie(n, '', false, 0)))
      return { status: 'none', setCookies: resolved.status === 'expired' ? cleared : [] }
    }
    const setCookies: string[] = []
    if (resolved.refreshed) {
      const remaining = (resolved.data.session.expiresAt.getTime() - ctx.clock.now()) / 1000
      setCookies.push(renamed(serializeCookie(names.sessionToken, signedCookieValue(ctx.secret, token), false, remaining)))
    }
    const row = resolved.data.user
    const subject = { userId: row.id, role: row.role }
    const access = isAdministrator(config, subject) ? 'full' : anyAdminPermission(config, subject) ? 'limited' : null
    if (!access) return { status: 'not-admin', setCookies }
    if (await enrolmentOverdue(ctx, row)) return { status: 'enrolment-required', setCookies }
    const meta = { ipAddress: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? null, userAgent: 'gatehouse-panel' }
    return { status: 'admin', caller: { kind: 'admin', user: row, access, meta }, setCookies }
  }

  return { relay, sessionCaller }
}

type Config = ReturnType<Gatehouse['ctx']['config']>

/** Whether a role grants any one of the `admin.*` permissions (a limited admin role, e.g. support). */
function anyAdminPermission(config: Config, subject: { userId: string; role: string | null }): boolean {
  return (Object.keys(ADMIN_STATEMENTS) as Array<keyof typeof ADMIN_STATEMENTS>).some((resource) =>
    ADMIN_STATEMENTS[resource].some((action) => hasPermission(config, subject, { [resource]: [action] })),
  )
}
