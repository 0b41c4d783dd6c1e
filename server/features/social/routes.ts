import { z } from 'zod'
import { toPublicUser } from '../../core/users.js'
import { unsignValue } from '../../crypto/sign.js'
import { serializeCookie, signedCookieValue } from '../../http/cookies.js'
import { defineRoute, redirect, type RouteContext } from '../../http/route.js'
import { finishSignIn, identifying, jsonSignInAnswer } from '../../http/sign-in.js'
import { socialError } from './errors.js'
import {
  accountInfo,
  getAccessToken,
  handleCallback,
  signInStoppedLocation,
  linkWithIdToken,
  refreshAccessToken,
  requireProvider,
  signInWithIdToken,
  startAuthorization,
} from './flow.js'
import { STATE_TTL_MS } from './state.js'

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

/** better-auth 1.7's signed `state` cookie: binds an OAuth state to the browser that started it. */
const stateCookieName = (rc: AnyRouteContext): string =>
  `${rc.names.secure ? '__Secure-' : ''}${rc.ctx.config().advanced.cookiePrefix}.state`

function setStateCookie(rc: AnyRouteContext, state: string): void {
  const value = signedCookieValue(rc.ctx.secret, state)
  rc.response.headers.append(
    'set-cookie',
    serializeCookie(stateCookieName(rc), value, rc.names.secure, STATE_TTL_MS / 1000, rc.names.domain),
  )
}

function browserState(rc: AnyRouteContext): string | null {
  const raw = rc.cookies.get(stateCookieName(rc))
  return raw ? unsignValue(rc.ctx.secret, raw) : null
}

const idTokenSchema = z.object({
  token: z.string().min(1),
  nonce: z.string().optional(),
  accessToken: z.string().optional(),
  refreshToken: z.string().optional(),
  expiresAt: z.number().optional(),
})

const accountSelector = z.object({
  providerId: z.string().min(1).optional(),
  accountId: z.string().min(1).optional(),
  userId: z.string().optional(),
})

/** The parameters a provider's callback may carry (SPEC §7), each of bounded length. */
const CALLBACK_PARAMS = new Set(['code', 'state', 'error', 'error_description', 'device_id', 'user', 'iss', 'scope'])
const MAX_CALLBACK_PARAM = 4096

/**
 * Query or form parameters of a provider's callback: known keys, strings only, bounded, so
 * nothing an attacker sends is echoed unbounded into a redirect (found by the fuzz test).
 */
function callbackParams(source: unknown): Record<string, string> | null {
  if (!source || typeof source !== 'object' || Array.isArray(source)) return null
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(source)) {
    if (!CALLBACK_PARAMS.has(key)) continue
    if (typeof value === 'string' && value.length <= MAX_CALLBACK_PARAM) out[key] = value
    else if (value !== undefined && value !== null) return null
  }
  return out
}

