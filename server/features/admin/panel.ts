import type { AuthContext } from '../../core/context.js'
import { latestAuditEventAbout, recentAuditEvents } from '../../core/audit.js'
import { listUserMemberships } from '../organization/orgs.js'
import { findUserSessionById, type SessionRow, type UserRow } from '../../core/sessions.js'
import { listAccountRows, toPublicUser } from '../../core/users.js'
import { parseRoleList } from '../../core/access-control.js'
import { PANEL_META } from '../../panel-frame/op.js'
import { peopleOf, toAuditView } from '../../panel-frame/audit-views.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { actorMay, panelActor } from './actor.js'
import { banUser, unbanUser } from './bans.js'
import { adminError } from './errors.js'
import { createImpersonationLink } from './impersonation.js'
import { listUsers, searchUsersEverywhere } from './list-users.js'
import type { adminContract, SessionView, UserView } from './panel-contract.js'
import { listSessionsOfUser, revokeUserSession, revokeUserSessions } from './sessions.js'
import { inviteToSignUp } from './sign-up-invitations.js'
import { bulkUserAction, liftUserLocks, sendPasswordResetMail, sendSetUpLinkMail, sendVerificationMail, userLocks } from './support.js'
import { adminUpdateUser, createUser, getUser, removeUser, setEmailVerified, setRole, setUserPassword } from './users.js'
import { knownRoles } from './access.js'
import type { z } from 'zod'

type Input<K extends keyof typeof adminContract> = z.output<(typeof adminContract)[K]['input']>

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
    isAnonymous: row.isAnonymous === true,
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

/** Who acted when no user did: the panel's OS account or recovery link (`detail.actor`), else the way it came (`via`). */
const banActor = (detail: Record<string, unknown> | null): string | null =>
  typeof detail?.actor === 'string' ? detail.actor : typeof detail?.via === 'string' ? detail.via : null

/** A page of users, with list-users semantics: the same domain function as GET /admin/list-users. */
async function listUserViews(ctx: AuthContext, input: Input<'users.list'>) {
  const { searchField, searchOperator, ...rest } = input
  const result =
    searchField === 'any' && input.searchValue
      ? await searchUsersEverywhere(ctx, panelActor(), { ...rest, searchValue: input.searchValue })
      : await listUsers(ctx, panelActor(), { ...rest, ...(searchField && searchField !== 'any' ? { searchField } : {}), searchOperator })
  return { users: result.users.map(toUserView), total: result.total, limit: input.limit, offset: input.offset }
}

/** Everything the user's page shows: accounts, sessions, memberships, audit, ban, last sign-in method, locks. */
async function userDetail(ctx: AuthContext, userId: string) {
  const actor = panelActor()
  const found = await getUser(ctx, actor, userId)
  const accounts = await listAccountRows(ctx, userId)
  // A role without session:list (a view-only support role) sees the user without their sessions.
  const sessions = actorMay(ctx, actor, ['session', 'list']) ? (await listSessionsOfUser(ctx, actor, userId)).reverse() : []
  const memberships = await listUserMemberships(ctx, userId)
  const audit = await recentAuditEvents(ctx, 50, userId)
  // Who banned the user and when: the ban's own audit entry (the user row keeps reason and expiry only).
  const banned = found.banned ? await latestAuditEventAbout(ctx, 'admin.ban-user', userId) : null
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
    people: await peopleOf(ctx, banned ? [...audit, banned] : audit),
    ban: banned ? { byUserId: banned.actorUserId, by: banActor(banned.detail), at: banned.createdAt.getTime() } : null,
    lastLoginMethod: { stored: ctx.config().lastLoginMethod.storeInDatabase, method: found.lastLoginMethod ?? null },
    locks: (await userLocks(ctx, actor, userId)).map((l) => ({ ...l, lockedUntil: l.lockedUntil.getTime() })),
  }
}

/** Creates a user as the panel's form asks (roles as a list, optionally verified). */
function createUserFromPanel(ctx: AuthContext, input: Input<'users.create'>): Promise<UserRow> {
  const roles = parseRoleList(input.role)
  return createUser(
    ctx,
    panelActor(),
    {
      name: input.name,
      email: input.email,
      password: input.password,
      ...(roles.length > 0 ? { role: roles } : {}),
      data: input.emailVerified ? { emailVerified: true } : {},
    },
    PANEL_META,
  )
}

