import { z } from 'zod'
import {
  changeEmail,
  changePassword,
  confirmDeleteUser,
  deleteUser,
  listAccounts,
  unlinkAccount,
  updateUser,
} from '../../auth/account.js'
import { requestVerificationEmail, VerifyEmailError, verifyEmail } from '../../auth/email-verification.js'
import { APIError } from '../../auth/errors.js'
import { isResetTokenValid, RESET_REQUEST_MESSAGE, requestPasswordReset, resetPassword } from '../../auth/password-reset.js'
import type { SessionWithUser } from '../../auth/sessions.js'
import { toPublicUser } from '../../auth/users.js'
import { assertTrustedCallback } from '../app.js'
import { defineRoute, redirect, type RouteContext } from '../route.js'
import { clearSessionCookies, hasDontRemember, resolveRequestSession, setSessionCookies } from '../session.js'

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

/** Re-issues the caller's cookies after a change to the user (keeps the cookie cache in step). */
function reissueCookies(rc: AnyRouteContext, data: SessionWithUser): void {
  setSessionCookies(rc, data, { dontRemember: hasDontRemember(rc) })
}

/** The caller's session on an endpoint where it is optional. */
async function optionalSession(rc: AnyRouteContext): Promise<SessionWithUser | null> {
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

export const accountRoutes = [
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
      return redirect(
        resolveCallback(ctx.baseURL, callbackURL, await isResetTokenValid(ctx, token) ? { token } : { error: 'INVALID_TOKEN' }),
      )
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

  // ------------------------------------------------------------------ profile and password
  defineRoute({
    method: 'POST',
    path: '/update-user',
    auth: 'session',
    body: z.record(z.string(), z.unknown()),
    handler: async (rc) => {
      const updated = await updateUser(rc.ctx, rc.session, rc.body, rc.meta)
      if (updated !== rc.session.user) reissueCookies(rc, { session: rc.session.session, user: updated })
      return { status: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/change-password',
    auth: 'session',
    body: z.object({ newPassword: z.string(), currentPassword: z.string(), revokeOtherSessions: z.boolean().optional() }),
    handler: async (rc) => {
      const result = await changePassword(rc.ctx, rc.session, rc.body, rc.meta)
      if (result.session) reissueCookies(rc, result.session)
      return { token: result.session?.session.token ?? null, user: toPublicUser(result.user) }
    },
  }),

  // ------------------------------------------------------------------ email change
  defineRoute({
    method: 'POST',
    path: '/change-email',
    auth: 'session',
    body: z.object({ newEmail: z.email(), callbackURL: z.string().optional() }),
    handler: async (rc) => {
      const result = await changeEmail(rc.ctx, rc.session, rc.body, rc.meta)
      if (result.changed) reissueCookies(rc, { session: rc.session.session, user: result.user })
      return { status: true }
    },
  }),

  // ------------------------------------------------------------------ deletion
  defineRoute({
    method: 'POST',
    path: '/delete-user',
    auth: 'session',
    body: z.object({ password: z.string().optional(), token: z.string().optional(), callbackURL: z.string().optional() }),
    handler: async (rc) => {
      const message = await deleteUser(rc.ctx, rc.session, rc.body, rc.meta)
      if (message === 'User deleted') clearSessionCookies(rc)
      return { success: true, message }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/delete-user/callback',
    query: z.looseObject({ token: z.string(), callbackURL: z.string().optional() }),
    handler: async (rc) => {
      const { ctx, query } = rc
      assertTrustedCallback(ctx, query.callbackURL, 'callbackURL', 'INVALID_CALLBACK_URL')
      await confirmDeleteUser(ctx, await optionalSession(rc), query.token, rc.meta)
      clearSessionCookies(rc)
      if (query.callbackURL) return redirect(query.callbackURL)
      return { success: true, message: 'User deleted' }
    },
  }),

  // ------------------------------------------------------------------ linked accounts
  defineRoute({
    method: 'GET',
    path: '/list-accounts',
    auth: 'session',
    handler: ({ ctx, session }) => listAccounts(ctx, session.user.id),
  }),

  defineRoute({
    method: 'POST',
    path: '/unlink-account',
    auth: 'fresh',
    body: z
      .object({ providerId: z.string().min(1).optional(), accountId: z.string().min(1).optional() })
      .refine((b) => b.providerId !== undefined || b.accountId !== undefined, {
        message: 'providerId or accountId is required',
      }),
    handler: async ({ ctx, session, body, meta }) => {
      await unlinkAccount(ctx, session, body, meta)
      return { status: true }
    },
  }),
]
