import type { AuthContext } from '../../core/context.js'
import { fail } from '../../core/errors.js'
import type { SessionRow } from '../../core/sessions.js'
import { normalizeEmail } from '../../core/user-store.js'
import { joinRoles, type PermissionRequest, parseRoleList } from '../../core/access-control.js'
import { generateId } from '../../crypto/random.js'
import { includesCreatorRole, isKnownRole, roleHasPermission } from './access.js'
import { orgError, roleNotFound } from './errors.js'
import { resolveReadableOrganization } from './orgs.js'
import type { MemberRow } from './schema.js'
import {
  auditOrg,
  joinTeam,
  type OrgActor,
  requireMember,
  requirePermission,
  type SessionChange,
  type UserOrgActor,
  targetOrganizationId,
} from './shared.js'
import { clearActiveOrganization } from '../../core/sessions.js'
import {
  countMembers,
  deleteMemberRow,
  deleteTeamMemberships,
  findMemberByEmail,
  findMemberById,
  findMembership,
  findMemberUser,
  findOrganizationById,
  findTeamById,
  insertMember,
  listMemberRoles,
  listTeamIdsOf,
  type MemberPageQuery,
  type MemberWithUser,
  pageMembers,
  updateMemberRoleRow,
  userExists,
} from './store.js'

/** Validates a role input against the role table: at least one role, all known. Returns the stored form. */
export function checkRoles(ctx: AuthContext, role: string | readonly string[]): string {
  const roles = parseRoleList(role)
  if (roles.length === 0) throw orgError(400, 'ROLE_NOT_FOUND')
  const unknown = roles.filter((r) => !isKnownRole(ctx.config(), r))
  if (unknown.length > 0) throw roleNotFound(unknown)
  return joinRoles(roles)
}

/** Number of members holding the creator role ("owner"). */
async function countOwners(ctx: AuthContext, organizationId: string): Promise<number> {
  return (await listMemberRoles(ctx, organizationId)).filter((m) => includesCreatorRole(ctx.config(), m.role)).length
}

/** The earliest owner (else the earliest member): who a system-made invitation comes from when no inviter is named. */
export async function earliestOwner(ctx: AuthContext, organizationId: string): Promise<string | null> {
  const members = await listMemberRoles(ctx, organizationId)
  return members.find((m) => includesCreatorRole(ctx.config(), m.role))?.userId ?? members[0]?.userId ?? null
}

async function withUser(ctx: AuthContext, row: MemberRow): Promise<MemberWithUser> {
  const u = await findMemberUser(ctx, row.userId)
  if (!u) throw fail(400, 'USER_NOT_FOUND')
  return { ...row, user: u }
}

/** A team id given with a member or an invitation: teams on, and the team one of this organization's. */
export async function assertTeamInOrganization(ctx: AuthContext, organizationId: string, teamId: string): Promise<void> {
  if (!ctx.config().organization.teams.enabled) throw orgError(400, 'TEAMS_ARE_NOT_ENABLED')
  const found = await findTeamById(ctx, teamId)
  if (found?.organizationId !== organizationId) throw orgError(400, 'TEAM_NOT_FOUND')
}

/**
 * Inserts a member after the data rules: the organization exists, the user is not already a
 * member, and the membership limit is not reached. Call it inside a transaction so the count and
 * the insert are one atomic step.
 */