/** The panel's user operations: the operator acts through the same admin rules as the HTTP API. */
export const adminPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  // The signed-in admin (their roles decide), or the operator (desktop, recovery link).
  const actor = panelActor
  return {
    async 'users.list'(input: Input<'users.list'>) {
      return listUserViews(ctx, input)
    },

    async 'users.get'({ userId }: Input<'users.get'>) {
      return userDetail(ctx, userId)
    },

    async 'users.roles'() {
      return { roles: Object.keys(knownRoles(ctx.config())) }
    },

    async 'users.update'({ userId, name, email }: Input<'users.update'>) {
      const data = { ...(name !== undefined ? { name } : {}), ...(email !== undefined ? { email } : {}) }
      return { user: toUserView(await adminUpdateUser(ctx, actor(), { userId, data }, PANEL_META)) }
    },

    async 'users.inviteToSignUp'({ email }: Input<'users.inviteToSignUp'>) {
      return await inviteToSignUp(ctx, actor(), { email }, PANEL_META)
    },

    async 'users.sendPasswordReset'({ userId }: Input<'users.sendPasswordReset'>) {
      await sendPasswordResetMail(ctx, actor(), userId, PANEL_META)
      return { success: true }
    },

    async 'users.sendVerification'({ userId }: Input<'users.sendVerification'>) {
      await sendVerificationMail(ctx, actor(), userId, PANEL_META)
      return { success: true }
    },

    async 'users.sendSetUpLink'({ userId }: Input<'users.sendSetUpLink'>) {
      await sendSetUpLinkMail(ctx, actor(), userId, PANEL_META)
      return { success: true }
    },

    async 'users.unlock'({ userId }: Input<'users.unlock'>) {
      return { lifted: await liftUserLocks(ctx, actor(), userId, PANEL_META) }
    },

    async 'users.bulk'(input: Input<'users.bulk'>) {
      return bulkUserAction(ctx, actor(), input, PANEL_META)
    },

    async 'users.create'(input: Input<'users.create'>) {
      return { user: toUserView(await createUserFromPanel(ctx, input)) }
    },

    async 'users.setRole'({ userId, role }: Input<'users.setRole'>) {
      return { user: toUserView(await setRole(ctx, actor(), { userId, role }, PANEL_META)) }
    },

    async 'users.ban'(input: Input<'users.ban'>) {
      return { user: toUserView(await banUser(ctx, actor(), input, PANEL_META)) }
    },

    async 'users.unban'({ userId }: Input<'users.unban'>) {
      return { user: toUserView(await unbanUser(ctx, actor(), { userId }, PANEL_META)) }
    },

    async 'users.setPassword'(input: Input<'users.setPassword'>) {
      await setUserPassword(ctx, actor(), input, PANEL_META)
      return { status: true }
    },

    async 'users.verifyEmail'({ userId }: Input<'users.verifyEmail'>) {
      return { user: toUserView(await setEmailVerified(ctx, actor(), userId, true, PANEL_META)) }
    },

    async 'users.revokeSession'({ userId, sessionId }: Input<'users.revokeSession'>) {
      // The renderer never sees session tokens: it names the session by id.
      const found = await findUserSessionById(ctx, userId, sessionId)
      if (!found) throw adminError(404, 'SESSION_NOT_FOUND')
      await revokeUserSession(ctx, actor(), found.token, PANEL_META)
      return { success: true }
    },

    async 'users.revokeSessions'({ userId }: Input<'users.revokeSessions'>) {
      await getUser(ctx, actor(), userId)
      await revokeUserSessions(ctx, actor(), userId, PANEL_META)
      return { success: true }
    },

    async 'users.remove'({ userId }: Input<'users.remove'>) {
      await removeUser(ctx, actor(), userId, PANEL_META)
      return { success: true }
    },

    async 'users.impersonationLink'({ userId }: Input<'users.impersonationLink'>) {
      const { token, expiresAt } = await createImpersonationLink(ctx, actor(), userId, PANEL_META)
      return { url: `${env.apiURL()}/admin/impersonation-link?token=${token}`, expiresAt: expiresAt.getTime() }
    },
  }
}
