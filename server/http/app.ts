import { fromNodeHandler, H3, type H3Event } from 'h3'
import { NodeRequest } from 'srvx/node'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { z } from 'zod'
import type { GatehouseConfig } from '../config/schema.js'
import type { AuthContext, RequestMeta } from '../core/context.js'
import { recordAudit } from '../core/audit.js'
import { APIError, ERR, OAuthAPIError } from '../core/errors.js'
import { HashQueueFullError } from '../crypto/hash-queue.js'
import { assertNotImpersonating } from '../core/impersonation.js'
import { outageAnswer } from '../core/outage.js'
import { limitRequest, type RateLimitStore, ruleFor } from '../core/rate-limit.js'
import { isSessionFresh, type SessionWithUser } from '../core/sessions.js'
import { isTrustedURL, requestOriginOf } from '../config/trusted-origins.js'
import { readBody } from './body.js'
import { clientIp, rateLimitIdentity } from './client-ip.js'
import { type CookieNames, cookieNames, parseCookieHeader } from './cookies.js'
import { type ResponseDraft, type Route, type RouteContext, TextBody } from './route.js'
import { resolveRequestSession } from './session.js'
import type { LogFields } from '../log.js'
import { newRequestId, requestIdOf } from './request-id.js'
import { noEvents } from '../core/events.js'
import { hooksOf } from './feature-hooks.js'

