import { and, asc, count, desc, eq, ne, type SQL, sql } from 'drizzle-orm'
import { generateId } from '../../crypto/random.js'
import { member, team, user } from '../../db/schema.js'
import type { AuthContext } from '../context.js'
import { APIError, fail } from '../errors.js'
import { includesCreatorRole, isKnownRole, joinRoles, type PermissionRequest, parseRoleList, roleHasPermission } from '../org-access.js'
import type { SessionRow } from '../sessions.js'
import { normalizeEmail } from '../users.js'
import { findOrganizationById, resolveReadableOrganization } from './orgs.js'
import {
  assertTeamsEnabled,
  auditOrg,
  insertionOrder,
  joinTeam,
  leaveOrganizationTeams,
  clearActiveOrganization,
  findMembership,
  type MemberRow,
  type MemberWithUser,
  memberUserColumns,
  type OrgActor,
  orgError,
  requireMember,
  requirePermission,
  type SessionChange,
  targetOrganizationId,
} from './shared.js'

/** Validates a role input against the role table: at least one role, all known. Returns the stored form. */
export function checkRoles(ctx: AuthContext, role: string | readonly string[]): string {
  const roles = parseRoleList(role)
  if (roles.length === 0) throw orgError(400, 'ROLE_NOT_FOUND')
  const unknown = roles.filter((r) => !isKnownRole(ctx.config(), r))
  if (unknown.length > 0) throw new APIError(400, 'ROLE_NOT_FOUND', `Role not found: ${unknown.join(', ')}`)
  return joinRoles(roles)
}

/** Number of members holding the creator role ("owner"). */
export function countOwners(ctx: AuthContext, organizationId: string): number {
  return ctx.db
    .select({ role: member.role })
    .from(member)
    .where(eq(member.organizationId, organizationId))
    .all()
    .filter((m) => includesCreatorRole(ctx.config(), m.role)).length
}

export function findMemberById(ctx: AuthContext, id: string): MemberRow | undefined {
  return ctx.db.select().from(member).where(eq(member.id, id)).get()
}

function findMemberByEmail(ctx: AuthContext, organizationId: string, email: string): MemberRow | undefined {
  return ctx.db
    .select({ member })
    .from(member)
    .innerJoin(user, eq(member.userId, user.id))
    .where(and(eq(member.organizationId, organizationId), eq(user.email, normalizeEmail(email))))
    .get()?.member
}

export function withUser(ctx: AuthContext, row: MemberRow): MemberWithUser {
  const u = ctx.db.select(memberUserColumns).from(user).where(eq(user.id, row.userId)).get()
  if (!u) throw fail(400, 'USER_NOT_FOUND')
  return { ...row, user: u }
}

export function assertTeamInOrganization(ctx: AuthContext, organizationId: string, teamId: string): void {
  assertTeamsEnabled(ctx)
  const found = ctx.db
    .select({ id: team.id })
    .from(team)
    .where(and(eq(team.id, teamId), eq(team.organizationId, organizationId)))
    .get()
  if (!found) throw orgError(400, 'TEAM_NOT_FOUND')
}

/**
 * Inserts a member after the data rules: the organization exists, the user is not already a
 * member, and the membership limit is not reached. Call it inside an IMMEDIATE transaction so
 * the count and the insert are one atomic step.
 */
