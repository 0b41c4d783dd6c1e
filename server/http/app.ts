import { fromNodeHandler, H3, type H3Event } from 'h3'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { z } from 'zod'
import type { AuthContext, RequestMeta } from '../core/context.js'
import { recordAudit } from '../core/audit.js'
import { APIError, ERR } from '../core/errors.js'
import { HashQueueFullError } from '../crypto/hash-queue.js'
import { consume, type RateLimitStore, ruleFor } from '../core/rate-limit.js'
import { isSessionFresh } from '../core/sessions.js'
import { isTrustedURL } from '../core/trusted-origins.js'
import { readBody } from './body.js'
import { clientIp, rateLimitIdentity } from './client-ip.js'
import { cookieNames, parseCookieHeader } from './cookies.js'
import { type ResponseDraft, type Route, type RouteContext, TextBody } from './route.js'
import { resolveRequestSession } from './session.js'

export interface HttpAppOptions {
  ctx: AuthContext
  routes: Route[]
  rateLimitStore: () => RateLimitStore
  /** Called with unexpected errors (never sent to the client). */
  onUnexpectedError?: (error: unknown, route: string) => void
}

const JSON_TYPE = 'application/json'
const MAX_URL_LENGTH = 8192

/*
 * Answers are written onto h3's lazily created event.res and returned as strings: building a web
 * Response per request costs about three times as much as letting h3 send a string.
 */
function json(value: unknown, draft: ResponseDraft): unknown {
  // h3 serialises plain objects and arrays with a shared JSON content-type header, without
  // building a Headers object for this response; only a bare null needs spelling out.
  if (value !== null && value !== undefined && typeof value === 'object') return value
  draft.headers.set('content-type', JSON_TYPE)
  return JSON.stringify(value ?? null)
}

function errorBody(error: APIError, draft: ResponseDraft): unknown {
  for (const [k, v] of Object.entries(error.headers)) draft.headers.set(k, v)
  draft.status = error.status
  return json({ code: error.code, message: error.message }, draft)
}

function finish(result: unknown, draft: ResponseDraft): unknown {
  if (result instanceof TextBody) {
    draft.headers.set('content-type', result.contentType)
    return result.text
  }
  if (result instanceof Response) return result
  return json(result, draft)
}

function validate(schema: z.ZodType, value: unknown, where: 'body' | 'query'): unknown {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const path = [where, ...(issue?.path ?? []).map(String)].join('.')
  throw new APIError(400, 'VALIDATION_ERROR', `[${path}] ${issue?.message ?? 'Invalid input'}`)
}

const CALLBACK_FIELDS = [
  ['callbackURL', 'callbackURL', 'INVALID_CALLBACK_URL'],
  ['redirectTo', 'redirectURL', 'INVALID_REDIRECT_URL'],
  ['errorCallbackURL', 'errorCallbackURL', 'INVALID_ERROR_CALLBACK_URL'],
  ['newUserCallbackURL', 'newUserCallbackURL', 'INVALID_NEW_USER_CALLBACK_URL'],
] as const

export function trustedOrigins(ctx: AuthContext): string[] {
  return [...ctx.config().trustedOrigins, new URL(ctx.baseURL).origin]
}

/** Refuses a redirect target that is neither a trusted origin nor a safe relative path. */
export function assertTrustedCallback(ctx: AuthContext, value: unknown, label: string, code: string): void {
  if (value === undefined || value === null || value === '') return
  if (typeof value !== 'string' || !isTrustedURL(value, trustedOrigins(ctx), { allowRelative: true })) {
    throw new APIError(403, code, `Invalid ${label}`)
  }
}

function originOf(value: string | null): string | null {
  if (!value) return null
  try {
    return new URL(value).origin
  } catch {
    return 'null'
  }
}

/**
 * CSRF defence on POST (SPEC §5, reference §6.2 with current better-auth's stricter rules):
 * a request carrying cookies must come from a trusted Origin (or Referer); sign-in and sign-up are
 * also checked without cookies when the browser says where it comes from, and cross-site
 * top-level navigations to them are refused (Fetch Metadata).
 */
