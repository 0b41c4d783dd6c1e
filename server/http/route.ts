import type { z } from 'zod'
import type { AuthContext, RequestMeta } from '../core/context.js'
import type { SessionWithUser } from '../core/sessions.js'
import type { CookieNames } from './cookies.js'

/**
 * An endpoint is declared, not only handled: method, path, input schemas and what it requires.
 * The app registers the declarations; the same list drives disabled paths and rate-limit rules.
 */
export type AuthRequirement = 'none' | 'session' | 'fresh'

/** Status and headers of the answer being built; handlers add cookies here. */
export interface ResponseDraft {
  /** Unset means 200. */
  status?: number
  headers: Headers
}

export interface RouteContext<B = unknown, Q = unknown, S = SessionWithUser | null> {
  ctx: AuthContext
  request: Request
  url: URL
  /** Path relative to the base path, e.g. /sign-in/email */
  path: string
  params: Record<string, string>
  body: B
  query: Q
  meta: RequestMeta
  session: S
  /** Cookies the request carried. */
  cookies: Map<string, string>
  names: CookieNames
  response: ResponseDraft
  /**
   * Set by a direct route's handler when its answer depends on nothing but the request's headers,
   * the configuration and what this function checks: the same answer (status, headers, body; a
   * new request id) is then given again to a request with the very same headers while it returns
   * true, without running the route (server/http/app.ts, "Replays").
   */
  replayWhile?: () => boolean
}

/** A non-JSON answer (HTML page, empty redirect body). */
export class TextBody {
  constructor(
    readonly text: string,
    readonly contentType = 'text/plain; charset=utf-8',
  ) {}
}

/** A 302 to `location`; cookies set on the draft go with it (the runner merges them). */
export const redirect = (location: string): Response => new Response(null, { status: 302, headers: { location } })

export type SessionFor<A extends AuthRequirement> = A extends 'none' ? null : SessionWithUser

export interface RouteDef<B extends z.ZodType, Q extends z.ZodType, A extends AuthRequirement> {
  method: 'GET' | 'POST'
  /** Relative to the base path; `:name` segments become params. */
  path: string
  body?: B
  query?: Q
  auth?: A
  /** False while the route's feature is switched off: the route answers 404 as if absent. */
  enabled?: (ctx: AuthContext) => boolean
  /**
   * The rate-limit rule a better-auth plugin declares for this path (e.g. magic link: 5 per 60 s),
   * in place of the default and strict rules; `rateLimit.customRules` still win over it.
   */
  rateLimit?: (ctx: AuthContext) => { window: number; max: number }
  /**
   * Also answered straight from node:http, ahead of h3's router, when a GET asks for exactly this
   * path (no query string, no params): the same runner, rules and answer, without the router
   * (server/http/app.ts createAuthApp). For the hottest path of all, GET /get-session.
   */
  direct?: boolean
  /**
   * True: not counted against the per-client rate limit. For forward auth's endpoints, which a
   * trusted reverse proxy asks once per protected request on behalf of every user behind it.
   */
  exemptFromRateLimit?: boolean
  /** Refusals are OAuth's `{error, error_description}` (OAuthAPIError), so documented in OpenAPI. */
  oauthErrors?: boolean
  /**
   * True: an impersonation session is refused (403 IMPERSONATION_NOT_ALLOWED, core/impersonation.ts)
   * before the handler runs: the routes that make a credential or take the account.
   */
  refusedWhileImpersonating?: A extends 'none' ? never : boolean
  handler: (rc: RouteContext<z.output<B>, z.output<Q>, SessionFor<A>>) => unknown
}

export interface Route {
  method: 'GET' | 'POST'
  path: string
  body?: z.ZodType
  query?: z.ZodType
  auth: AuthRequirement
  enabled?: (ctx: AuthContext) => boolean
  rateLimit?: (ctx: AuthContext) => { window: number; max: number }
  direct?: boolean
  exemptFromRateLimit?: boolean
  oauthErrors?: boolean
  refusedWhileImpersonating?: boolean
  handler: (rc: RouteContext<unknown, unknown, SessionWithUser | null>) => unknown
}

export function defineRoute<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, A extends AuthRequirement = 'none'>(
  def: RouteDef<B, Q, A>,
): Route {
  return {
    method: def.method,
    path: def.path,
    body: def.body,
    query: def.query,
    auth: def.auth ?? 'none',
    enabled: def.enabled,
    rateLimit: def.rateLimit,
    direct: def.direct,
    exemptFromRateLimit: def.exemptFromRateLimit,
    oauthErrors: def.oauthErrors,
    refusedWhileImpersonating: def.refusedWhileImpersonating,
    // The runner validates body and query against the schemas and resolves the session the
    // declaration asks for before calling, so the erased types hold at run time.
    handler: def.handler as Route['handler'],
  }
}
