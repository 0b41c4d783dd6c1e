import { and, asc, count, eq, inArray } from 'drizzle-orm'
import { generateId } from '../../crypto/random.js'
import { member, session, team, teamMember } from '../../db/schema.js'
import type { AuthContext } from '../context.js'
import { roleHasPermission } from '../org-access.js'
import { findOrganizationById } from './orgs.js'
import {
  assertTeamsEnabled,
  auditOrg,
  findMembership,
  findTeamMembership,
  insertionOrder,
  joinTeam,
  type OrgActor,
  orgError,
  requireMember,
  requirePermission,
  type SessionChange,
  type SignedInOrgActor,
  setSessionActiveTeam,
  type TeamMemberRow,
  type TeamRow,
  targetOrganizationId,
} from './shared.js'

/** Teams (reference §9.5): one optional team per member row and per invitation. */

export function findTeamById(ctx: AuthContext, id: string): TeamRow | undefined {
  return ctx.db.select().from(team).where(eq(team.id, id)).get()
}

function countTeams(ctx: AuthContext, organizationId: string): number {
  return ctx.db.select({ n: count() }).from(team).where(eq(team.organizationId, organizationId)).get()?.n ?? 0
}

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
  if (!findOrganizationById(ctx, orgId)) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  const maximum = ctx.config().organization.teams.maximumTeams
  return ctx.storage.transaction(
    async () => {
      if (maximum !== undefined && countTeams(ctx, orgId) >= maximum) {
        throw orgError(400, 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS')
      }
      const now = new Date(ctx.clock.now())
      const row: TeamRow = { id: generateId(), name: input.name, organizationId: orgId, createdAt: now, updatedAt: now }
      ctx.db.insert(team).values(row).run()
      await auditOrg(ctx, actor, { type: 'team.created', target: orgId, detail: { teamId: row.id, name: row.name } })
      return row
    },
  )
}

