import { and, asc, count, desc, eq, gt, like, or, type SQL } from 'drizzle-orm'
import { recordAudit } from '../../auth/audit.js'
import { revokeAllSessions } from '../../auth/sessions.js'
import { assertPasswordLength, assertValidEmail, findUserById, insertUser, toPublicUser } from '../../auth/users.js'
import { hashPassword } from '../../crypto/password.js'
import { account, auditEvent, member, organization, session, user } from '../../db/schema.js'
import type { SessionView, UserView } from '../contract.js'
import { type HandlerGroup, notAvailable, PanelError, type PanelEnv } from '../service.js'
import { toAuditView } from './audit.js'

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

export function requireUser(env: PanelEnv, userId: string): UserRow {
  const found = findUserById(env.gatehouse.ctx, userId)
  if (!found) throw new PanelError(404, 'USER_NOT_FOUND', 'User not found')
  return found
}

const SORTABLE = { createdAt: user.createdAt, updatedAt: user.updatedAt, name: user.name, email: user.email, role: user.role } as const

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

export const userHandlers: HandlerGroup<UserOps> = (env) => {
  const ctx = env.gatehouse.ctx
  return {
    'users.list'(input) {
      const conditions: SQL[] = []
      if (input.searchValue) {
        const column = input.searchField === 'name' ? user.name : user.email
        const v = input.searchValue
        const pattern =
          input.searchOperator === 'starts_with' ? `${v}%` : input.searchOperator === 'ends_with' ? `%${v}` : `%${v}%`
        conditions.push(like(column, pattern))
      }
      const where = conditions.length ? and(...conditions) : undefined
      const sortColumn = SORTABLE[(input.sortBy ?? 'createdAt') as keyof typeof SORTABLE] ?? user.createdAt
      const order = input.sortDirection === 'asc' ? asc(sortColumn) : desc(sortColumn)
      const total = ctx.db.select({ n: count() }).from(user).where(where).get()?.n ?? 0
      const rows = ctx.db.select().from(user).where(where).orderBy(order).limit(input.limit).offset(input.offset).all()
      return { users: rows.map(toUserView), total, limit: input.limit, offset: input.offset }
    },

    'users.get'({ userId }) {
      const found = requireUser(env, userId)
      const accounts = ctx.db.select().from(account).where(eq(account.userId, userId)).all()
      const sessions = ctx.db
        .select()
        .from(session)
        .where(and(eq(session.userId, userId), gt(session.expiresAt, new Date(ctx.clock.now()))))
        .orderBy(desc(session.createdAt))
        .all()
      const memberships = ctx.db
        .select({ organizationId: organization.id, name: organization.name, slug: organization.slug, role: member.role })
        .from(member)
        .innerJoin(organization, eq(member.organizationId, organization.id))
        .where(eq(member.userId, userId))
        .all()
      const audit = ctx.db
        .select()
        .from(auditEvent)
        .where(or(eq(auditEvent.actorUserId, userId), eq(auditEvent.targetUserId, userId)))
        .orderBy(desc(auditEvent.id))
        .limit(50)
        .all()
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
      }
    },

    async 'users.create'(input) {
      assertValidEmail(input.email)
      assertPasswordLength(ctx, input.password)
      const hash = await hashPassword(input.password)
      const created = insertUser(ctx, { name: input.name, email: input.email, role: input.role, emailVerified: input.emailVerified }, hash)
      recordAudit(ctx, { type: 'admin.create-user', targetUserId: created.id, meta: PANEL_META, detail: { via: 'panel' } })
      return { user: toUserView(created) }
    },

    'users.revokeSession'({ userId, sessionId }) {
      requireUser(env, userId)
      const result = ctx.db.delete(session).where(and(eq(session.id, sessionId), eq(session.userId, userId))).run()
      if (result.changes === 0) throw new PanelError(404, 'SESSION_NOT_FOUND', 'Session not found')
      recordAudit(ctx, { type: 'session.revoked', targetUserId: userId, target: sessionId, meta: PANEL_META, detail: { via: 'panel' } })
      return { success: true }
    },

    'users.revokeSessions'({ userId }) {
      requireUser(env, userId)
      revokeAllSessions(ctx, userId, PANEL_META, null as unknown as string)
      return { success: true }
    },

    'users.setRole'() {
      throw notAvailable('Setting roles')
    },
    'users.ban'() {
      throw notAvailable('Banning users')
    },
    'users.unban'() {
      throw notAvailable('Unbanning users')
    },
    'users.setPassword'() {
      throw notAvailable('Setting passwords')
    },
    'users.verifyEmail'() {
      throw notAvailable('Verifying emails')
    },
    'users.remove'() {
      throw notAvailable('Removing users')
    },
    'users.impersonationLink'() {
      throw notAvailable('Impersonation')
    },
  }
}
