import { recentAuditEvents } from '../../auth/audit.js'
import { listUserMemberships } from '../../auth/organizations/index.js'
import { findUserSessionById } from '../../auth/sessions.js'
import {
  banUser,
  createImpersonationLink,
  createUser,
  getUser,
  listSessionsOfUser,
  listUsers,
  removeUser,
  revokeUserSession,
  revokeUserSessions,
  setEmailVerified,
  setRole,
  setUserPassword,
  systemActor,
  unbanUser,
} from '../../auth/admin.js'
import { findUserById, listAccountRows, toPublicUser } from '../../auth/users.js'
import type { session, user } from '../../db/schema.js'
import type { SessionView, UserView } from '../contract.js'
import { PanelError } from '../errors.js'
import type { HandlerGroup, PanelEnv } from '../service.js'
import { peopleOf, toAuditView } from './audit.js'

type UserRow = typeof user.$inferSelect
type SessionRow = typeof session.$inferSelect

/** The panel acts as the server itself: audit events name it instead of a user. */
export const PANEL_META = { ipAddress: null, userAgent: 'gatehouse-panel' }

export const toUserView = (row: UserRow): UserView => {
  const pub = toPublicUser(row)
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    emailVerified: row.emailVerified,
    image: row.image,
    username: row.username,
    displayUsername: row.displayUsername,
    role: row.role,
    banned: row.banned,
    banReason: row.banReason,
    banExpires: row.banExpires ? row.banExpires.getTime() : null,
    createdAt: pub.createdAt.getTime(),
    updatedAt: pub.updatedAt.getTime(),
  }
}

export const toSessionView = (row: SessionRow): SessionView => ({
  id: row.id,
  tokenPreview: `${row.token.slice(0, 6)}…`,
  userId: row.userId,
  expiresAt: row.expiresAt.getTime(),
  createdAt: row.createdAt.getTime(),
  updatedAt: row.updatedAt.getTime(),
  ipAddress: row.ipAddress,
  userAgent: row.userAgent,
  impersonatedBy: row.impersonatedBy,
  activeOrganizationId: row.activeOrganizationId,
})

export async function requireUser(env: PanelEnv, userId: string): Promise<UserRow> {
  const found = await findUserById(env.gatehouse.ctx, userId)
  if (!found) throw new PanelError(404, 'USER_NOT_FOUND', 'User not found')
  return found
}


type UserOps =
  | 'users.list'
  | 'users.get'
  | 'users.create'
  | 'users.setRole'
  | 'users.ban'
  | 'users.unban'
  | 'users.setPassword'
  | 'users.verifyEmail'
  | 'users.revokeSession'
  | 'users.revokeSessions'
  | 'users.remove'
  | 'users.impersonationLink'

const actor = systemActor('panel')

export const userHandlers: HandlerGroup<UserOps> = (env) => {
  const ctx = env.gatehouse.ctx
  return {
    async 'users.list'(input) {
      // list-users semantics: the same domain function as GET /admin/list-users.
      const result = await listUsers(ctx, actor, input)
      return { users: result.users.map(toUserView), total: result.total, limit: input.limit, offset: input.offset }
    },

    async 'users.get'({ userId }) {
      const found = await getUser(ctx, actor, userId)
      const accounts = await listAccountRows(ctx, userId)
      const sessions = (await listSessionsOfUser(ctx, actor, userId)).reverse()
      const memberships = listUserMemberships(ctx, userId)
      const audit = await recentAuditEvents(ctx, 50, userId)
      return {
        user: toUserView(found),
        accounts: accounts.map((a) => ({
          id: a.id,
          providerId: a.providerId,
          accountId: a.accountId,
          scope: a.scope,
          hasPassword: Boolean(a.password),
          createdAt: a.createdAt.getTime(),
          updatedAt: a.updatedAt.getTime(),
        })),
        sessions: sessions.map(toSessionView),
        memberships,
        audit: audit.map(toAuditView),
        people: await peopleOf(ctx, audit),
      }
    },

    async 'users.create'(input) {
      const created = await createUser(
        ctx,
        actor,
        {
          name: input.name,
          email: input.email,
          password: input.password,
          ...(input.role ? { role: input.role.split(',').map((r) => r.trim()).filter(Boolean) } : {}),
          data: input.emailVerified ? { emailVerified: true } : {},
        },
        PANEL_META,
      )
      return { user: toUserView(created) }
    },

    async 'users.setRole'({ userId, role }) {
      return { user: toUserView(await setRole(ctx, actor, { userId, role }, PANEL_META)) }
    },

    async 'users.ban'(input) {
      return { user: toUserView(await banUser(ctx, actor, input, PANEL_META)) }
    },

    async 'users.unban'({ userId }) {
      return { user: toUserView(await unbanUser(ctx, actor, { userId }, PANEL_META)) }
    },

    async 'users.setPassword'(input) {
      await setUserPassword(ctx, actor, input, PANEL_META)
      return { status: true }
    },

    async 'users.verifyEmail'({ userId }) {
      return { user: toUserView(await setEmailVerified(ctx, actor, userId, true, PANEL_META)) }
    },

    async 'users.revokeSession'({ userId, sessionId }) {
      // The renderer never sees session tokens: it names the session by id.
      const found = await findUserSessionById(ctx, userId, sessionId)
      if (!found) throw new PanelError(404, 'SESSION_NOT_FOUND', 'Session not found')
      await revokeUserSession(ctx, actor, found.token, PANEL_META)
      return { success: true }
    },

    async 'users.revokeSessions'({ userId }) {
      await getUser(ctx, actor, userId)
      await revokeUserSessions(ctx, actor, userId, PANEL_META)
      return { success: true }
    },

    async 'users.remove'({ userId }) {
      await removeUser(ctx, actor, userId, PANEL_META)
      return { success: true }
    },

    async 'users.impersonationLink'({ userId }) {
      const { token, expiresAt } = await createImpersonationLink(ctx, actor, userId, PANEL_META)
      return { url: `${env.apiURL()}/admin/impersonation-link?token=${token}`, expiresAt: expiresAt.getTime() }
    },
  }
}
