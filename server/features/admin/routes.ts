import { z } from 'zod'
import { banUser, unbanUser } from './bans.js'
import { userActor } from './actor.js'
import { impersonateUser, redeemImpersonationLink, stopImpersonating } from './impersonation.js'
import { FILTER_OPERATORS, listUsers, SEARCH_FIELDS, SEARCH_OPERATORS } from './list-users.js'
import { checkPermission } from './permissions.js'
import { listSessionsOfUser, revokeUserSession, revokeUserSessions } from './sessions.js'
import { adminUpdateUser, createUser, getUser, removeUser, setRole, setUserPassword } from './users.js'
import { toPublicUser } from '../../core/users.js'
import { unsignValue } from '../../crypto/sign.js'
import { serializeCookie, signedCookieValue } from '../../http/cookies.js'
import { assertTrustedCallback } from '../../http/app.js'
import { defineRoute, type RouteContext, redirect } from '../../http/route.js'
import { clearSessionCookies, expireCookie, hasDontRemember, setSessionCookies } from '../../http/session.js'

/** Admin endpoints (SPEC §7 Admin, reference §4.3, §4.5, §8). Rules live in this folder's rule files. */

const userId = z.string().min(1)
const roleInput = z.union([z.string().min(1), z.array(z.string().min(1))])
const permissionRecord = z.record(z.string(), z.array(z.string()))
const queryNumber = z.union([z.string(), z.number()])

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

function setAdminSessionCookie(rc: AnyRouteContext, value: string): void {
  const { ctx, names } = rc
  rc.response.headers.append(
    'set-cookie',
    serializeCookie(names.adminSession, signedCookieValue(ctx.secret, value), names.secure, ctx.config().session.expiresIn, names.domain),
  )
}