export async function insertMemberChecked(
  ctx: AuthContext,
  input: { organizationId: string; userId: string; role: string; teamId: string | null },
): Promise<MemberRow> {
  if (!(await findOrganizationById(ctx, input.organizationId))) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  if (await findMembership(ctx, input.organizationId, input.userId)) {
    throw orgError(400, 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION')
  }
  if ((await countMembers(ctx, input.organizationId)) >= ctx.config().organization.membershipLimit) {
    throw orgError(403, 'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED')
  }
  const row: MemberRow = {
    id: generateId(),
    organizationId: input.organizationId,
    userId: input.userId,
    role: input.role,
    teamId: input.teamId,
    createdAt: new Date(ctx.clock.now()),
  }
  await insertMember(ctx, row)
  if (input.teamId) await joinTeam(ctx, input.teamId, input.userId)
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
  if (input.teamId) await assertTeamInOrganization(ctx, orgId, input.teamId)
  if (!(await userExists(ctx, input.userId))) throw fail(400, 'USER_NOT_FOUND')
  return ctx.storage.transaction(async () => {
    const row = await insertMemberChecked(ctx, { organizationId: orgId, userId: input.userId, role, teamId: input.teamId ?? null })
    await auditOrg(ctx, actor, {
      type: 'member.added',
      target: orgId,
      targetUserId: input.userId,
      detail: { memberId: row.id, role, teamId: row.teamId },
    })
    return row
  })
}

function sessionAfterRemoval(actor: OrgActor, organizationId: string, removedUserId: string): SessionRow | null {
  if (actor.kind !== 'user' || !actor.session) return null
  if (actor.user.id !== removedUserId || actor.session.activeOrganizationId !== organizationId) return null
  return { ...actor.session, activeOrganizationId: null, activeTeamId: null }
}

/** A member leaves: the row, their teams of the organization, and the organization as any session's active one. */
async function dropMember(ctx: AuthContext, organizationId: string, row: MemberRow): Promise<void> {
  await deleteMemberRow(ctx, row.id)
  await deleteTeamMemberships(ctx, row.userId, await listTeamIdsOf(ctx, organizationId))
  await clearActiveOrganization(ctx, organizationId, row.userId)
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
  return ctx.storage.transaction(async () => {
    const target = input.memberIdOrEmail.includes('@')
      ? await findMemberByEmail(ctx, orgId, normalizeEmail(input.memberIdOrEmail))
      : await findMemberById(ctx, input.memberIdOrEmail)
    if (!target) throw orgError(400, 'MEMBER_NOT_FOUND')
    if (target.organizationId !== orgId) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
    if (includesCreatorRole(conf, target.role)) {
      if (caller && !includesCreatorRole(conf, caller.role)) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
      if ((await countOwners(ctx, orgId)) <= 1) throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER')
    }
    if (caller && !roleHasPermission(conf, caller.role, { member: ['delete'] })) {
      throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
    }
    const removed = await withUser(ctx, target)
    await dropMember(ctx, orgId, target)
    await auditOrg(ctx, actor, {
      type: 'member.removed',
      target: orgId,
      targetUserId: target.userId,
      detail: { memberId: target.id, role: target.role },
    })
    return { member: removed, session: sessionAfterRemoval(actor, orgId, target.userId) }
  })
}

/** Leaves an organization; the last owner cannot. */
export async function leaveOrganization(
  ctx: AuthContext,
  actor: UserOrgActor,
  organizationId: string,
): Promise<{ member: MemberRow } & SessionChange> {
  return ctx.storage.transaction(async () => {
    const own = await findMembership(ctx, organizationId, actor.user.id)
    if (!own) throw orgError(400, 'MEMBER_NOT_FOUND')
    if (includesCreatorRole(ctx.config(), own.role) && (await countOwners(ctx, organizationId)) <= 1) {
      throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER')
    }
    await dropMember(ctx, organizationId, own)
    await auditOrg(ctx, actor, { type: 'member.left', target: organizationId, detail: { memberId: own.id, role: own.role } })
    return { member: own, session: sessionAfterRemoval(actor, organizationId, actor.user.id) }
  })
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
  return ctx.storage.transaction(async () => {
    const target = await findMemberById(ctx, input.memberId)
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
    if (targetIsOwner && !grantsOwner && (await countOwners(ctx, orgId)) <= 1) {
      throw orgError(400, 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER')
    }
    await updateMemberRoleRow(ctx, target.id, role)
    await auditOrg(ctx, actor, {
      type: 'member.role-updated',
      target: orgId,
      targetUserId: target.userId,
      detail: { memberId: target.id, from: target.role, to: role },
    })
    return { ...target, role }
  })
}

/** The caller's member row (+ user) in the active organization. */
export async function getActiveMember(ctx: AuthContext, actor: UserOrgActor): Promise<MemberWithUser> {
  const orgId = actor.session?.activeOrganizationId
  if (!orgId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION')
  const own = await findMembership(ctx, orgId, actor.user.id)
  if (!own) throw orgError(400, 'MEMBER_NOT_FOUND')
  return withUser(ctx, own)
}

async function readableOrgForMembers(ctx: AuthContext, actor: OrgActor, selector: { organizationId?: string; organizationSlug?: string }) {
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

export interface ListMembersQuery extends MemberPageQuery {
  organizationId?: string
  organizationSlug?: string
}

/** A page of an organization's members (+ user) with the total matching; members only. */
export async function listMembers(
  ctx: AuthContext,
  actor: OrgActor,
  query: ListMembersQuery,
): Promise<{ members: MemberWithUser[]; total: number }> {
  const { org } = await readableOrgForMembers(ctx, actor, query)
  return pageMembers(ctx, org.id, query)
}

/** has-permission: whether the caller's role(s) in the addressed organization grant `permissions`. */
export async function checkOrgPermission(
  ctx: AuthContext,
  actor: UserOrgActor,
  input: { organizationId?: string; permissions: PermissionRequest },
): Promise<{ error: null; success: boolean }> {
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  const own = await findMembership(ctx, orgId, actor.user.id)
  if (!own) throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
  return { error: null, success: roleHasPermission(ctx.config(), own.role, input.permissions) }
}