export interface HttpAppOptions {
  ctx: AuthContext
  routes: Route[]
  rateLimitStore: () => RateLimitStore
  /** Called with unexpected errors (never sent to the client), once each, with the request's fields. */
  onUnexpectedError?: (error: unknown, route: string, fields: LogFields) => void
  /** A line per answered request, built only when `enabled()` (the log level is debug). */
  requestLog?: { enabled(): boolean; answered(fields: LogFields): void }
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
  if (error instanceof OAuthAPIError) return json({ error: error.code, error_description: error.message }, draft)
  // An empty code: better-auth sends that error with a message only (e.g. the one-time-token plugin's).
  return json(error.code ? { code: error.code, message: error.message } : { message: error.message }, draft)
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

/**
 * A route's query without a query string: the same parse every time, so it is done once per
 * schema (frozen, since every request shares it). An invalid empty query throws as validate does.
 */
const emptyQueries = new WeakMap<z.ZodType, unknown>()
function emptyQuery(schema: z.ZodType): unknown {
  if (!emptyQueries.has(schema)) {
    const parsed = validate(schema, {}, 'query')
    emptyQueries.set(schema, parsed && typeof parsed === 'object' ? Object.freeze(parsed) : parsed)
  }
  return emptyQueries.get(schema)
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
  const origin = requestOriginOf(headers)
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

/**
 * The route context of one request. The client address and the cookies are worked out on first
 * use (most requests need only some of it), by getters on the class rather than closures made per
 * request.
 */
class RequestContext implements RouteContext {
  body: unknown = undefined
  query: unknown = undefined
  session: SessionWithUser | null = null
  replayWhile: (() => boolean) | undefined = undefined
  private lazyMeta: RequestMeta | undefined
  private lazyCookies: Map<string, string> | undefined

  constructor(
    readonly ctx: AuthContext,
    readonly request: Request,
    private readonly urlOf: () => URL,
    readonly path: string,
    readonly params: Record<string, string>,
    readonly names: CookieNames,
    readonly response: ResponseDraft,
    private readonly config: GatehouseConfig,
    private readonly requestId: string,
  ) {}

  /** Parsed on first use: a direct route asked without a query string never needs it. */
  get url(): URL {
    return this.urlOf()
  }

  get meta(): RequestMeta {
    this.lazyMeta ??= {
      ipAddress: clientIp((this.request as { ip?: string }).ip, this.request.headers, this.config.advanced.ipAddress),
      userAgent: this.request.headers.get('user-agent'),
      requestId: this.requestId,
    }
    return this.lazyMeta
  }

  get cookies(): Map<string, string> {
    this.lazyCookies ??= parseCookieHeader(this.request.headers.get('cookie'))
    return this.lazyCookies
  }
}

/** What the runner needs of a request, from h3's event (routed) or from node:http (direct). */
interface RunInput {
  request: Request
  /** The request target's path and query string (`?…`, or empty), as the URL would give them. */
  pathname: string
  search: string
  url: () => URL
  params: Record<string, string>
  response: ResponseDraft
  /** Routed requests only: a feature's mounted Node handler (oidc-provider) takes over the event. */
  event?: H3Event
  /** A mount's direct POST (Feature.mount.directPosts): Node's request and response, for its handler. */
  node?: { req: IncomingMessage; res: ServerResponse }
  /** Set by the observing runner: the X-Request-Id of the answer. */
  requestId?: string
  /** A direct route's answer that may be replayed while this holds (RouteContext.replayWhile). */
  replayWhile?: () => boolean
}

function routedInput(event: H3Event): RunInput {
  return {
    request: event.req,
    pathname: event.url.pathname,
    search: event.url.search,
    url: () => event.url,
    params: (event.context.params as Record<string, string> | undefined) ?? {},
    // h3's own response state is the draft: its headers are created only when first touched.
    response: event.res,
    event,
  }
}

/**
 * The response headers of a direct answer: what web Headers offers, as a plain map. The routes
 * set only names and values of their own making; undici's Headers validates and sorts on every
 * use, a large share of a request as cheap as get-session.
 */
class DirectHeaders implements Headers {
  private readonly byName = new Map<string, string>()
  private readonly cookies: string[] = []

  append(name: string, value: string): void {
    const key = name.toLowerCase()
    if (key === 'set-cookie') this.cookies.push(value)
    else {
      const current = this.byName.get(key)
      this.byName.set(key, current === undefined ? value : `${current}, ${value}`)
    }
  }
  set(name: string, value: string): void {
    const key = name.toLowerCase()
    if (key === 'set-cookie') this.cookies.splice(0, this.cookies.length, value)
    else this.byName.set(key, value)
  }
  get(name: string): string | null {
    const key = name.toLowerCase()
    if (key === 'set-cookie') return this.cookies.length > 0 ? this.cookies.join(', ') : null
    return this.byName.get(key) ?? null
  }
  has(name: string): boolean {
    const key = name.toLowerCase()
    return key === 'set-cookie' ? this.cookies.length > 0 : this.byName.has(key)
  }
  delete(name: string): void {
    const key = name.toLowerCase()
    if (key === 'set-cookie') this.cookies.length = 0
    else this.byName.delete(key)
  }
  getSetCookie(): string[] {
    return [...this.cookies]
  }
  /**
   * The headers as node:http's flat [name, value, …] list, in the order entries() gives (names
   * sorted, each set-cookie on its own), then a content type and length when they are absent, as
   * srvx's writer adds them: one pass, without the generator and array copies of entries()
   * (get-session's hot path).
   */
  raw(defaultType: string, body: string): string[] {
    const byName = this.byName
    // Sorted by insertion as they are read: a handful of names, without an array copy and a sort call.
    const names: string[] = []
    for (const name of byName.keys()) {
      let i = names.length
      names.push(name)
      while (i > 0 && (names[i - 1] as string) > name) {
        names[i] = names[i - 1] as string
        i--
      }
      names[i] = name
    }
    const raw: string[] = []
    let cookiesOut = this.cookies.length === 0
    for (const name of names) {
      if (!cookiesOut && name > 'set-cookie') {
        for (const cookie of this.cookies) raw.push('set-cookie', cookie)
        cookiesOut = true
      }
      raw.push(name, byName.get(name) as string)
    }
    if (!cookiesOut) for (const cookie of this.cookies) raw.push('set-cookie', cookie)
    if (!byName.has('content-type')) raw.push('content-type', defaultType)
    if (!byName.has('content-length')) raw.push('content-length', String(Buffer.byteLength(body)))
    return raw
  }
  /** As web Headers iterates: names sorted, each set-cookie on its own. */
  *entries(): HeadersIterator<[string, string]> {
    const names = [...this.byName.keys()]
    if (this.cookies.length > 0) names.push('set-cookie')
    for (const name of names.sort()) {
      if (name === 'set-cookie') for (const cookie of this.cookies) yield [name, cookie]
      else yield [name, this.byName.get(name) as string]
    }
  }
  *keys(): HeadersIterator<string> {
    for (const [name] of this.entries()) yield name
  }
  *values(): HeadersIterator<string> {
    for (const [, value] of this.entries()) yield value
  }
  forEach(callback: (value: string, key: string, parent: Headers) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this)
  }
  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries()
  }
}

