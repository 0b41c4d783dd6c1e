import { z } from 'zod'
import { toPublicUser } from '../../core/users.js'
import { assertTrustedCallback } from '../../http/app.js'
import { defineRoute, redirect } from '../../http/route.js'
import { clearSessionCookies } from '../../http/session.js'
import { optionalSession, reissueCookies } from '../email-password/routes.js'
import { changeEmail, changePassword, confirmDeleteUser, deleteUser, listAccounts, unlinkAccount, updateUser } from './rules.js'

/** The signed-in user's own account: profile, password, email change, deletion, linked accounts (SPEC §7 Core). */
export const accountRoutes = [
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
    refusedWhileImpersonating: true,
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
    refusedWhileImpersonating: true,
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
