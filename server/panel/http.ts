import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, extname, join, normalize, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PanelCaller } from '../core/panel-caller.js'
import { createPanelAuth, PANEL_AUTH_PATHS } from './auth.js'
import { panelMayDownload } from './permissions.js'
import type { PanelService } from './service.js'

/**
 * The browser control panel: the renderer and the panel operations on a listener of its own,
 * bound to 127.0.0.1 only. An administrator signs in as a Gatehouse user (server/panel/auth.ts:
 * the API's sign-in endpoints, second factor included, relayed under /panel/auth/); the
 * operations run as them. The token printed at start-up is the bootstrap and recovery door
 * (no administrator yet, or none can sign in): opening the printed URL exchanges it for an
 * HttpOnly, SameSite=Strict cookie valid until the server stops, and the panel then acts as
 * "the recovery link". The renderer's files are public (they hold no data): only the
 * operations and downloads need a caller, so a view's chunk loads even after a session ended.
 */

export const DEFAULT_PANEL_PORT = 4281
const API_PREFIX = '/panel/api/'
const AUTH_PREFIX = '/panel/auth/'
const MAX_BODY = 1024 * 1024

/** The same policy as renderer/index.html's meta tag; Mantine injects <style> elements. */
export const PANEL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
}

/** out/renderer next to the project root (where `npm run build` puts the renderer). */
export const defaultAssetsDir = (): string => resolve(dirname(fileURLToPath(import.meta.url)), '../../out/renderer')

export interface PanelServerOptions {
  service: PanelService
  /** 0 picks a free port. */
  port?: number
  assetsDir?: string
  /** Fixed token (tests); default: 32 random bytes. */
  token?: string
  /** Called (once at a time) when the renderer's files are missing; resolves true once they exist. */
  prepareAssets?: () => Promise<boolean>
}