class DirectDraft implements ResponseDraft {
  status?: number
  private lazyHeaders: DirectHeaders | undefined
  get headers(): DirectHeaders {
    this.lazyHeaders ??= new DirectHeaders()
    return this.lazyHeaders
  }
}

/** h3's content type for a JSON answer it serialises itself. */
const H3_JSON_TYPE = 'application/json;charset=UTF-8'

/**
 * Sends a direct route's result as the routed path would: h3's toResponse (a null answer is an
 * empty body with content-length 0; a string is sent as it is; anything else is JSON with h3's
 * content type, the draft's headers on top) and srvx's writer (headers in web Headers order,
 * `text/plain; charset=UTF-8` for a string without a type, content-length, an empty reason phrase).
 */
function writeDirectAnswer(res: ServerResponse, result: unknown, draft: DirectDraft): void {
  if (result instanceof Response) throw new Error('a direct route answered with a Response: declare it routed')
  const headers = draft.headers
  let body: string
  if (result === null || result === undefined) {
    body = ''
    if (!headers.has('content-length')) headers.set('content-length', '0')
  } else if (typeof result === 'string') {
    body = result
  } else {
    body = JSON.stringify(result)
    if (!headers.has('content-type')) headers.set('content-type', H3_JSON_TYPE)
  }
  res.writeHead(draft.status ?? 200, '', headers.raw('text/plain; charset=UTF-8', body))
  res.end(body)
}

/**
 * The routes declared `direct` (GET /get-session), answered from a node:http request listener:
 * true when it took the request (and will answer it), false to leave it to h3 as usual.
 */
export type DirectHandler = (req: IncomingMessage, res: ServerResponse) => boolean

export interface AuthApp {
  /** Every declared route under the base path (direct ones too, for `app.fetch` and any query). */
  app: H3
  direct: DirectHandler
}

/**
 * The methods each declared path takes, so a known path asked with another method answers 405.
 * A switched-off feature's routes (Route.enabled) do not count: their paths answer 404.
 */
