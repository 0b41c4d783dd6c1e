import type { AuthContext } from '../../core/context.js'
import type { APIError } from '../../core/errors.js'
import { generateId } from '../../crypto/random.js'
import { roleHasPermission } from './access.js'
import { ORG_MESSAGES, orgError } from './errors.js'
import type { TeamMemberRow, TeamRow } from './schema.js'
import {
  assertTeamsEnabled,
  auditOrg,
  joinTeam,
  moveSession,
  type OrgActor,
  requireMember,
  requirePermission,
  type SessionChange,
  type SignedInOrgActor,
  targetOrganizationId,
} from './shared.js'
import {
  countTeams,
  deleteTeamMemberships,
  deleteTeamRow,
  findMembership,
  findOrganizationById,
  findTeamById,
  findTeamMembership,
  insertTeam,
  listOrganizationIdsOfUser,
  listTeamMemberRows,
  listTeamMembershipsOf,
  listTeamsOf,
  listTeamsOfUser,
  updateTeamRow,
} from './store.js'

/** Teams (reference §9.5): one optional team per member row and per invitation, many per user through teamMember. */

export async function createTeam(ctx: AuthContext, actor: OrgActor, input: { name: string; organizationId?: string }): Promise<TeamRow> {
  assertTeamsEnabled(ctx)
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  await requirePermission(
    ctx,
    actor,
    orgId,
    { team: ['create'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION'),
    orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
  )
  if (!(await findOrganizationById(ctx, orgId))) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  const maximum = ctx.config().organization.teams.maximumTeams
  return ctx.storage.transaction(async () => {
    if (maximum !== undefined && (await countTeams(ctx, orgId)) >= maximum) {
      throw orgError(400, 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS')
    }
    const now = new Date(ctx.clock.now())
    const row: TeamRow = { id: generateId(), name: input.name, organizationId: orgId, createdAt: now, updatedAt: now }
    await insertTeam(ctx, row)
    await auditOrg(ctx, actor, { type: 'team.created', target: orgId, detail: { teamId: row.id, name: row.name } })
    return row
  })
}

/** Renames a team. The team's own organization is the one whose permissions apply. */
export async function updateTeam(ctx: AuthContext, actor: OrgActor, input: { teamId: string; data: { name?: string } }): Promise<TeamRow> {
  assertTeamsEnabled(ctx)
  const found = await findTeamById(ctx, input.teamId)
  if (!found) throw orgError(400, 'TEAM_NOT_FOUND')
  await requirePermission(ctx, actor, found.organizationId, { team: ['update'] }, orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM'))
  if (input.data.name === undefined || input.data.name === found.name) return found
  const patch = { name: input.data.name, updatedAt: new Date(ctx.clock.now()) }
  await updateTeamRow(ctx, found.id, patch)
  await auditOrg(ctx, actor, {
    type: 'team.updated',
    target: found.organizationId,
    detail: { teamId: found.id, from: found.name, to: patch.name },
  })
  return { ...found, ...patch }
}

/**
 * Removes a team (its members and invitations keep no team). The last team stays unless
 * teams.allowRemovingAllTeams; a member cannot remove the team they belong to.
 */
export async function removeTeam(
  ctx: AuthContext,
  actor: OrgActor,
  input: { teamId: string; organizationId?: string },
): Promise<{ message: string }> {
  assertTeamsEnabled(ctx)
  const found = await findTeamById(ctx, input.teamId)
  if (!found || (input.organizationId && input.organizationId !== found.organizationId)) {
    throw orgError(400, 'TEAM_NOT_FOUND')
  }
  // better-auth 1.7 refuses the caller's active team before it looks at permissions or the
  // last-team rule (issue 31 §5); the differential test has the step.
  if (actor.kind === 'user' && actor.session?.activeTeamId === found.id) {
    throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM')
  }
  await requirePermission(
    ctx,
    actor,
    found.organizationId,
    { team: ['delete'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION'),
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM'),
  )
  await ctx.storage.transaction(async () => {
    if (!ctx.config().organization.teams.allowRemovingAllTeams && (await countTeams(ctx, found.organizationId)) <= 1) {
      throw orgError(400, 'UNABLE_TO_REMOVE_LAST_TEAM')
    }
    // No session keeps a team that is gone as its active one (its teamMember rows cascade).
    await deleteTeamRow(ctx, found.id)
    await auditOrg(ctx, actor, { type: 'team.removed', target: found.organizationId, detail: { teamId: found.id, name: found.name } })
  })
  return { message: ORG_MESSAGES.TEAM_REMOVED }
}

/** An organization's teams; members only. */
export async function listTeams(ctx: AuthContext, actor: OrgActor, organizationId?: string): Promise<TeamRow[]> {
  assertTeamsEnabled(ctx)
  const orgId = targetOrganizationId(actor, organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  await requireMember(ctx, actor, orgId, orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION'))
  return listTeamsOf(ctx, orgId)
}

/** A team of `organizationId`, or TEAM_NOT_FOUND: a team id is only ever honoured inside its own organization. */
async function teamInOrganization(ctx: AuthContext, teamId: string, organizationId: string): Promise<TeamRow> {
  const found = await findTeamById(ctx, teamId)
  if (!found || found.organizationId !== organizationId) throw orgError(400, 'TEAM_NOT_FOUND')
  return found
}

/**
 * set-active-team: `teamId: null` clears it; no teamId re-reads the current one. The team must be
 * in the session's active organization and the caller one of its members.
 */
export async function setActiveTeam(
  ctx: AuthContext,
  actor: SignedInOrgActor,
  teamId: string | null | undefined,
): Promise<{ team: TeamRow | null } & SessionChange> {
  assertTeamsEnabled(ctx)
  const current = actor.session
  if (teamId === null) {
    if (!current.activeTeamId) return { team: null, session: null }
    return { team: null, session: await moveSession(ctx, current, { activeTeamId: null }) }
  }
  const wanted = teamId || current.activeTeamId
  if (!wanted) return { team: null, session: null }
  if (!current.activeOrganizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION')
  const found = await teamInOrganization(ctx, wanted, current.activeOrganizationId)
  if (!(await findTeamMembership(ctx, found.id, actor.user.id))) throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM')
  const changed = await moveSession(ctx, current, { activeTeamId: found.id })
  await auditOrg(ctx, actor, {
    type: 'team.active-set',
    target: current.id,
    detail: { teamId: found.id, previous: current.activeTeamId ?? null },
  })
  return { team: found, session: changed }
}

/** Teams of the user (or of `userId`, for a member with member:update), in organizations they still belong to. */
export async function listUserTeams(
  ctx: AuthContext,
  actor: SignedInOrgActor,
  query: { userId?: string; organizationId?: string },
): Promise<TeamRow[]> {
  assertTeamsEnabled(ctx)
  const targetUserId = query.userId || actor.user.id
  const organizationId = query.organizationId || actor.session.activeOrganizationId
  if (targetUserId !== actor.user.id) {
    if (!organizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION')
    const requester = await findMembership(ctx, organizationId, actor.user.id)
    if (!requester) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    if (!roleHasPermission(ctx.config(), requester.role, { member: ['update'] })) {
      throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER')
    }
    if (!(await findMembership(ctx, organizationId, targetUserId))) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
    return (await listTeamsOfUser(ctx, targetUserId)).filter((t) => t.organizationId === organizationId)
  }
  if (query.organizationId) {
    if (!(await findMembership(ctx, query.organizationId, actor.user.id))) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    return (await listTeamsOfUser(ctx, actor.user.id)).filter((t) => t.organizationId === query.organizationId)
  }
  const memberOf = new Set(await listOrganizationIdsOfUser(ctx, actor.user.id))
  return (await listTeamsOfUser(ctx, actor.user.id)).filter((t) => memberOf.has(t.organizationId))
}

/** The members of a team (default: the active team); the caller must belong to it. */
export async function listTeamMembers(ctx: AuthContext, actor: SignedInOrgActor, teamId?: string): Promise<TeamMemberRow[]> {
  assertTeamsEnabled(ctx)
  const wanted = teamId || actor.session.activeTeamId
  if (!wanted) throw orgError(400, 'YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM')
  const found = await findTeamById(ctx, wanted)
  if (!found) throw orgError(400, 'TEAM_NOT_FOUND')
  if (!(await findMembership(ctx, found.organizationId, actor.user.id)) || !(await findTeamMembership(ctx, found.id, actor.user.id))) {
    throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM')
  }
  return listTeamMemberRows(ctx, found.id)
}

interface TeamMemberInput {
  teamId: string
  userId: string
  organizationId?: string
}

/**
 * Checks shared by add- and remove-team-member: the caller is a member of the organization with
 * `member:<action>`, the user is a member of it too, and the team is one of its teams.
 */
async function teamMemberChange(
  ctx: AuthContext,
  actor: OrgActor,
  input: TeamMemberInput,
  action: 'update' | 'delete',
  denied: APIError,
): Promise<{ organizationId: string; team: TeamRow }> {
  assertTeamsEnabled(ctx)
  const organizationId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  await requirePermission(
    ctx,
    actor,
    organizationId,
    { member: [action] },
    denied,
    orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
  )
  if (!(await findMembership(ctx, organizationId, input.userId))) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
  const found = await teamInOrganization(ctx, input.teamId, organizationId)
  if (!(await findOrganizationById(ctx, organizationId))) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  return { organizationId, team: found }
}

/** add-team-member: puts a member of the organization in one of its teams (idempotent). */
export async function addTeamMember(ctx: AuthContext, actor: OrgActor, input: TeamMemberInput): Promise<TeamMemberRow> {
  const { organizationId, team: found } = await teamMemberChange(
    ctx,
    actor,
    input,
    'update',
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER'),
  )
  return ctx.storage.transaction(async () => {
    const existing = await findTeamMembership(ctx, found.id, input.userId)
    if (existing) return existing
    const row = await joinTeam(ctx, found.id, input.userId)
    await auditOrg(ctx, actor, {
      type: 'team.member-added',
      target: organizationId,
      targetUserId: input.userId,
      detail: { teamId: found.id },
    })
    return row
  })
}

/** remove-team-member: takes a member out of a team; their sessions stop having it active. */
export async function removeTeamMember(ctx: AuthContext, actor: OrgActor, input: TeamMemberInput): Promise<{ message: string }> {
  const { organizationId, team: found } = await teamMemberChange(
    ctx,
    actor,
    input,
    'delete',
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER'),
  )
  await ctx.storage.transaction(async () => {
    if (!(await findTeamMembership(ctx, found.id, input.userId))) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM')
    await deleteTeamMemberships(ctx, input.userId, [found.id])
    await auditOrg(ctx, actor, {
      type: 'team.member-removed',
      target: organizationId,
      targetUserId: input.userId,
      detail: { teamId: found.id },
    })
  })
  return { message: ORG_MESSAGES.TEAM_MEMBER_REMOVED }
}

/** Who is in which team of an organization (control panel; the system reads every organization). */
export async function listOrganizationTeamMembers(
  ctx: AuthContext,
  organizationId: string,
): Promise<Array<{ teamId: string; userId: string }>> {
  if (!ctx.config().organization.teams.enabled) return []
  return listTeamMembershipsOf(ctx, organizationId)
}

/**
 * Makes a team's members exactly `userIds` (each a member of the organization): the missing ones
 * are added and the others removed, one add- or remove-team-member each (same checks and audit).
 */
export async function setTeamMembers(
  ctx: AuthContext,
  actor: OrgActor,
  input: { organizationId: string; teamId: string; userIds: readonly string[] },
): Promise<{ added: string[]; removed: string[] }> {
  assertTeamsEnabled(ctx)
  const found = await findTeamById(ctx, input.teamId)
  if (!found || found.organizationId !== input.organizationId) throw orgError(400, 'TEAM_NOT_FOUND')
  const wanted = new Set(input.userIds)
  const current = new Set((await listTeamMemberRows(ctx, found.id)).map((r) => r.userId))
  const added = [...wanted].filter((u) => !current.has(u))
  const removed = [...current].filter((u) => !wanted.has(u))
  return ctx.storage.transaction(async () => {
    for (const userId of added) await addTeamMember(ctx, actor, { teamId: found.id, userId, organizationId: input.organizationId })
    for (const userId of removed) await removeTeamMember(ctx, actor, { teamId: found.id, userId, organizationId: input.organizationId })
    return { added, removed }
  })
}