export interface PanelServer {
  /** http://127.0.0.1:PORT */
  origin: string
  /**
   * http://localhost:PORT: the address to sign in at (the one printed). A page on an IP address
   * cannot use passkeys (an IP is never a WebAuthn relying-party id); `localhost` can, over http.
   */
  localOrigin: string
  port: number
  token: string
  /** The URL to open: it carries the token once and logs the browser in. */
  loginURL: string
  close(): Promise<void>
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()

/** decodeURIComponent, or null for malformed percent-encoding (a 4xx, never a 500). */
const decoded = (value: string): string | null => {
  try {
    return decodeURIComponent(value)
  } catch {
    return null
  }
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2933}
h1{font-size:1.4rem}code{background:#f1f3f5;padding:.1rem .3rem;border-radius:4px}</style></head>
<body><h1>${title}</h1>${body}</body></html>`
}

const REFUSED = page(
  'Gatehouse control panel: recovery link expired',
  '<p>This recovery link is not valid (any more): the server prints a new one each time it starts ' +
    '(<code>http://127.0.0.1:PORT/?token=…</code>).</p><p>Administrators sign in with their own account at ' +
    '<a href="/">the panel</a>; use the recovery link only to create the first administrator or when none can sign in.</p>',
)

const NOT_BUILT = page(
  'Gatehouse control panel is not built',
  '<p>The panel&rsquo;s files are missing. Run <code>npm run build</code> once, then reload this page.</p>',
)

function readJsonBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        reject(Object.assign(new Error('body too large'), { status: 413 }))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      if (!text) return resolveBody({})
      try {
        resolveBody(JSON.parse(text))
      } catch {
        reject(Object.assign(new Error('invalid JSON'), { status: 400 }))
      }
    })
    req.on('error', reject)
  })
}

/** Why a request has no caller: nobody signed in (401), or a user who is no administrator, or has no second factor yet (403). */
type Refusal = 'none' | 'not-admin' | 'enrolment-required' | null

/**
 * What the request handlers share: the options, the recovery token, and where the panel listens
 * (port, cookie name, Host names and origins are set once the listening port is known).
 */
interface PanelSite {
  options: PanelServerOptions
  token: string
  tokenMatches(candidate: string | undefined | null): boolean
  port: number
  cookieName: string
  allowedHosts: Set<string>
  ownOrigins: Set<string>
}

/** A constant-time check of a presented recovery token against the panel's (compared as digests, so lengths leak nothing). */
function tokenChecker(token: string): (candidate: string | undefined | null) => boolean {
  const tokenDigest = digest(token)
  return (candidate) =>
    typeof candidate === 'string' && candidate.length > 0 && candidate.length < 512 && timingSafeEqual(digest(candidate), tokenDigest)
}

/** The caller of a request authenticated by the recovery token (no user: the link `gatehouse panel` printed). */
const recoveryCaller = (req: IncomingMessage): PanelCaller => ({
  kind: 'recovery',
  meta: { ipAddress: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? null, userAgent: 'gatehouse-panel' },
})

const refusalBody = (refusal: Refusal) =>
  refusal === 'not-admin'
    ? { code: 'PANEL_NOT_ADMIN', message: 'This account is not an administrator' }
    : refusal === 'enrolment-required'
      ? { code: 'TWO_FACTOR_ENROLLMENT_REQUIRED', message: 'Set up a second factor on your account page to use the control panel' }
      : { code: 'PANEL_SIGN_IN_REQUIRED', message: 'Sign in to the control panel' }

const refusalStatus = (refusal: Refusal): number => (refusal === 'not-admin' || refusal === 'enrolment-required' ? 403 : 401)

/** Whether the request carries the recovery token, as a Bearer token or in the panel's cookie. */
function hasRecoveryToken(site: PanelSite, req: IncomingMessage): boolean {
  const auth = req.headers.authorization
  if (auth?.startsWith('Bearer ') && site.tokenMatches(auth.slice(7).trim())) return true
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === site.cookieName && site.tokenMatches(decoded(part.slice(eq + 1).trim()))) {
      return true
    }
  }
  return false
}

/** Requests from other sites: refused even with the cookie (it is SameSite=Strict anyway). */
function isForeign(site: PanelSite, req: IncomingMessage): boolean {
  const origin = req.headers.origin
  const fetchSite = req.headers['sec-fetch-site']
  return Boolean((origin && !site.ownOrigins.has(origin)) || (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none'))
}

/** Every answer carries the panel's CSP and the other hardening headers, and is never cached unless `extra` says so. */
function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) {
  res.writeHead(status, {
    'content-type': type,
    'content-security-policy': PANEL_CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
    ...extra,
  })
  res.end(body)
}

function sendJson(res: ServerResponse, status: number, value: unknown, setCookies: string[] = []) {
  if (setCookies.length) res.setHeader('set-cookie', setCookies)
  send(res, status, 'application/json', JSON.stringify(value))
}

/** The 400 or 413 answer to a body readJsonBody refused. */
function sendBodyRefusal(res: ServerResponse, e: unknown) {
  const status = (e as { status?: number }).status ?? 400
  return sendJson(res, status, { code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'INVALID_JSON', message: (e as Error).message })
}

/**
 * The built renderer's files (index.html for any other path), built first by `prepareAssets` when
 * missing (one build at a time); hashed assets are cached for good, the rest never.
 */
function staticServer(assetsDir: string, prepareAssets: PanelServerOptions['prepareAssets']) {
  let preparing: Promise<boolean> | null = null
  return async (res: ServerResponse, pathname: string) => {
    const index = join(assetsDir, 'index.html')
    if (!existsSync(index) && prepareAssets) {
      preparing ??= prepareAssets().finally(() => {
        preparing = null
      })
      await preparing
    }
    if (!existsSync(index)) return send(res, 503, 'text/html; charset=utf-8', NOT_BUILT)
    let file = index
    const path = decoded(pathname)
    if (path && path !== '/' && !path.includes('\0')) {
      const candidate = normalize(join(assetsDir, path))
      if (candidate.startsWith(assetsDir + sep) && existsSync(candidate) && statSync(candidate).isFile()) file = candidate
    }
    const hashed = file.includes(`${sep}assets${sep}`)
    send(res, 200, TYPES[extname(file)] ?? 'application/octet-stream', readFileSync(file), {
      'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-store',
    })
  }
}

/** The sign-in page's calls, relayed to the API's own endpoints (server/panel/auth.ts). */
async function relaySignIn(site: PanelSite, auth: PanelAuth, req: IncomingMessage, res: ServerResponse, url: URL) {
  const path = `/${url.pathname.slice(AUTH_PREFIX.length)}`
  if (!PANEL_AUTH_PATHS.has(path)) return sendJson(res, 404, { code: 'NOT_FOUND', message: 'Not found' })
  if (isForeign(site, req)) return sendJson(res, 403, { code: 'INVALID_ORIGIN', message: 'Invalid origin' })
  let body: string | null = null
  if (req.method === 'POST') {
    try {
      body = JSON.stringify(await readJsonBody(req))
    } catch (e) {
      return sendBodyRefusal(res, e)
    }
  } else if (req.method !== 'GET') return sendJson(res, 405, { code: 'METHOD_NOT_ALLOWED', message: 'Use GET or POST' })
  const answer = await auth.relay(req, path, body)
  // Signing out also forgets the recovery link's cookie.
  const extra = path === '/sign-out' ? [`${site.cookieName}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict`] : []
  res.setHeader('set-cookie', [...answer.setCookies, ...extra])
  return send(res, answer.status, answer.contentType, answer.body)
}

/** The panel's operations: a same-origin JSON POST from an admin (or the recovery token), dispatched to the service. */
async function answerOperation(site: PanelSite, callerOf: CallerOf, req: IncomingMessage, res: ServerResponse, url: URL) {
  if (req.method !== 'POST') return sendJson(res, 405, { code: 'METHOD_NOT_ALLOWED', message: 'Use POST' })
  if (isForeign(site, req)) return sendJson(res, 403, { code: 'INVALID_ORIGIN', message: 'Invalid origin' })
  const { caller, refusal, setCookies } = await callerOf(req)
  if (!caller) return sendJson(res, refusalStatus(refusal), refusalBody(refusal), setCookies)
  if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
    return sendJson(res, 415, { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send application/json' })
  }
  let input: unknown
  try {
    input = await readJsonBody(req)
  } catch (e) {
    return sendBodyRefusal(res, e)
  }
  const op = decoded(url.pathname.slice(API_PREFIX.length)) ?? ''
  const result = await site.options.service.dispatch(op, input, caller)
  return result.ok ? sendJson(res, 200, result.data, setCookies) : sendJson(res, result.error.status, result.error, setCookies)
}

/** The recovery link (`?token=`): sets the cookie and redirects to the same page without the token in its address. */
function acceptRecoveryLink(site: PanelSite, res: ServerResponse, url: URL) {
  if (!site.tokenMatches(url.searchParams.get('token'))) return send(res, 401, 'text/html; charset=utf-8', REFUSED)
  url.searchParams.delete('token')
  const rest = url.searchParams.toString()
  return send(res, 303, 'text/plain; charset=utf-8', '', {
    location: `${url.pathname}${rest ? `?${rest}` : ''}`,
    'set-cookie': `${site.cookieName}=${encodeURIComponent(site.token)}; Path=/; HttpOnly; SameSite=Strict`,
  })
}

/** A file the service offers for download (an export, a backup), to an administrator only, streamed from disk. */
async function sendDownload(site: PanelSite, callerOf: CallerOf, req: IncomingMessage, res: ServerResponse, kind: string, name: string) {
  const { caller, refusal } = await callerOf(req)
  if (!caller) return sendJson(res, refusalStatus(refusal), refusalBody(refusal))
  if (!panelMayDownload(caller)) {
    return sendJson(res, 403, { code: 'PANEL_FORBIDDEN', message: 'Downloads need an administrator' })
  }
  const found = site.options.service.download(kind, decoded(name) ?? '')
  if (!found) return sendJson(res, 404, { code: 'NOT_FOUND', message: 'No such file' })
  res.writeHead(200, {
    'content-type': found.type,
    'content-length': String(statSync(found.file).size),
    'content-disposition': `attachment; filename="${found.filename.replace(/[^\w.-]/g, '_')}"`,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  })
  if (req.method === 'HEAD') return res.end()
  createReadStream(found.file).pipe(res)
}

type CallerOf = (req: IncomingMessage) => Promise<{ caller: PanelCaller | null; refusal: Refusal; setCookies: string[] }>
type PanelAuth = ReturnType<typeof createPanelAuth>

/** The panel's request handler: Host check, then the sign-in options, the sign-in relay, the operations, the recovery link, downloads, else the renderer's files. */
function panelHandler(site: PanelSite) {
  const { options } = site
  const auth = createPanelAuth(options.service.env.gatehouse, () => site.cookieName)
  const serveStatic = staticServer(resolve(options.assetsDir ?? defaultAssetsDir()), options.prepareAssets)
  /**
   * Who the request comes from: the admin of its panel session, else the recovery token (cookie
   * or Bearer), else nobody (401: the sign-in page) or a user who is no administrator (403).
   */
  const callerOf: CallerOf = async (req) => {
    const found = await auth.sessionCaller(req)
    if (found.status === 'admin') return { caller: found.caller, refusal: null, setCookies: found.setCookies }
    if (hasRecoveryToken(site, req)) return { caller: recoveryCaller(req), refusal: null, setCookies: found.setCookies }
    return { caller: null, refusal: found.status, setCookies: found.setCookies }
  }

  return async (req: IncomingMessage, res: ServerResponse) => {
    // DNS rebinding: a page on another name that resolves to 127.0.0.1 is refused.
    if (!site.allowedHosts.has((req.headers.host ?? '').toLowerCase())) {
      return send(res, 421, 'text/plain; charset=utf-8', 'Misdirected request')
    }
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`)
    if (url.pathname === '/panel/sign-in-options') {
      // What the sign-in page offers (public: no data), and where passkeys work.
      const config = options.service.env.gatehouse.ctx.config()
      return sendJson(res, 200, { passkey: config.passkey.enabled, passkeyOrigin: `http://localhost:${site.port}` })
    }
    if (url.pathname.startsWith(AUTH_PREFIX)) return relaySignIn(site, auth, req, res, url)
    if (url.pathname.startsWith(API_PREFIX)) return answerOperation(site, callerOf, req, res, url)
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed')
    if (url.searchParams.has('token')) return acceptRecoveryLink(site, res, url)
    const download = /^\/panel\/download\/([a-z]+)\/([^/]+)$/.exec(url.pathname)
    if (download) return sendDownload(site, callerOf, req, res, download[1] as string, download[2] as string)
    return serveStatic(res, url.pathname)
  }
}