export async function insertMemberChecked(
  ctx: AuthContext,
  input: { organizationId: string; userId: string; role: string; teamId: string | null },
): Promise<MemberRow> {
  if (!findOrganizationById(ctx, input.organizationId)) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  if (await findMembership(ctx, input.organizationId, input.userId)) {
    throw orgError(400, 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION')
  }
  const members = ctx.db.select({ n: count() }).from(member).where(eq(member.organizationId, input.organizationId)).get()?.n ?? 0
  if (members >= ctx.config().organization.membershipLimit) throw orgError(403, 'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED')
  const row: MemberRow = {
    id: generateId(),
    organizationId: input.organizationId,
    userId: input.userId,
    role: input.role,
    teamId: input.teamId,
    createdAt: new Date(ctx.clock.now()),
  }
  ctx.db.insert(member).values(row).run()
  if (input.teamId) joinTeam(ctx, input.teamId, input.userId)
  return row
}

export interface AddMemberInput {
  organizationId?: string
  userId: string
  role: string | string[]
  teamId?: string
}

/** Adds an existing user as a member directly (server / control panel; no HTTP route). */
export async function addMember(ctx: AuthContext, actor: OrgActor, input: AddMemberInput): Promise<MemberRow> {
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  await requirePermission(
    ctx,
    actor,
    orgId,
    { member: ['create'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION'),
    orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
  )
  const role = checkRoles(ctx, input.role)
  if (actor.kind === 'user' && includesCreatorRole(ctx.config(), role)) {
    const caller = await findMembership(ctx, orgId, actor.user.id)
    if (!caller || !includesCreatorRole(ctx.config(), caller.role)) {
      throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE')
    }
  }
  if (input.teamId) {
    if (!ctx.config().organization.teams.enabled) throw orgError(400, 'TEAMS_ARE_NOT_ENABLED')
    assertTeamInOrganization(ctx, orgId, input.teamId)
  }
  if (!ctx.db.select({ id: user.id }).from(user).where(eq(user.id, input.userId)).get()) throw fail(400, 'USER_NOT_FOUND')
  return ctx.storage.transaction(
    async () => {
      const row = await insertMemberChecked(ctx, { organizationId: orgId, userId: input.userId, role, teamId: input.teamId ?? null })
      await auditOrg(ctx, actor, {
        type: 'member.added',
        target: orgId,
        targetUserId: input.userId,
        detail: { memberId: row.id, role, teamId: row.teamId },
      })
      return row
    },
  )
}

function sessionAfterRemoval(actor: OrgActor, organizationId: string, removedUserId: string): SessionRow | null {
  if (actor.kind !== 'user' || !actor.session) return null
  if (actor.user.id !== removedUserId || actor.session.activeOrganizationId !== organizationId) return null
  return { ...actor.session, activeOrganizationId: null, activeTeamId: null }
}

/**
 * Removes a member, named by member id or (when the value contains '@') by email. An owner can be
 * removed only by an owner, and never the last one.
 */
export async function removeMember(
  ctx: AuthContext,
  actor: OrgActor,
  input: { memberIdOrEmail: string; organizationId?: string },
): Promise<{ member: MemberWithUser } & SessionChange> {
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  const caller = await requireMember(ctx, actor, orgId, orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'))
  const conf = ctx.config()
  return ctx.storage.transaction(
    async () => {
      const target = input.memberIdOrEmail.includes('@')
        ? findMemberByEmail(ctx, orgId, input.memberIdOrEmail)
        : findMemberById(ctx, input.memberIdOrEmail)
      if (!target) throw orgError(400, 'MEMBER_NOT_FOUND')
      if (target.organizationId !== orgId) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
      if (includesCreatorRole(conf, target.role)) {
        if (caller && !includesCreatorRole(conf, caller.role)) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
        if (countOwners(ctx, orgId) <= 1) throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER')
      }
      if (caller && !roleHasPermission(conf, caller.role, { member: ['delete'] })) {
        throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
      }
      const removed = withUser(ctx, target)
      ctx.db.delete(member).where(eq(member.id, target.id)).run()
      leaveOrganizationTeams(ctx, orgId, target.userId)
      clearActiveOrganization(ctx, orgId, target.userId)
      await auditOrg(ctx, actor, {
        type: 'member.removed',
        target: orgId,
        targetUserId: target.userId,
        detail: { memberId: target.id, role: target.role },
      })
      return { member: removed, session: sessionAfterRemoval(actor, orgId, target.userId) }
    },
  )
}

/** Leaves an organization; the last owner cannot. */
export async function leaveOrganization(
  ctx: AuthContext,
  actor: Extract<OrgActor, { kind: 'user' }>,
  organizationId: string,
): Promise<{ member: MemberRow } & SessionChange> {
  return ctx.storage.transaction(
    async () => {
      const own = await findMembership(ctx, organizationId, actor.user.id)
      if (!own) throw orgError(400, 'MEMBER_NOT_FOUND')
      if (includesCreatorRole(ctx.config(), own.role) && countOwners(ctx, organizationId) <= 1) {
        throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER')
      }
      ctx.db.delete(member).where(eq(member.id, own.id)).run()
      leaveOrganizationTeams(ctx, organizationId, actor.user.id)
      clearActiveOrganization(ctx, organizationId, actor.user.id)
      await auditOrg(ctx, actor, { type: 'member.left', target: organizationId, detail: { memberId: own.id, role: own.role } })
      return { member: own, session: sessionAfterRemoval(actor, organizationId, actor.user.id) }
    },
  )
}

/**
 * Changes a member's role(s). Only an owner may touch an owner or grant the owner role; the last
 * owner cannot be demoted.
 */
export async function updateMemberRole(
  ctx: AuthContext,
  actor: OrgActor,
  input: { memberId: string; role: string | string[]; organizationId?: string },
): Promise<MemberRow> {
  const conf = ctx.config()
  const role = checkRoles(ctx, input.role)
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  const caller = await requireMember(ctx, actor, orgId, orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'))
  return ctx.storage.transaction(
    async () => {
      const target = findMemberById(ctx, input.memberId)
      if (!target) throw orgError(400, 'MEMBER_NOT_FOUND')
      if (target.organizationId !== orgId) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER')
      const targetIsOwner = includesCreatorRole(conf, target.role)
      const grantsOwner = includesCreatorRole(conf, role)
      if (caller) {
        const callerIsOwner = includesCreatorRole(conf, caller.role)
        if ((targetIsOwner || grantsOwner) && !callerIsOwner) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER')
        if (!callerIsOwner && !roleHasPermission(conf, caller.role, { member: ['update'] })) {
          throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER')
        }
      }
      if (targetIsOwner && !grantsOwner && countOwners(ctx, orgId) <= 1) {
        throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER')
      }
      ctx.db.update(member).set({ role }).where(eq(member.id, target.id)).run()
      await auditOrg(ctx, actor, {
        type: 'member.role-updated',
        target: orgId,
        targetUserId: target.userId,
        detail: { memberId: target.id, from: target.role, to: role },
      })
      return { ...target, role }
    },
  )
}

/** The caller's member row (+ user) in the active organization. */
export async function getActiveMember(ctx: AuthContext, actor: Extract<OrgActor, { kind: 'user' }>): Promise<MemberWithUser> {
  const orgId = actor.session?.activeOrganizationId
  if (!orgId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION')
  const own = await findMembership(ctx, orgId, actor.user.id)
  if (!own) throw orgError(400, 'MEMBER_NOT_FOUND')
  return withUser(ctx, own)
}

async function readableOrgForMembers(
  ctx: AuthContext,
  actor: OrgActor,
  selector: { organizationId?: string; organizationSlug?: string },
) {
  const found = await resolveReadableOrganization(ctx, actor, selector, orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION'))
  if (!found) throw orgError(400, 'NO_ACTIVE_ORGANIZATION')
  return found
}

/** `{role}` of the caller (or of `userId`) in the addressed organization. */
export async function getActiveMemberRole(
  ctx: AuthContext,
  actor: OrgActor,
  query: { userId?: string; organizationId?: string; organizationSlug?: string },
): Promise<{ role: string }> {
  const { org, member: caller } = await readableOrgForMembers(ctx, actor, query)
  if (!query.userId && caller) return { role: caller.role }
  const other = query.userId ? await findMembership(ctx, org.id, query.userId) : undefined
  if (!other) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
  return { role: other.role }
}

export const MEMBER_SORT_FIELDS = ['createdAt', 'role', 'userId', 'id', 'teamId', 'name', 'email'] as const
export const MEMBER_FILTER_FIELDS = ['role', 'userId', 'teamId', 'id', 'email', 'name'] as const
export const MEMBER_FILTER_OPERATORS = ['eq', 'ne', 'contains', 'starts_with', 'ends_with'] as const

export interface ListMembersQuery {
  organizationId?: string
  organizationSlug?: string
  limit?: number
  offset?: number
  sortBy?: (typeof MEMBER_SORT_FIELDS)[number]
  sortDirection?: 'asc' | 'desc'
  filterField?: (typeof MEMBER_FILTER_FIELDS)[number]
  filterOperator?: (typeof MEMBER_FILTER_OPERATORS)[number]
  filterValue?: string
}

const memberColumns = {
  createdAt: member.createdAt,
  role: member.role,
  userId: member.userId,
  id: member.id,
  teamId: member.teamId,
  name: user.name,
  email: user.email,
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}

function memberFilter(query: ListMembersQuery): SQL | undefined {
  if (!query.filterField || query.filterValue === undefined) return undefined
  const column = memberColumns[query.filterField]
  const value = query.filterValue
  switch (query.filterOperator ?? 'eq') {
    case 'ne':
      return ne(column, value)
    case 'contains':
      return sql`${column} like ${`%${escapeLike(value)}%`} escape '\\'`
    case 'starts_with':
      return sql`${column} like ${`${escapeLike(value)}%`} escape '\\'`
    case 'ends_with':
      return sql`${column} like ${`%${escapeLike(value)}`} escape '\\'`
    default:
      return eq(column, value)
  }
}

/** A page of an organization's members (+ user) with the total matching; members only. */
export async function listMembers(
  ctx: AuthContext,
  actor: OrgActor,
  query: ListMembersQuery,
): Promise<{ members: MemberWithUser[]; total: number }> {
  const { org } = await readableOrgForMembers(ctx, actor, query)
  const where = and(eq(member.organizationId, org.id), memberFilter(query))
  const total =
    ctx.db.select({ n: count() }).from(member).innerJoin(user, eq(member.userId, user.id)).where(where).get()?.n ?? 0
  const sortColumn = memberColumns[query.sortBy ?? 'createdAt']
  const rows = ctx.db
    .select({ member, user: memberUserColumns })
    .from(member)
    .innerJoin(user, eq(member.userId, user.id))
    .where(where)
    .orderBy(query.sortDirection === 'desc' ? desc(sortColumn) : asc(sortColumn), insertionOrder(member))
    .limit(Math.max(0, query.limit ?? 100))
    .offset(Math.max(0, query.offset ?? 0))
    .all()
  return { members: rows.map((r) => ({ ...r.member, user: r.user })), total }
}

/** has-permission: whether the caller's role(s) in the addressed organization grant `permissions`. */
export async function checkOrgPermission(
  ctx: AuthContext,
  actor: Extract<OrgActor, { kind: 'user' }>,
  input: { organizationId?: string; permissions: PermissionRequest },
): Promise<{ error: null; success: boolean }> {
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  const own = await findMembership(ctx, orgId, actor.user.id)
  if (!own) throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
  return { error: null, success: roleHasPermission(ctx.config(), own.role, input.permissions) }
}