function allowedMethodsOf(ctx: AuthContext, routes: Route[]): (path: string) => string[] {
  const patterns = routes.map((r) => ({
    route: r,
    method: r.method,
    regex: new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`),
  }))
  return (path) => [...new Set(patterns.filter((p) => p.regex.test(path) && p.route.enabled?.(ctx) !== false).map((p) => p.method))]
}

/** Counts the request against its rate limit (when on and the route is not exempt); throws the 429 once over it. */
async function enforceRateLimit(
  options: HttpAppOptions,
  config: GatehouseConfig,
  rc: RequestContext,
  route: Route | null,
  path: string,
): Promise<void> {
  const { ctx } = options
  const ipAddress = config.rateLimit.enabled && !route?.exemptFromRateLimit ? rc.meta.ipAddress : null
  if (!ipAddress) return
  // Keyed by the declared route (one key for every unknown path): keyed by the raw path,
  // each invented path or token (/nope-1, /reset-password/<x>, /callback/<x>) would start a
  // fresh count and a new store entry, bypassing the limit and growing memory or the table.
  // A path a feature's mount serves (oidc-provider's) may have that feature's own rule
  // (registration's per-source rate); matchers name exact paths, so the key stays bounded.
  const mounted = route ? undefined : hooksOf(ctx).find((f) => f.mount?.handles(ctx, path))
  const mountRule = mounted?.rateLimit?.find((r) => r.pathMatcher(path))
  const key = `${rateLimitIdentity(ipAddress)}${route?.path ?? (mountRule ? path : '/*')}`
  const rule = ruleFor(config.rateLimit, path, route?.rateLimit?.(ctx) ?? mountRule?.rule(ctx))
  const decision = await limitRequest(ctx, options.rateLimitStore(), key, rule, rc.meta, { path })
  if (!decision.allowed) {
    const retry = String(decision.retryAfterSeconds)
    throw new APIError(429, 'TOO_MANY_REQUESTS', ERR.TOO_MANY_REQUESTS, { 'x-retry-after': retry, 'retry-after': retry })
  }
}

/** What handToMount returns when no feature's mount serves the path. */
const NOT_MOUNTED = Symbol('not mounted')

/**
 * Hands the request to a feature serving a whole subtree with a Node handler (oidc-provider),
 * which writes the answer itself; NOT_MOUNTED when none serves the path.
 */
async function handToMount(ctx: AuthContext, rc: RequestContext, input: RunInput, path: string, requestId: string): Promise<unknown> {
  const mount = hooksOf(ctx).find((f) => f.mount?.handles(ctx, path))?.mount
  // srvx's Node adapter over node:http: HTTP/1 requests and responses.
  // The handler writes Node's response itself: the draft's headers do not reach it.
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('x-request-id', requestId)
    return mount?.handle(rc, req, res)
  }
  if (mount && input.node) {
    await handle(input.node.req, input.node.res)
    return MOUNT_ANSWERED
  }
  if (mount && input.event) return await fromNodeHandler((req, res) => handle(req as IncomingMessage, res as ServerResponse))(input.event)
  return NOT_MOUNTED
}

/** The refusal of a path no enabled route takes with this method: 405 with Allow when the path is known, else 404. */
function unroutable(draft: ResponseDraft, path: string, method: string, allowed: string[]): APIError {
  if (allowed.length > 0 && !allowed.includes(method)) {
    draft.headers.set('allow', allowed.join(', '))
    if (path === '/get-session' && method === 'POST') {
      return new APIError(405, 'METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED', ERR.METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED)
    }
    return new APIError(405, 'METHOD_NOT_ALLOWED', ERR.METHOD_NOT_ALLOWED)
  }
  return new APIError(404, 'NOT_FOUND', ERR.NOT_FOUND)
}

/** checkOrigin, with its refusal audited (a cross-site POST is a security event, not just a 403). */
async function checkOriginAudited(ctx: AuthContext, rc: RequestContext, path: string): Promise<void> {
  try {
    checkOrigin(rc)
  } catch (refusal) {
    if (refusal instanceof APIError) {
      await recordAudit(ctx, {
        type: 'security.csrf-refused',
        outcome: 'failure',
        detail: { path, code: refusal.code, origin: requestOriginOf(rc.request.headers) },
        meta: rc.meta,
      })
    }
    throw refusal
  }
}

/** Fills the route context a handler reads: origin and callback checks, body and query validated, the session required by `route.auth`. */
async function prepareRoute(ctx: AuthContext, rc: RequestContext, route: Route, path: string, search: string): Promise<void> {
  const rawBody = route.method === 'POST' ? await readBody(rc.request) : undefined
  if (route.method === 'POST') await checkOriginAudited(ctx, rc, path)
  rc.body = route.body ? validate(route.body, rawBody === undefined ? {} : rawBody, 'body') : rawBody
  rc.query = route.query
    ? search
      ? validate(route.query, Object.fromEntries(rc.url.searchParams), 'query')
      : emptyQuery(route.query)
    : undefined
  if (route.method === 'POST') checkCallbacks(rc, rawBody)
  if (route.auth !== 'none') {
    const resolved = await resolveRequestSession(rc)
    if (resolved.status !== 'active') throw new APIError(401, 'UNAUTHORIZED', ERR.UNAUTHORIZED)
    if (route.refusedWhileImpersonating) assertNotImpersonating(resolved.data)
    if (route.auth === 'fresh' && !isSessionFresh(ctx, resolved.data.session)) {
      throw new APIError(403, 'SESSION_NOT_FRESH', ERR.SESSION_NOT_FRESH)
    }
    rc.session = resolved.data
  }
}
/** The runner's observing half: whether anyone watches answers, and the counting and logging of one. */
function requestObserver(options: HttpAppOptions) {
  const { ctx } = options
  /** Whether anyone watches answers (metrics on, or the request log at debug): else no timing at all. */
  const watching = (): boolean => ctx.events !== noEvents || options.requestLog?.enabled() === true
  /** Counts and logs an answered request (`started`: performance.now() at its start). */
  const observe = (input: RunInput, route: Route | null, started: number, result: unknown): void => {
    const { request } = input
    const status = statusOf(result, input)
    const ms = performance.now() - started
    ctx.events.requestAnswered(route, request.method, status, ms)
    if (options.requestLog?.enabled()) {
      const failure = status >= 400 ? (result as { code?: unknown; error?: unknown } | null) : null
      // OAuth-style answers (OAuthAPIError) name their code `error`.
      const code = failure?.code ?? failure?.error
      options.requestLog.answered({
        requestId: input.requestId as string,
        route: route?.path ?? UNMATCHED_ROUTE,
        method: request.method,
        status,
        durationMs: Math.round(ms * 1000) / 1000,
        ...(typeof code === 'string' ? { code } : {}),
      })
    }
  }
  return { watching, observe }
}

/** The answer to a request that threw: its APIError, 503 for a full hash queue or an outage, else 500 (logged). */
function failureAnswer(
  options: HttpAppOptions,
  error: unknown,
  input: RunInput,
  route: Route | null,
  requestId: string,
  path: string,
): unknown {
  const { ctx } = options
  const draft = input.response
  if (error instanceof APIError) return errorBody(error, draft)
  if (error instanceof HashQueueFullError) {
    return errorBody(new APIError(503, 'SERVER_BUSY', 'Server is busy. Please try again later.', { 'retry-after': '1' }), draft)
  }
  // A known storage outage (issue 31 §6): 503 with Retry-After, logged once per outage.
  const outage = outageAnswer(ctx, error)
  if (outage) return errorBody(outage, draft)
  options.onUnexpectedError?.(error, path, { requestId, method: input.request.method, route: route?.path ?? UNMATCHED_ROUTE })
  return errorBody(new APIError(500, 'INTERNAL_SERVER_ERROR', 'Internal server error'), draft)
}

/** Observes (when watched) and writes a direct request's answer. */
function sendDirect(
  res: ServerResponse,
  input: RunInput,
  route: Route | null,
  started: number,
  result: unknown,
  observe: (input: RunInput, route: Route | null, started: number, result: unknown) => void,
): void {
  if (started >= 0) observe(input, route, started, result)
  // The mount wrote and ended its answer itself (as it does when h3 hands it over).
  if (result === MOUNT_ANSWERED) return
  // A failure after the mount began its answer cannot be shaped any more: the answer just ends.
  if (res.headersSent) res.end()
  else writeDirectAnswer(res, result, input.response as DirectDraft)
}

/** A direct request whose answer could not be made or written: logged, and a bare 500 if nothing was sent yet. */
function failDirect(
  options: HttpAppOptions,
  base: string,
  req: IncomingMessage,
  res: ServerResponse,
  input: RunInput,
  route: Route | null,
  target: string,
  error: unknown,
): void {
  options.onUnexpectedError?.(error, route?.path ?? target.slice(base.length), {
    requestId: input.requestId,
    method: req.method ?? 'GET',
    route: route?.path ?? UNMATCHED_ROUTE,
  })
  if (!res.headersSent) res.writeHead(500, '')
  res.end()
}

/*
 * A direct route (createAuthApp's `direct`) skips what only routing and the web Response emulation
 * need: srvx's fetch wrapper, h3's app.fetch, router and toResponse, a web Headers object and
 * Response per answer.
 * The request is srvx's own NodeRequest (the routed path's request object), `run` is the same
 * (rate limit, disabled paths, query, session, handler, error shapes), and writeDirectAnswer
 * sends what h3 and srvx would send for the same result. On a session-cache hit this more than
 * halves the CPU time of get-session (docs/BENCHMARKS.md); tests/api/direct-routes.test.ts
 * compares both paths' answers. Matched on the raw request target, so any query string, encoding
 * or trailing slash goes the routed way.
 */

/** Builds the h3 app serving the declared routes under the base path, and its direct handler. */
export function createAuthApp(options: HttpAppOptions): AuthApp {
  const { ctx } = options
  const base = ctx.config().basePath
  const app = new H3()

  const methodsOf = allowedMethodsOf(ctx, options.routes)

  const answer = async (input: RunInput, route: Route | null, requestId: string): Promise<unknown> => {
    const config = ctx.config()
    const { request, pathname, search } = input
    const path = pathname.startsWith(base) ? pathname.slice(base.length) || '/' : pathname
    const draft = input.response
    const rc = new RequestContext(ctx, request, input.url, path, input.params, cookieNames(config, ctx.baseURL), draft, config, requestId)
    try {
      if (pathname.length + search.length > MAX_URL_LENGTH) throw new APIError(414, 'URI_TOO_LONG', 'Request URL is too long')
      await enforceRateLimit(options, config, rc, route, path)
      const disabled = config.disabledPaths.includes(path) || route?.enabled?.(ctx) === false
      if (!route && !disabled) {
        const mounted = await handToMount(ctx, rc, input, path, requestId)
        if (mounted !== NOT_MOUNTED) return mounted
      }
      if (!route || route.method !== request.method || disabled)
        throw unroutable(draft, path, request.method, disabled ? [] : methodsOf(path))
      await prepareRoute(ctx, rc, route, path, search)
      return finish(await route.handler(rc), draft)
    } catch (error) {
      return failure(error, input, route, requestId, path)
    }
  }

  const failure = (error: unknown, input: RunInput, route: Route | null, requestId: string, path: string): unknown =>
    failureAnswer(options, error, input, route, requestId, path)

  /**
   * `answer` for a direct route asked as declared (its exact path, no query string), without a
   * promise when nothing needs one: the same steps, skipping those that cannot apply (no body, no
   * query string, no 405 or 404) and leaving to `answer` whatever awaits (the rate limit, a route
   * that needs a session) or refuses (a disabled path). get-session on a session-cache hit is then
   * answered within the request event, with no promise and no microtask (issue 51).
   */
  const answerDirect = (input: RunInput, route: Route, requestId: string): unknown => {
    const config = ctx.config()
    const { request } = input
    const path = route.path
    if (
      (config.rateLimit.enabled && !route.exemptFromRateLimit) ||
      route.auth !== 'none' ||
      route.method !== request.method ||
      config.disabledPaths.includes(path) ||
      route.enabled?.(ctx) === false
    ) {
      return answer(input, route, requestId)
    }
    const draft = input.response
    const rc = new RequestContext(ctx, request, input.url, path, input.params, cookieNames(config, ctx.baseURL), draft, config, requestId)
    try {
      rc.query = route.query ? emptyQuery(route.query) : undefined
      const result = route.handler(rc)
      if (result instanceof Promise) {
        return result.then(
          (settled) => finish(settled, draft),
          (error: unknown) => failure(error, input, route, requestId, path),
        )
      }
      input.replayWhile = rc.replayWhile
      return finish(result, draft)
    } catch (error) {
      return failure(error, input, route, requestId, path)
    }
  }

  // ---- Observability (issue 32, docs/OBSERVABILITY.md) -------------------------------------------
  // Every answer gets its X-Request-Id; ctx.events counts it by route template (the metrics
  // feature; nothing when metrics are off) and, at log level debug, one line describes it.
  // Positional arguments and no object per request unless a line is written.
  /** Gives the request its id (answer header, logs, audit) and answers it. */
  const begin = (input: RunInput, route: Route | null): Promise<unknown> => answer(input, route, identify(input))
  /** Gives the request its id: the answer's X-Request-Id, the logs' and the audit's. */
  const identify = (input: RunInput): string => {
    const requestId = requestIdOf(input.request as { ip?: string; headers: Headers }, ctx.config().advanced.ipAddress)
    input.requestId = requestId
    input.response.headers.set('x-request-id', requestId)
    return requestId
  }
  const { watching, observe } = requestObserver(options)
  /** The routed path: begin, then observe when watched (the direct path observes in its own `then`). */
  const run = async (input: RunInput, route: Route | null): Promise<unknown> => {
    if (!watching()) return begin(input, route)
    const started = performance.now()
    const result = await begin(input, route)
    observe(input, route, started, result)
    return result
  }
  // ---- end of observability -----------------------------------------------------------------------

  for (const route of options.routes) {
    app.on(route.method, `${base}${route.path}`, (event) => run(routedInput(event), route))
  }
  // Everything else answers the JSON 404, after counting against the rate limit like any path.
  app.all('/**', (event) => run(routedInput(event), null))

  // The direct routes (see "A direct route" above createAuthApp).
  const directRoutes = new Map(options.routes.filter((r) => r.direct && r.method === 'GET').map((r) => [`${base}${r.path}`, r]))
  const directPosts = new Set(hooksOf(ctx).flatMap((f) => (f.mount?.directPosts ?? []).map((path) => `${base}${path}`)))
  const direct: DirectHandler = (req, res) => {
    const target = req.url
    if (target === undefined) return false
    if (req.method === 'POST') {
      if (!directPosts.has(target)) return false
      // A mount that does not take the path now (its feature switched off) leaves it to h3 as usual.
      const path = target.slice(base.length)
      if (!hooksOf(ctx).some((f) => f.mount?.handles(ctx, path))) return false
      return runDirect(req, res, target, null)
    }
    const route = req.method === 'GET' ? directRoutes.get(target) : undefined
    return route ? runDirect(req, res, target, route) : false
  }
  /** Each direct route's answers kept for the same request again (see "Replays" below). */
  const replaysOf = new Map(options.routes.filter((r) => r.direct && r.method === 'GET').map((r) => [r, new Replays()]))
  /**
   * Answers a direct request with the routed path's runner. A declared route (GET /get-session)
   * answers with its result; a mount's direct POST (the OIDC token endpoint, route null) gets Node's
   * request and response (`input.node`) without h3's router, srvx's fetch wrapper and
   * fromNodeHandler, and writes its answer itself.
   */
  const runDirect = (req: IncomingMessage, res: ServerResponse, target: string, route: Route | null): true => {
    // A replay answers an unobserved request (no metric, no request log to write) at once.
    const replays = route && !watching() ? replaysOf.get(route) : undefined
    const key = replays ? replayKey(req.rawHeaders) : undefined
    if (key !== undefined && replays?.answered(key, req.rawHeaders, ctx.config(), res)) return true
    const request = new NodeRequest({ req, res })
    const response = new DirectDraft()
    // The exact target matched: its path is the target itself, with no query string.
    const url = () => (request as unknown as { _url: URL })._url
    const input: RunInput = { request, pathname: target, search: '', url, params: NO_PARAMS, response }
    if (!route) input.node = { req, res }
    const started = watching() ? performance.now() : -1
    try {
      const requestId = identify(input)
      const result = route ? answerDirect(input, route, requestId) : answer(input, route, requestId)
      // Answered now when nothing was awaited (get-session on a session-cache hit), else once settled.
      if (result instanceof Promise) {
        result
          .then((settled) => sendDirect(res, input, route, started, settled, observe))
          .catch((error: unknown) => failDirect(options, base, req, res, input, route, target, error))
      } else {
        sendDirect(res, input, route, started, result, observe)
        if (key !== undefined && input.replayWhile)
          replays?.remember(key, req.rawHeaders, ctx.config(), input.replayWhile, input.response as DirectDraft, result)
      }
    } catch (error) {
      failDirect(options, base, req, res, input, route, target, error)
    }
    return true
  }
  return { app, direct }
}

/*
 * Replays (issue 51). Apps poll get-session with the same cookie again and again, and on a
 * session-cache hit the answer is the same every time: the route marks it (RouteContext.replayWhile)
 * and the next request with the very same headers gets it again, with its own request id, while
 * the configuration is the same object and the route's check holds (get-session: the session cache
 * still holds that session, active and not due a refresh; any write to the database empties it).
 * Nothing of the route runs: on this machine each microsecond of work per request costs about
 * two in throughput (docs/BENCHMARKS.md), and the route's own steps cost several.
 * Requests carrying X-Request-Id (a proxy's id to keep) and observed requests (metrics, request
 * log) always run the route.
 */

/** One answer to replay. */
interface Replay {
  /** The request's header lines as the client sent them: another request must send these exactly. */
  headers: string[]
  config: GatehouseConfig
  still: () => boolean
  status: number
  /** writeHead's flat list of headers; the value at `idAt` is the request id, new for each answer. */
  raw: string[]
  idAt: number
  body: string
}

/** At most this many answers are kept: past it, the store starts over (a flood of distinct cookies cannot grow memory). */
const MAX_REPLAYS = 10_000

class Replays {
  private readonly byKey = new Map<string, Replay>()

  /** Answers from a replay when one holds for exactly this request; false to run the route. */
  answered(key: string, headers: string[], config: GatehouseConfig, res: ServerResponse): boolean {
    const replay = this.byKey.get(key)
    if (replay === undefined || !sameLines(replay.headers, headers)) return false
    if (replay.config !== config || !replay.still()) {
      this.byKey.delete(key)
      return false
    }
    const raw = replay.raw.slice()
    raw[replay.idAt] = newRequestId()
    res.writeHead(replay.status, '', raw)
    res.end(replay.body)
    return true
  }

  /** Keeps an answer just sent as writeDirectAnswer sent it: a text body, no cookie, its request id in place. */
  remember(key: string, headers: string[], config: GatehouseConfig, still: () => boolean, draft: DirectDraft, result: unknown): void {
    if (typeof result !== 'string' || draft.headers.has('set-cookie')) return
    const raw = draft.headers.raw('text/plain; charset=UTF-8', result)
    let idAt = -1
    for (let i = 0; i < raw.length; i += 2) if (raw[i] === 'x-request-id') idAt = i + 1
    if (idAt < 0) return
    if (this.byKey.size >= MAX_REPLAYS) this.byKey.clear()
    this.byKey.set(key, { headers: headers.slice(), config, still, status: draft.status ?? 200, raw, idAt, body: result })
  }
}

/** Whether two requests sent the same header lines, names and values, in the same order. */
function sameLines(kept: string[], sent: string[]): boolean {
  if (kept.length !== sent.length) return false
  for (let i = 0; i < kept.length; i++) if (kept[i] !== sent[i]) return false
  return true
}

/**
 * What a replay is looked up by, among its route's: the request's Cookie and Authorization (the
 * lines that tell one person's request from another's; the answer is replayed only if every line
 * is the same too, sameLines). The usual request, one Cookie line or one Authorization line, is
 * looked up by that line's own value, with no string built; anything else by the lines joined.
 * (A key only finds a candidate: two requests with equal keys and different lines never share an
 * answer.) Undefined when the request forwards an X-Request-Id, which its answer may have to carry.
 * Names are matched by length first: most lines are none of the three.
 */
function replayKey(rawHeaders: string[]): string | undefined {
  let identifying: string | undefined
  let lines = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    const length = name.length
    if ((length === 6 && name.toLowerCase() === 'cookie') || (length === 13 && name.toLowerCase() === 'authorization')) {
      identifying = rawHeaders[i + 1] as string
      lines++
    } else if (length === 12 && name.toLowerCase() === 'x-request-id') return undefined
  }
  if (lines === 1) return identifying
  let cookies = ''
  let authorization = ''
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase()
    if (name === 'cookie') cookies += `${rawHeaders[i + 1]}\n`
    else if (name === 'authorization') authorization += `${rawHeaders[i + 1]}\n`
  }
  return `${cookies}\n${authorization}`
}

/** What the runner returns once a mount's handler has answered on Node's response itself (direct POST). */
const MOUNT_ANSWERED = Symbol('mount answered')

/** The params of a direct route (exact paths, none of them a pattern): one frozen object for every request. */
const NO_PARAMS: Record<string, string> = Object.freeze({})

/** The label of a path no declared route takes (metrics and logs). */
const UNMATCHED_ROUTE = '(unmatched)'

/** The status an answer leaves with: a web Response's, a mounted Node handler's, else the draft's. */
function statusOf(result: unknown, input: RunInput): number {
  if (result instanceof Response) return result.status
  const node = input.event?.runtime?.node?.res ?? input.node?.res
  if (node?.headersSent) return node.statusCode
  return input.response.status ?? 200
}
