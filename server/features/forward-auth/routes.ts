import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { defineRoute, type RouteContext, TextBody } from '../../http/route.js'
import { resolveRequestSession } from '../../http/session.js'
import { judge, record, fromTrustedProxy, type Verdict } from './access.js'
import { forwardAuthError } from './errors.js'
import { domainMatches, type ForwardTarget, forwardedUrl, parseTarget } from './rules.js'
import { countDecision } from './metrics.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

type AnyRC = RouteContext<unknown, unknown, unknown>
type Kind = 'auth-request' | 'forward-auth'

const enabled = (ctx: AuthContext) => ctx.config().forwardAuth.enabled
const EMPTY = new TextBody('')

/** The original request from the headers the endpoint reads (and only those). */
function originalRequest(rc: AnyRC, kind: Kind): { target: ForwardTarget; method: string } {
  const h = rc.request.headers
  let raw: string | null
  let method: string | null
  if (kind === 'auth-request') {
    raw = h.get('x-original-url')
    method = h.get('x-original-method')
    if (!raw) throw forwardAuthError(400, 'MISSING_ORIGINAL_URL')
  } else {
    const proto = h.get('x-forwarded-proto')
    const host = h.get('x-forwarded-host')
    const uri = h.get('x-forwarded-uri')
    if (!proto || !host || !uri) throw forwardAuthError(400, 'MISSING_ORIGINAL_URL')
    raw = forwardedUrl(proto, host, uri)
    method = h.get('x-forwarded-method')
  }
  const target = raw === null ? null : parseTarget(raw)
  if (!target) throw forwardAuthError(400, 'INVALID_ORIGINAL_URL')
  return { target, method: (method ?? 'GET').trim().toUpperCase() }
}

/**
 * The proxy's question. Not async: on a session-cache hit with a cached identity (SQLite) the
 * answer awaits nothing, as get-session's does.
 */
function answer(rc: AnyRC, kind: Kind): unknown {
  const { ctx } = rc
  const config = ctx.config()
  rc.response.headers.set('cache-control', 'no-store')
  if (!fromTrustedProxy((rc.request as { ip?: string }).ip, config.advanced.ipAddress.trustedProxies)) {
    throw forwardAuthError(403, 'UNTRUSTED_PROXY')
  }
  const { target, method } = originalRequest(rc, kind)
  const verdict = judge(ctx, config.forwardAuth, target, () => resolveRequestSession(rc))
  return verdict instanceof Promise ? verdict.then((v) => shape(rc, kind, target, method, v)) : shape(rc, kind, target, method, verdict)
}

function shape(rc: AnyRC, kind: Kind, target: ForwardTarget, method: string, verdict: Verdict): unknown {
  const { decider } = verdict
  countDecision(rc.ctx, decider, verdict.outcome)
  const audited = record(rc.ctx, target, verdict, () => rc.meta)
  const headers = rc.response.headers
  switch (verdict.outcome) {
    case 'bypass':
      return EMPTY
    case 'allowed':
      for (const [name, value] of verdict.identity?.headers ?? []) headers.set(name, value)
      return EMPTY
    case 'unauthenticated':
    case 'second-factor':
    case 'unverified':
    case 'enrol':
      return (audited ?? Promise.resolve()).then(() => {
        // An unverified person (identity.requireVerifiedEmail) goes to the page that says so, with its
        // resend button; one whose second-factor enrolment is overdue to the enrolment step.
        const returnTo = target.url
        const signIn =
          verdict.outcome === 'unverified'
            ? hostedPageURL(rc.ctx, 'verify-email', { returnTo })
            : verdict.outcome === 'enrol'
              ? hostedPageURL(rc.ctx, 'account/two-factor', { enrol: '1', returnTo })
              : hostedPageURL(rc.ctx, 'sign-in', { returnTo })
        if (kind === 'forward-auth' && (method === 'GET' || method === 'HEAD')) {
          rc.response.status = 302
          headers.set('location', signIn)
          return EMPTY
        }
        const code =
          verdict.outcome === 'unauthenticated'
            ? 'UNAUTHORIZED'
            : verdict.outcome === 'unverified'
              ? 'EMAIL_NOT_VERIFIED'
              : verdict.outcome === 'enrol'
                ? 'TWO_FACTOR_ENROLLMENT_REQUIRED'
                : 'SECOND_FACTOR_REQUIRED'
        // nginx cannot percent-encode a URL: its config redirects to this one
        // (`auth_request_set $signin $upstream_http_location; error_page 401 =302 $signin;`, as Authelia's).
        throw forwardAuthError(401, code, kind === 'auth-request' ? { location: signIn } : undefined)
      })
    case 'forbidden':
      return (audited ?? Promise.resolve()).then(() => {
        throw forwardAuthError(403, 'FORBIDDEN')
      })
  }
}

/**
 * Where the hosted sign-in page may send the person back to: an http(s) URL without credentials
 * whose host a rule names. Gatehouse's own pages are the page's own check.
 */
export function acceptedReturnTo(ctx: AuthContext, raw: string): { url: string; app: string } | null {
  const conf = ctx.config().forwardAuth
  if (!conf.enabled) return null
  const target = parseTarget(raw)
  if (!target) return null
  return conf.rules.some((rule) => domainMatches(rule.domain, target.host)) ? { url: target.url, app: target.host } : null
}

export const forwardAuthRoutes = [
  defineRoute({
    method: 'GET',
    path: '/forward-auth/auth-request',
    enabled,
    // One call per protected request: answered from node:http (as get-session) and not rate limited per client.
    direct: true,
    exemptFromRateLimit: true,
    handler: (rc) => answer(rc, 'auth-request'),
  }),
  defineRoute({
    method: 'GET',
    path: '/forward-auth/forward-auth',
    enabled,
    direct: true,
    exemptFromRateLimit: true,
    handler: (rc) => answer(rc, 'forward-auth'),
  }),
  defineRoute({
    method: 'GET',
    path: '/forward-auth/return-to',
    // Always answered (null while forward auth is off): the sign-in page asks it for any foreign returnTo.
    query: z.object({ url: z.string().max(8192) }),
    handler: ({ ctx, query }) => acceptedReturnTo(ctx, query.url) ?? { url: null, app: null },
  }),
]