export const adminRoutes = [
  defineRoute({
    method: 'POST',
    path: '/admin/set-role',
    auth: 'session',
    body: z.object({ userId, role: roleInput }),
    handler: async ({ ctx, session, body, meta }) => ({ user: toPublicUser(await setRole(ctx, userActor(session.user), body, meta)) }),
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/create-user',
    auth: 'session',
    body: z.object({
      email: z.string(),
      password: z.string().optional(),
      name: z.string(),
      role: roleInput.optional(),
      data: z.record(z.string(), z.unknown()).optional(),
    }),
    handler: async ({ ctx, session, body, meta }) => ({
      user: toPublicUser(await createUser(ctx, userActor(session.user), body, meta)),
    }),
  }),

  defineRoute({
    method: 'GET',
    path: '/admin/list-users',
    auth: 'session',
    query: z.object({
      searchValue: z.string().optional(),
      searchField: z.enum(SEARCH_FIELDS).optional(),
      searchOperator: z.enum(SEARCH_OPERATORS).optional(),
      limit: queryNumber.optional(),
      offset: queryNumber.optional(),
      sortBy: z.string().optional(),
      sortDirection: z.enum(['asc', 'desc']).optional(),
      filterField: z.string().optional(),
      filterValue: z.union([z.string(), z.number(), z.boolean()]).optional(),
      filterOperator: z.enum(FILTER_OPERATORS).optional(),
    }),
    handler: async ({ ctx, session, query }) => {
      const { users, total } = await listUsers(ctx, userActor(session.user), query)
      // better-auth 1.7 echoes limit and offset only when the request gave them (non-zero).
      const limit = Number(query.limit) || undefined
      const offset = Number(query.offset) || undefined
      return { users: users.map(toPublicUser), total, ...(limit ? { limit } : {}), ...(offset ? { offset } : {}) }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/admin/get-user',
    auth: 'session',
    query: z.object({ id: userId }),
    handler: async ({ ctx, session, query }) => toPublicUser(await getUser(ctx, userActor(session.user), query.id)),
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/update-user',
    auth: 'session',
    body: z.object({ userId, data: z.record(z.string(), z.unknown()) }),
    handler: async ({ ctx, session, body, meta }) => toPublicUser(await adminUpdateUser(ctx, userActor(session.user), body, meta)),
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/list-user-sessions',
    auth: 'session',
    body: z.object({ userId }),
    handler: async ({ ctx, session, body }) => ({ sessions: await listSessionsOfUser(ctx, userActor(session.user), body.userId) }),
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/ban-user',
    auth: 'session',
    body: z.object({ userId, banReason: z.string().optional(), banExpiresIn: z.number().positive().optional() }),
    handler: async ({ ctx, session, body, meta }) => ({ user: toPublicUser(await banUser(ctx, userActor(session.user), body, meta)) }),
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/unban-user',
    auth: 'session',
    body: z.object({ userId }),
    handler: async ({ ctx, session, body, meta }) => ({ user: toPublicUser(await unbanUser(ctx, userActor(session.user), body, meta)) }),
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/impersonate-user',
    auth: 'session',
    body: z.object({ userId }),
    handler: async (rc) => {
      const admin = rc.session
      const created = await impersonateUser(rc.ctx, admin, rc.body, rc.meta)
      // better-auth's sequence: clear the admin's cookies, keep the admin's session in a signed
      // admin_session cookie, then a browser-session cookie for the impersonation session.
      const adminDontRemember = hasDontRemember(rc) ? 'true' : ''
      clearSessionCookies(rc)
      setAdminSessionCookie(rc, `${admin.session.token}:${adminDontRemember}`)
      setSessionCookies(rc, created, { dontRemember: true })
      return { session: created.session, user: toPublicUser(created.user) }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/stop-impersonating',
    auth: 'session',
    handler: async (rc) => {
      const raw = rc.cookies.get(rc.names.adminSession)
      const adminCookie = raw ? unsignValue(rc.ctx.secret, raw) : null
      const { admin, dontRemember } = await stopImpersonating(rc.ctx, rc.session, adminCookie, rc.meta)
      expireCookie(rc, rc.names.adminSession)
      if (!admin) {
        // Opened from a panel link: nobody to return to, so the browser is simply signed out.
        clearSessionCookies(rc)
        return { session: null, user: null }
      }
      if (!dontRemember) expireCookie(rc, rc.names.dontRemember)
      setSessionCookies(rc, admin, { dontRemember })
      return { session: admin.session, user: toPublicUser(admin.user) }
    },
  }),

  /**
   * Opens a control-panel impersonation link: the one-time token becomes an impersonation session
   * (a browser-session cookie) in this browser, then the browser goes on to callbackURL, by
   * default the first trusted app origin.
   */
  defineRoute({
    method: 'GET',
    path: '/admin/impersonation-link',
    query: z.object({ token: z.string().min(1).max(200), callbackURL: z.string().max(2048).optional() }),
    handler: async (rc) => {
      const { ctx, query } = rc
      assertTrustedCallback(ctx, query.callbackURL, 'callbackURL', 'INVALID_CALLBACK_URL')
      const created = await redeemImpersonationLink(ctx, query.token, rc.meta)
      if (!created) return redirect(`${ctx.baseURL}/error?error=invalid_token`)
      setSessionCookies(rc, created, { dontRemember: true })
      const appOrigin = ctx.config().trustedOrigins.find((o) => /^https?:\/\/[^*?]+$/.test(o))
      return redirect(query.callbackURL || (appOrigin ? `${appOrigin}/` : '/'))
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/revoke-user-session',
    auth: 'session',
    body: z.object({ sessionToken: z.string().min(1) }),
    handler: async ({ ctx, session, body, meta }) => {
      await revokeUserSession(ctx, userActor(session.user), body.sessionToken, meta)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/revoke-user-sessions',
    auth: 'session',
    body: z.object({ userId }),
    handler: async ({ ctx, session, body, meta }) => {
      await revokeUserSessions(ctx, userActor(session.user), body.userId, meta)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/remove-user',
    auth: 'session',
    body: z.object({ userId }),
    handler: async ({ ctx, session, body, meta }) => {
      await removeUser(ctx, userActor(session.user), body.userId, meta)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/set-user-password',
    auth: 'session',
    body: z.object({ userId, newPassword: z.string() }),
    handler: async ({ ctx, session, body, meta }) => {
      await setUserPassword(ctx, userActor(session.user), body, meta)
      return { status: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/admin/has-permission',
    auth: 'session',
    body: z.object({
      userId: z.string().optional(),
      role: z.string().optional(),
      permissions: permissionRecord.optional(),
      permission: permissionRecord.optional(),
    }),
    handler: async ({ ctx, session, body }) => ({ error: null, success: await checkPermission(ctx, session.user, body) }),
  }),
]