function checkOrigin(rc: RouteContext): void {
  const { ctx, request, path } = rc
  if (ctx.config().advanced.disableCSRFCheck) return
  const headers = request.headers
  const origin = headers.get('origin') ?? originOf(headers.get('referer'))
  const loginPath = path.startsWith('/sign-in') || path.startsWith('/sign-up')
  if (loginPath && headers.get('sec-fetch-site') === 'cross-site' && headers.get('sec-fetch-mode') === 'navigate') {
    throw new APIError(
      403,
      'CROSS_SITE_NAVIGATION_LOGIN_BLOCKED',
      'Cross-site navigation login blocked. This request appears to be a CSRF attack.',
    )
  }
  const withCookies = headers.has('cookie') && rc.cookies.size > 0
  // A browser always sends Origin with a fetch that carries Fetch Metadata; one without it on a
  // sign-in or sign-up is refused as better-auth 1.7 does.
  const fetchMetadata = ['sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest'].some((name) => headers.get(name)?.trim())
  if (withCookies || (loginPath && fetchMetadata)) {
    if (!origin || origin === 'null') throw new APIError(403, 'MISSING_OR_NULL_ORIGIN', 'Missing or null Origin')
  } else if (!loginPath || !origin) {
    return
  }
  if (!isTrustedURL(origin, trustedOrigins(ctx), { allowRelative: false })) {
    throw new APIError(403, 'INVALID_ORIGIN', ERR.INVALID_ORIGIN)
  }
}

function checkCallbacks(rc: RouteContext, rawBody: unknown): void {
  const body = rawBody && typeof rawBody === 'object' ? (rawBody as Record<string, unknown>) : {}
  for (const [field, label, code] of CALLBACK_FIELDS) {
    const value = body[field] ?? (field === 'callbackURL' ? rc.url.searchParams.get('callbackURL') : undefined)
    assertTrustedCallback(rc.ctx, value, label, code)
  }
}