/** Renames a team. The team's own organization is the one whose permissions apply. */
export async function updateTeam(ctx: AuthContext, actor: OrgActor, input: { teamId: string; data: { name?: string } }): Promise<TeamRow> {
  assertTeamsEnabled(ctx)
  const found = findTeamById(ctx, input.teamId)
  if (!found) throw orgError(400, 'TEAM_NOT_FOUND')
  await requirePermission(ctx, actor, found.organizationId, { team: ['update'] }, orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM'))
  if (input.data.name === undefined || input.data.name === found.name) return found
  const patch = { name: input.data.name, updatedAt: new Date(ctx.clock.now()) }
  ctx.db.update(team).set(patch).where(eq(team.id, found.id)).run()
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
  const found = findTeamById(ctx, input.teamId)
  if (!found || (input.organizationId && input.organizationId !== found.organizationId)) {
    throw orgError(400, 'TEAM_NOT_FOUND')
  }
  const caller = await requirePermission(
    ctx,
    actor,
    found.organizationId,
    { team: ['delete'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION'),
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM'),
  )
  await ctx.storage.transaction(
    async () => {
      if (!ctx.config().organization.teams.allowRemovingAllTeams && countTeams(ctx, found.organizationId) <= 1) {
        throw orgError(400, 'UNABLE_TO_REMOVE_LAST_TEAM')
      }
      if (caller && actor.kind === 'user' && actor.session?.activeTeamId === found.id) {
        throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM')
      }
      ctx.db.delete(team).where(eq(team.id, found.id)).run()
      // No session keeps a team that is gone as its active one (its teamMember rows cascade).
      ctx.db.update(session).set({ activeTeamId: null }).where(eq(session.activeTeamId, found.id)).run()
      await auditOrg(ctx, actor, { type: 'team.removed', target: found.organizationId, detail: { teamId: found.id, name: found.name } })
    },
  )
  return { message: 'Team removed successfully.' }
}

/** An organization's teams; members only. */
export async function listTeams(ctx: AuthContext, actor: OrgActor, organizationId?: string): Promise<TeamRow[]> {
  assertTeamsEnabled(ctx)
  const orgId = targetOrganizationId(actor, organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  await requireMember(ctx, actor, orgId, orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION'))
  return ctx.db.select().from(team).where(eq(team.organizationId, orgId)).orderBy(asc(team.createdAt), insertionOrder(team)).all()
}

/** A team of `organizationId`, or TEAM_NOT_FOUND: a team id is only ever honoured inside its own organization. */
function teamInOrganization(ctx: AuthContext, teamId: string, organizationId: string): TeamRow {
  const found = findTeamById(ctx, teamId)
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
    return { team: null, session: setSessionActiveTeam(ctx, current, null) }
  }
  const wanted = teamId || current.activeTeamId
  if (!wanted) return { team: null, session: null }
  if (!current.activeOrganizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION')
  const found = teamInOrganization(ctx, wanted, current.activeOrganizationId)
  if (!findTeamMembership(ctx, found.id, actor.user.id)) throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM')
  const changed = setSessionActiveTeam(ctx, current, found.id)
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
  const teamsOf = (userId: string): TeamRow[] =>
    ctx.db
      .select({ team })
      .from(teamMember)
      .innerJoin(team, eq(teamMember.teamId, team.id))
      .where(eq(teamMember.userId, userId))
      .orderBy(asc(teamMember.createdAt), insertionOrder(teamMember))
      .all()
      .map((r) => r.team)
  if (targetUserId !== actor.user.id) {
    if (!organizationId) throw orgError(400, 'NO_ACTIVE_ORGANIZATION')
    const requester = await findMembership(ctx, organizationId, actor.user.id)
    if (!requester) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    if (!roleHasPermission(ctx.config(), requester.role, { member: ['update'] })) {
      throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER')
    }
    if (!await findMembership(ctx, organizationId, targetUserId)) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
    return teamsOf(targetUserId).filter((t) => t.organizationId === organizationId)
  }
  if (query.organizationId) {
    if (!await findMembership(ctx, query.organizationId, actor.user.id)) throw orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    return teamsOf(actor.user.id).filter((t) => t.organizationId === query.organizationId)
  }
  const memberOf = new Set(
    ctx.db
      .select({ organizationId: member.organizationId })
      .from(member)
      .where(eq(member.userId, actor.user.id))
      .all()
      .map((m) => m.organizationId),
  )
  return teamsOf(actor.user.id).filter((t) => memberOf.has(t.organizationId))
}

/** The members of a team (default: the active team); the caller must belong to it. */
export async function listTeamMembers(ctx: AuthContext, actor: SignedInOrgActor, teamId?: string): Promise<TeamMemberRow[]> {
  assertTeamsEnabled(ctx)
  const wanted = teamId || actor.session.activeTeamId
  if (!wanted) throw orgError(400, 'YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM')
  const found = findTeamById(ctx, wanted)
  if (!found) throw orgError(400, 'TEAM_NOT_FOUND')
  if (!await findMembership(ctx, found.organizationId, actor.user.id) || !findTeamMembership(ctx, found.id, actor.user.id)) {
    throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM')
  }
  return ctx.db
    .select()
    .from(teamMember)
    .where(eq(teamMember.teamId, found.id))
    .orderBy(asc(teamMember.createdAt), insertionOrder(teamMember))
    .all()
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
  denied: ReturnType<typeof orgError>,
): Promise<{ organizationId: string; team: TeamRow }> {
  assertTeamsEnabled(ctx)
  const organizationId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  await requirePermission(ctx, actor, organizationId, { member: [action] }, denied, orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'))
  if (!await findMembership(ctx, organizationId, input.userId)) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
  const found = teamInOrganization(ctx, input.teamId, organizationId)
  if (!findOrganizationById(ctx, organizationId)) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
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
  return ctx.storage.transaction(
    async () => {
      const existing = findTeamMembership(ctx, found.id, input.userId)
      if (existing) return existing
      const row = joinTeam(ctx, found.id, input.userId)
      await auditOrg(ctx, actor, { type: 'team.member-added', target: organizationId, targetUserId: input.userId, detail: { teamId: found.id } })
      return row
    },
  )
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
  await ctx.storage.transaction(
    async () => {
      if (!findTeamMembership(ctx, found.id, input.userId)) throw orgError(400, 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM')
      ctx.db
        .delete(teamMember)
        .where(and(eq(teamMember.teamId, found.id), eq(teamMember.userId, input.userId)))
        .run()
      ctx.db
        .update(session)
        .set({ activeTeamId: null })
        .where(and(eq(session.userId, input.userId), inArray(session.activeTeamId, [found.id])))
        .run()
      await auditOrg(ctx, actor, { type: 'team.member-removed', target: organizationId, targetUserId: input.userId, detail: { teamId: found.id } })
    },
  )
  return { message: 'Team member removed successfully.' }
}
