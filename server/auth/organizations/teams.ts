import { asc, count, eq } from 'drizzle-orm'
import { generateId } from '../../crypto/random.js'
import { team } from '../../db/schema.js'
import type { AuthContext } from '../context.js'
import { findOrganizationById } from './orgs.js'
import {
  assertTeamsEnabled,
  auditOrg,
  insertionOrder,
  type OrgActor,
  orgError,
  requireMember,
  requirePermission,
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

export function createTeam(ctx: AuthContext, actor: OrgActor, input: { name: string; organizationId?: string }): TeamRow {
  assertTeamsEnabled(ctx)
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  requirePermission(
    ctx,
    actor,
    orgId,
    { team: ['create'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION'),
    orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
  )
  if (!findOrganizationById(ctx, orgId)) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  const maximum = ctx.config().organization.teams.maximumTeams
  return ctx.db.transaction(
    () => {
      if (maximum !== undefined && countTeams(ctx, orgId) >= maximum) {
        throw orgError(400, 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS')
      }
      const now = new Date(ctx.clock.now())
      const row: TeamRow = { id: generateId(), name: input.name, organizationId: orgId, createdAt: now, updatedAt: now }
      ctx.db.insert(team).values(row).run()
      auditOrg(ctx, actor, { type: 'team.created', target: orgId, detail: { teamId: row.id, name: row.name } })
      return row
    },
    { behavior: 'immediate' },
  )
}

/** Renames a team. The team's own organization is the one whose permissions apply. */
export function updateTeam(ctx: AuthContext, actor: OrgActor, input: { teamId: string; data: { name?: string } }): TeamRow {
  assertTeamsEnabled(ctx)
  const found = findTeamById(ctx, input.teamId)
  if (!found) throw orgError(400, 'TEAM_NOT_FOUND')
  requirePermission(ctx, actor, found.organizationId, { team: ['update'] }, orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM'))
  if (input.data.name === undefined || input.data.name === found.name) return found
  const patch = { name: input.data.name, updatedAt: new Date(ctx.clock.now()) }
  ctx.db.update(team).set(patch).where(eq(team.id, found.id)).run()
  auditOrg(ctx, actor, {
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
export function removeTeam(
  ctx: AuthContext,
  actor: OrgActor,
  input: { teamId: string; organizationId?: string },
): { message: string } {
  assertTeamsEnabled(ctx)
  const found = findTeamById(ctx, input.teamId)
  if (!found || (input.organizationId && input.organizationId !== found.organizationId)) {
    throw orgError(400, 'TEAM_NOT_FOUND')
  }
  const caller = requirePermission(
    ctx,
    actor,
    found.organizationId,
    { team: ['delete'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION'),
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM'),
  )
  ctx.db.transaction(
    () => {
      if (!ctx.config().organization.teams.allowRemovingAllTeams && countTeams(ctx, found.organizationId) <= 1) {
        throw orgError(400, 'UNABLE_TO_REMOVE_LAST_TEAM')
      }
      if (caller && caller.teamId === found.id) throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM')
      ctx.db.delete(team).where(eq(team.id, found.id)).run()
      auditOrg(ctx, actor, { type: 'team.removed', target: found.organizationId, detail: { teamId: found.id, name: found.name } })
    },
    { behavior: 'immediate' },
  )
  return { message: 'Team removed successfully.' }
}

/** An organization's teams; members only. */
export function listTeams(ctx: AuthContext, actor: OrgActor, organizationId?: string): TeamRow[] {
  assertTeamsEnabled(ctx)
  const orgId = targetOrganizationId(actor, organizationId, orgError(400, 'NO_ACTIVE_ORGANIZATION'))
  requireMember(ctx, actor, orgId, orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION'))
  return ctx.db.select().from(team).where(eq(team.organizationId, orgId)).orderBy(asc(team.createdAt), insertionOrder(team)).all()
}