/** Builds the h3 app serving the declared routes under the base path. */
export function createAuthApp(options: HttpAppOptions): H3 {
  const { ctx } = options
  const base = ctx.config().basePath
  const app = new H3()

  // The methods each declared path takes, so a known path asked with another method answers 405.
  const patterns = options.routes.map((r) => ({
    route: r,
    method: r.method,
    regex: new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`),
  }))
  // A switched-off feature's routes (Route.enabled) do not count: their paths answer 404.
  const methodsOf = (path: string): string[] => [
    ...new Set(patterns.filter((p) => p.regex.test(path) && p.route.enabled?.(ctx) !== false).map((p) => p.method)),
  ]

  const run = async (event: H3Event, route: Route | null): Promise<unknown> => {
    const config = ctx.config()
    const request = event.req
    const url = event.url
    const path = url.pathname.startsWith(base) ? url.pathname.slice(base.length) || '/' : url.pathname
    // h3's own response state is the draft: its headers are created only when first touched.
    const draft: ResponseDraft = event.res
    // Computed on first use: most requests need only some of these.
    let meta: RequestMeta | undefined
    let cookies: Map<string, string> | undefined
    const rc: RouteContext = {
      ctx,
      request,
      url,
      path,
      params: (event.context.params as Record<string, string> | undefined) ?? {},
      body: undefined,
      query: undefined,
      get meta() {
        meta ??= {
          ipAddress: clientIp((request as { ip?: string }).ip, request.headers, config.advanced.ipAddress),
          userAgent: request.headers.get('user-agent'),
        }
        return meta
      },
      session: null,
      get cookies() {
        cookies ??= parseCookieHeader(request.headers.get('cookie'))
        return cookies
      },
      names: cookieNames(config, ctx.baseURL),
      response: draft,
    }
    try {
      if (url.pathname.length + url.search.length > MAX_URL_LENGTH) throw new APIError(414, 'URI_TOO_LONG', 'Request URL is too long')
      const ipAddress = config.rateLimit.enabled ? rc.meta.ipAddress : null
      if (ipAddress) {
        // Keyed by the declared route (one key for every unknown path): keyed by the raw path,
        // each invented path or token (/nope-1, /reset-password/<x>, /callback/<x>) would start a
        // fresh count and a new store entry, bypassing the limit and growing memory or the table.
        const key = `${rateLimitIdentity(ipAddress)}${route?.path ?? '/*'}`
        const decision = await consume(options.rateLimitStore(), key, ruleFor(config.rateLimit, path), ctx.clock.now())
        if (!decision.allowed) {
          // One audit event per client and path per refused burst, so a flood cannot turn
          // into a flood of database writes.
          if (decision.firstRefusal)
            await recordAudit(ctx, { type: 'security.rate-limited', outcome: 'failure', detail: { path }, meta: rc.meta })
          const retry = String(decision.retryAfterSeconds)
          throw new APIError(429, 'TOO_MANY_REQUESTS', ERR.TOO_MANY_REQUESTS, { 'x-retry-after': retry, 'retry-after': retry })
        }
      }
      const disabled = config.disabledPaths.includes(path) || route?.enabled?.(ctx) === false
      if (!route && !disabled) {
        // A feature serving a whole subtree with a Node handler (oidc-provider): it writes the answer.
        const mount = ctx.features?.find((f) => f.mount?.handles(ctx, path))?.mount
        // srvx's Node adapter over node:http: HTTP/1 requests and responses.
        if (mount) return await fromNodeHandler((req, res) => mount.handle(rc, req as IncomingMessage, res as ServerResponse))(event)
      }
      if (!route || route.method !== request.method || disabled) {
        const allowed = disabled ? [] : methodsOf(path)
        if (allowed.length > 0 && !allowed.includes(request.method)) {
          draft.headers.set('allow', allowed.join(', '))
          if (path === '/get-session' && request.method === 'POST') {
            throw new APIError(405, 'METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED', ERR.METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED)
          }
          throw new APIError(405, 'METHOD_NOT_ALLOWED', ERR.METHOD_NOT_ALLOWED)
        }
        throw new APIError(404, 'NOT_FOUND', ERR.NOT_FOUND)
      }
      const rawBody = route.method === 'POST' ? await readBody(request) : undefined
      if (route.method === 'POST') {
        try {
          checkOrigin(rc)
        } catch (refusal) {
          if (refusal instanceof APIError) {
            const origin = request.headers.get('origin') ?? request.headers.get('referer')
            await recordAudit(ctx, {
              type: 'security.csrf-refused',
              outcome: 'failure',
              detail: { path, code: refusal.code, origin },
              meta: rc.meta,
            })
          }
          throw refusal
        }
      }
      rc.body = route.body ? validate(route.body, rawBody === undefined ? {} : rawBody, 'body') : rawBody
      rc.query = route.query ? validate(route.query, url.search ? Object.fromEntries(url.searchParams) : {}, 'query') : undefined
      if (route.method === 'POST') checkCallbacks(rc, rawBody)
      if (route.auth !== 'none') {
        const resolved = await resolveRequestSession(rc)
        if (resolved.status !== 'active') throw new APIError(401, 'UNAUTHORIZED', ERR.UNAUTHORIZED)
        if (route.auth === 'fresh' && !isSessionFresh(ctx, resolved.data.session)) {
          throw new APIError(403, 'SESSION_NOT_FRESH', ERR.SESSION_NOT_FRESH)
        }
        rc.session = resolved.data
      }
      return finish(await route.handler(rc), draft)
    } catch (error) {
      if (error instanceof APIError) return errorBody(error, draft)
      if (error instanceof HashQueueFullError) {
        return errorBody(new APIError(503, 'SERVER_BUSY', 'Server is busy. Please try again later.', { 'retry-after': '1' }), draft)
      }
      options.onUnexpectedError?.(error, path)
      return errorBody(new APIError(500, 'INTERNAL_SERVER_ERROR', 'Internal server error'), draft)
    }
  }

  for (const route of options.routes) {
    app.on(route.method, `${base}${route.path}`, (event) => run(event, route))
  }
  // Everything else answers the JSON 404, after counting against the rate limit like any path.
  app.all('/**', (event) => run(event, null))
  return app
}
