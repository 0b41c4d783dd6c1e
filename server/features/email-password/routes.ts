import { z } from 'zod'
import { APIError } from '../../core/errors.js'
import type { SessionWithUser } from '../../core/sessions.js'
import { toPublicUser } from '../../core/users.js'
import { assertTrustedCallback } from '../../http/app.js'
import { defineRoute, type RouteContext, redirect } from '../../http/route.js'
import { hasDontRemember, resolveRequestSession, setSessionCookies } from '../../http/session.js'
import { finishSignIn, secondFactorStepURL, signInAnswer } from '../../http/sign-in.js'
import { isResetTokenValid, RESET_REQUEST_MESSAGE, requestPasswordReset, resetPassword } from './password-reset.js'
import { signInEmail } from './sign-in.js'
import { signUpEmail } from './sign-up.js'
import { requestVerificationEmail, VerifyEmailError, verifyEmail } from './verification.js'

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

/** Re-issues the caller's cookies after a change to the user (keeps the cookie cache in step). */
export function reissueCookies(rc: AnyRouteContext, data: SessionWithUser): void {
  setSessionCookies(rc, data, { dontRemember: hasDontRemember(rc) })
}

/** The caller's session on an endpoint where it is optional. */
export async function optionalSession(rc: AnyRouteContext): Promise<SessionWithUser | null> {
  const resolved = await resolveRequestSession(rc)
  return resolved.status === 'active' ? resolved.data : null
}

/** callbackURL + `error=code`, joined with ? or & (reference §4.1 verify-email). */
function withError(callbackURL: string, error: string): string {
  return `${callbackURL}${callbackURL.includes('?') ? '&' : '?'}error=${error}`
}

/** An absolute URL for a callbackURL that may be relative to the base URL, with params set. */
function resolveCallback(baseURL: string, callbackURL: string, params: Record<string, string>): string {
  const url = new URL(callbackURL, baseURL)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

const passwordResetBody = z.object({ email: z.email(), redirectTo: z.string().optional() })

const requestReset = (path: string) =>
  defineRoute({
    method: 'POST',
    path,
    body: passwordResetBody,
    handler: async ({ ctx, body, meta }) => {
      await requestPasswordReset(ctx, body, meta)
      return { status: true, message: RESET_REQUEST_MESSAGE }
    },
  })

/** Sign-up, sign-in, email verification and password reset by email (SPEC §4, §7 Core). */
export const emailPasswordRoutes = [
  defineRoute({
    method: 'POST',
    path: '/sign-up/email',
    body: z.looseObject({
      name: z.string(),
      email: z.string(),
      password: z.string(),
      image: z.string().nullish(),
      callbackURL: z.string().optional(),
      rememberMe: z.boolean().optional(),
    }),
    handler: async (rc) => {
      const { body } = rc
      const result = await signUpEmail(
        rc.ctx,
        { name: body.name, email: body.email, password: body.password, image: body.image, rememberMe: body.rememberMe, extra: body },
        rc.meta,
      )
      const finished = result.signIn ? await finishSignIn(rc, result.signIn) : null
      if (finished?.kind !== 'session') return { token: null, user: toPublicUser(result.user) }
      return { token: finished.signedIn.session.token, user: toPublicUser(result.user), ...finished.extra }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/sign-in/email',
    body: z.object({
      email: z.string(),
      password: z.string(),
      callbackURL: z.string().optional(),
      rememberMe: z.boolean().optional(),
    }),
    handler: async (rc) => {
      const { body } = rc
      return signInAnswer(rc, () => signInEmail(rc.ctx, body, rc.meta), 'email', body)
    },
  }),

  // ------------------------------------------------------------------ email verification
  defineRoute({
    method: 'POST',
    path: '/send-verification-email',
    body: z.object({ email: z.email(), callbackURL: z.string().optional() }),
    handler: async (rc) => {
      await requestVerificationEmail(rc.ctx, { ...rc.body, session: await optionalSession(rc) }, rc.meta)
      return { status: true }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/verify-email',
    query: z.looseObject({ token: z.string(), callbackURL: z.string().optional() }),
    handler: async (rc) => {
      const { ctx, query } = rc
      assertTrustedCallback(ctx, query.callbackURL, 'callbackURL', 'INVALID_CALLBACK_URL')
      let result: Awaited<ReturnType<typeof verifyEmail>>
      try {
        result = await verifyEmail(ctx, { token: query.token, callbackURL: query.callbackURL, session: await optionalSession(rc) }, rc.meta)
      } catch (e) {
        if (!(e instanceof VerifyEmailError)) throw e
        if (query.callbackURL) return redirect(withError(query.callbackURL, e.error))
        throw new APIError(401, e.error.toUpperCase(), e.error)
      }
      if (result.session) reissueCookies(rc, result.session)
      if (result.kind === 'verified' && result.signIn) {
        const finished = await finishSignIn(rc, result.signIn)
        if (finished.kind === 'second-factor' && query.callbackURL)
          return redirect(secondFactorStepURL(ctx, query.callbackURL, finished.answer) ?? query.callbackURL)
      }
      if (query.callbackURL) return redirect(query.callbackURL)
      return { status: true, user: result.kind === 'email-changed' ? toPublicUser(result.user) : null }
    },
  }),

  // ------------------------------------------------------------------ password reset
  requestReset('/request-password-reset'),
  // Deprecated alias kept by better-auth 1.2 (removed in 1.4).
  requestReset('/forget-password'),

  defineRoute({
    method: 'GET',
    path: '/reset-password/:token',
    query: z.looseObject({ callbackURL: z.string().optional() }),
    handler: async ({ ctx, params, query }) => {
      const callbackURL = query.callbackURL
      assertTrustedCallback(ctx, callbackURL, 'callbackURL', 'INVALID_CALLBACK_URL')
      if (!callbackURL) return redirect(resolveCallback(ctx.baseURL, `${ctx.baseURL}/error`, { error: 'INVALID_TOKEN' }))
      const token = params.token ?? ''
      const valid = await isResetTokenValid(ctx, token)
      return redirect(resolveCallback(ctx.baseURL, callbackURL, valid ? { token } : { error: 'INVALID_TOKEN' }))
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/reset-password',
    body: z.object({ newPassword: z.string(), token: z.string().optional() }),
    handler: async ({ ctx, body, url, meta }) => {
      await resetPassword(ctx, { token: body.token || url.searchParams.get('token') || undefined, newPassword: body.newPassword }, meta)
      return { status: true }
    },
  }),
]