export const socialRoutes = [
  defineRoute({
    method: 'POST',
    path: '/sign-in/social',
    body: z.object({
      provider: z.string().min(1),
      callbackURL: z.string().optional(),
      newUserCallbackURL: z.string().optional(),
      errorCallbackURL: z.string().optional(),
      disableRedirect: z.boolean().optional(),
      idToken: idTokenSchema.optional(),
      scopes: z.array(z.string().min(1)).optional(),
      requestSignUp: z.boolean().optional(),
      loginHint: z.string().optional(),
    }),
    handler: async (rc) => {
      const { ctx, body } = rc
      const provider = await requireProvider(ctx, body.provider)
      if (body.idToken) {
        const { idToken } = body
        const attempt = await identifying(ctx, 'social', () =>
          signInWithIdToken(ctx, provider, idToken, body.requestSignUp ?? false, rc.meta),
        )
        return jsonSignInAnswer(await finishSignIn(rc, attempt), (s) => ({
          redirect: false,
          token: s.session.token,
          url: undefined,
          user: toPublicUser(s.user),
        }))
      }
      const { url, state } = await startAuthorization(ctx, provider, body)
      setStateCookie(rc, state)
      return { url, redirect: !body.disableRedirect }
    },
  }),

  /**
   * better-auth before 1.7 started generic OAuth providers here (its genericOAuthClient's
   * signIn.oauth2); 1.7 uses /sign-in/social. Accepted for apps written against the older client:
   * the same redirect flow, the provider named `providerId`.
   */
  defineRoute({
    method: 'POST',
    path: '/sign-in/oauth2',
    body: z.object({
      providerId: z.string().min(1),
      callbackURL: z.string().optional(),
      newUserCallbackURL: z.string().optional(),
      errorCallbackURL: z.string().optional(),
      disableRedirect: z.boolean().optional(),
      scopes: z.array(z.string().min(1)).optional(),
      requestSignUp: z.boolean().optional(),
      loginHint: z.string().optional(),
    }),
    handler: async (rc) => {
      const { ctx, body } = rc
      const { url, state } = await startAuthorization(ctx, await requireProvider(ctx, body.providerId), body)
      setStateCookie(rc, state)
      return { url, redirect: !body.disableRedirect }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/callback/:id',
    handler: async (rc) => {
      const { ctx } = rc
      const params = callbackParams(Object.fromEntries(rc.url.searchParams))
      if (!params) return redirect(`${ctx.baseURL}/error?error=invalid_callback_request`)
      const outcome = await handleCallback(ctx, {
        providerId: rc.params.id ?? '',
        params,
        browserState: browserState(rc),
        meta: rc.meta,
      })
      if (outcome.stateUsed)
        rc.response.headers.append('set-cookie', serializeCookie(stateCookieName(rc), '', rc.names.secure, 0, rc.names.domain))
      if (!outcome.signIn) {
        // A callback ending on an error page before anyone was identified: a refused social sign-in.
        if (/[?&]error=/.test(outcome.location)) ctx.events.signIn('social', 'refused')
        return redirect(outcome.location)
      }
      try {
        const result = await finishSignIn(rc, outcome.signIn)
        if (result.kind === 'second-factor') return redirect(signInStoppedLocation(ctx, outcome, 'second-factor', result.answer))
      } catch (e) {
        return redirect(signInStoppedLocation(ctx, outcome, e))
      }
      return redirect(outcome.location)
    },
  }),

  /**
   * form_post callbacks (Apple) arrive as cross-site POSTs, which carry no Lax cookies: answer
   * with a redirect to the GET callback so the browser presents its state cookie (better-auth 1.7).
   */
  defineRoute({
    method: 'POST',
    path: '/callback/:id',
    handler: (rc) => {
      const { ctx } = rc
      const params = callbackParams(rc.body)
      if (!params) return redirect(`${ctx.baseURL}/error?error=invalid_callback_request`)
      const fromQuery = callbackParams(Object.fromEntries(rc.url.searchParams))
      if (!fromQuery) return redirect(`${ctx.baseURL}/error?error=invalid_callback_request`)
      const query = new URLSearchParams({ ...fromQuery, ...params })
      return redirect(`${ctx.baseURL}/callback/${encodeURIComponent(rc.params.id ?? '')}?${query}`)
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/link-social',
    auth: 'session',
    body: z.object({
      provider: z.string().min(1),
      callbackURL: z.string().optional(),
      errorCallbackURL: z.string().optional(),
      scopes: z.array(z.string().min(1)).optional(),
      disableRedirect: z.boolean().optional(),
      loginHint: z.string().optional(),
      idToken: idTokenSchema.optional(),
    }),
    handler: async (rc) => {
      const { ctx, body, session } = rc
      const provider = await requireProvider(ctx, body.provider)
      if (!ctx.config().account.accountLinking.enabled) throw socialError('LINKING_NOT_ALLOWED')
      const link = { userId: session.user.id, email: session.user.email }
      if (body.idToken) {
        await linkWithIdToken(ctx, provider, body.idToken, link, rc.meta)
        return { url: '', status: true, redirect: false }
      }
      const { url, state } = await startAuthorization(ctx, provider, {
        callbackURL: body.callbackURL,
        errorCallbackURL: body.errorCallbackURL,
        scopes: body.scopes,
        loginHint: body.loginHint,
        link,
      })
      setStateCookie(rc, state)
      return { url, redirect: !body.disableRedirect }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/get-access-token',
    auth: 'session',
    body: accountSelector,
    handler: ({ ctx, body, session }) => getAccessToken(ctx, session.user.id, body),
  }),

  defineRoute({
    method: 'POST',
    path: '/refresh-token',
    auth: 'session',
    body: accountSelector,
    handler: ({ ctx, body, session }) => refreshAccessToken(ctx, session.user.id, body),
  }),

  // better-auth ≥1.4: GET with the internal account id; 1.2: POST with the provider's account id.
  defineRoute({
    method: 'GET',
    path: '/account-info',
    auth: 'session',
    query: z.looseObject({ accountId: z.string().min(1) }),
    handler: ({ ctx, query, session }) => accountInfo(ctx, session.user.id, query.accountId),
  }),

  defineRoute({
    method: 'POST',
    path: '/account-info',
    auth: 'session',
    body: z.object({ accountId: z.string().min(1) }),
    handler: ({ ctx, body, session }) => accountInfo(ctx, session.user.id, body.accountId),
  }),
]