/**
 * Listens on 127.0.0.1 (the given port, 0 for any) and on ::1 at the same port where it can.
 * Loopback only: the panel is never reachable from the LAN.
 */
async function listenOnLoopback(onRequest: (req: IncomingMessage, res: ServerResponse) => void, wanted: number) {
  const server = createServer(onRequest)
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject)
    server.listen(wanted, '127.0.0.1', () => {
      server.off('error', reject)
      resolveListen()
    })
  })
  const port = (server.address() as AddressInfo).port
  // `localhost` may resolve to ::1 first: the same panel on IPv6 loopback too, where there is one
  // (best effort: without IPv6, or with the port taken there, browsers fall back to 127.0.0.1).
  const v6 = createServer(onRequest)
  const v6Listening = await new Promise<boolean>((resolveListen) => {
    v6.once('error', () => resolveListen(false))
    v6.listen(port, '::1', () => resolveListen(true))
  })
  const close = () =>
    new Promise<void>((resolveClose) => {
      let open = v6Listening ? 2 : 1
      const closed = () => {
        if (--open === 0) resolveClose()
      }
      server.close(closed)
      server.closeAllConnections()
      if (v6Listening) {
        v6.close(closed)
        v6.closeAllConnections()
      }
    })
  return { port, close }
}

export async function startPanelServer(options: PanelServerOptions): Promise<PanelServer> {
  const token = options.token ?? randomBytes(32).toString('base64url')
  const wanted = options.port ?? DEFAULT_PANEL_PORT
  const site: PanelSite = {
    options,
    token,
    tokenMatches: tokenChecker(token),
    port: wanted,
    cookieName: `gatehouse_panel_${wanted}`,
    allowedHosts: new Set<string>(),
    ownOrigins: new Set<string>(),
  }
  const handle = panelHandler(site)
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' })
      else res.destroy()
    })
  }
  const { port, close } = await listenOnLoopback(onRequest, wanted)
  site.port = port
  site.cookieName = `gatehouse_panel_${port}`
  // DNS rebinding: only these Host names (another name resolving to loopback is refused, 421).
  site.allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
  site.ownOrigins = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`])
  const origin = `http://127.0.0.1:${port}`
  return { origin, localOrigin: `http://localhost:${port}`, port, token, loginURL: `${origin}/?token=${token}`, close }
}
