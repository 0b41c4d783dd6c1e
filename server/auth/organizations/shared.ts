import { and, eq, inArray, type SQL, sql } from 'drizzle-orm'
import { generateId } from '../../crypto/random.js'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { invitation, organization } from '../../db/schema.js'
import { member, session, team, teamMember, user } from '../../db/schema.js'
import { type AuditInput, recordAudit } from '../audit.js'
import type { AuthContext, RequestMeta } from '../context.js'
import { APIError, type ErrorStatus } from '../errors.js'
import { type PermissionRequest, roleHasPermission } from '../org-access.js'
import type { SessionRow, UserRow } from '../sessions.js'

export type OrganizationRow = typeof organization.$inferSelect
export type MemberRow = typeof member.$inferSelect
export type InvitationRow = typeof invitation.$inferSelect
export type TeamRow = typeof team.$inferSelect
export type TeamMemberRow = typeof teamMember.$inferSelect

/**
 * Who acts. A signed-in user is held to membership and role permissions; the system (the control
 * panel, server-side calls) is trusted and only bound by the data rules (limits, last owner...).
 */
export type OrgActor =
  | { kind: 'user'; user: UserRow; session: SessionRow | null; meta: RequestMeta | null }
  | { kind: 'system'; actorUserId?: string | null; meta?: RequestMeta | null }

export const systemActor = (actorUserId: string | null = null): OrgActor => ({ kind: 'system', actorUserId })

export type SignedInOrgActor = Extract<OrgActor, { kind: 'user' }> & { session: SessionRow }

export const userActor = (data: { user: UserRow; session: SessionRow }, meta: RequestMeta | null): SignedInOrgActor => ({
  kind: 'user',
  user: data.user,
  session: data.session,
  meta,
})

/**
 * Organization error catalogue: the spec's wording where it gives one, otherwise current
 * better-auth's message; the code is the better-auth (1.7) catalogue key.
 */
export const ORG_ERR = {
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION: 'You are not allowed to create a new organization',
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS: 'You have reached the maximum number of organizations',
  ORGANIZATION_ALREADY_EXISTS: 'Organization already exists',
  ORGANIZATION_SLUG_ALREADY_TAKEN: 'Organization slug already taken',
  ORGANIZATION_NOT_FOUND: 'Organization not found',
  USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION: 'User is not a member of the organization',
  YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION: 'You are not a member of this organization',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION: 'You are not allowed to update this organization',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION: 'You are not allowed to delete this organization',
  NO_ACTIVE_ORGANIZATION: 'No active organization',
  ORGANIZATION_ID_IS_REQUIRED: 'Organization ID is required',
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: 'User is already a member of this organization',
  MEMBER_NOT_FOUND: 'Member not found',
  ROLE_NOT_FOUND: 'Role not found',
  TEAM_NOT_FOUND: 'Team not found',
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER: 'You cannot leave the organization as the only owner',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER: 'You are not allowed to delete this member',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER: 'You are not allowed to update this member',
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION: 'You are not allowed to invite users to this organization',
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE: 'You are not allowed to invite a user with this role',
  USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION: 'User is already invited to this organization',
  INVITATION_NOT_FOUND: 'Invitation not found',
  YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION: 'You are not the recipient of the invitation',
  YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION: 'You are not allowed to cancel this invitation',
  INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION: 'Inviter is no longer a member of the organization',
  FAILED_TO_RETRIEVE_INVITATION: 'Failed to retrieve invitation',
  INVITATION_LIMIT_REACHED: 'Invitation limit reached',
  ORGANIZATION_MEMBERSHIP_LIMIT_REACHED: 'Organization membership limit reached',
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS: 'You have reached the maximum number of teams',
  UNABLE_TO_REMOVE_LAST_TEAM: 'Unable to remove last team',
  YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION: 'You are not allowed to create teams in this organization',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION: 'You are not allowed to delete teams in this organization',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM: 'You are not allowed to update this team',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM: 'You are not allowed to delete this team',
  TEAMS_ARE_NOT_ENABLED: 'Teams are not enabled',
  TEAM_MEMBER_LIMIT_REACHED: 'Team member limit reached',
  USER_IS_NOT_A_MEMBER_OF_THE_TEAM: 'User is not a member of the team',
  YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM: 'You do not have an active team',
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER: 'You are not allowed to create a new member',
  YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER: 'You are not allowed to remove a team member',
  YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION: 'You are not allowed to access this organization as an owner',
  NOT_AUTHENTICATED: 'Not authenticated',
} as const

export type OrgErrorKey = keyof typeof ORG_ERR

export const orgError = (status: ErrorStatus, key: OrgErrorKey): APIError => new APIError(status, key, ORG_ERR[key])

/** Organization as the wire shows it: metadata parsed back into an object. */
export interface OrganizationJSON {
  id: string
  name: string
  slug: string
  logo: string | null
  metadata: Record<string, unknown> | null
  createdAt: Date
}

export function toOrganizationJSON(row: OrganizationRow): OrganizationJSON {
  let metadata: Record<string, unknown> | null = null
  if (row.metadata) {
    try {
      const parsed: unknown = JSON.parse(row.metadata)
      metadata = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null
    } catch {
      metadata = null
    }
  }
  return { id: row.id, name: row.name, slug: row.slug, logo: row.logo, metadata, createdAt: row.createdAt }
}

export interface MemberUser {
  id: string
  name: string
  email: string
  image: string | null
}

export type MemberWithUser = MemberRow & { user: MemberUser }

export const memberUserColumns = { id: user.id, name: user.name, email: user.email, image: user.image }

export function findMembership(ctx: AuthContext, organizationId: string, userId: string): MemberRow | undefined {
  return ctx.db
    .select()
    .from(member)
    .where(and(eq(member.organizationId, organizationId), eq(member.userId, userId)))
    .get()
}

/**
 * The organization an action addresses: the explicit id, else the caller's active one.
 * `missing` is the error better-auth answers when there is neither.
 */
export function targetOrganizationId(actor: OrgActor, explicit: string | null | undefined, missing: APIError): string {
  const id = explicit || (actor.kind === 'user' ? actor.session?.activeOrganizationId : null)
  if (!id) throw missing
  return id
}

/** The caller's membership, or `error` (users only; the system is no member and needs none). */
export async function requireMember(ctx: AuthContext, actor: OrgActor, organizationId: string, error: APIError): Promise<MemberRow | null> {
  if (actor.kind === 'system') return null
  const found = await findMembership(ctx, organizationId, actor.user.id)
  if (!found) throw error
  return found
}

/** Membership plus a permission of the caller's role(s); the system passes. */
export async function requirePermission(
  ctx: AuthContext,
  actor: OrgActor,
  organizationId: string,
  permissions: PermissionRequest,
  denied: APIError,
  notMember: APIError = denied,
): Promise<MemberRow | null> {
  const caller = await requireMember(ctx, actor, organizationId, notMember)
  if (caller && !roleHasPermission(ctx.config(), caller.role, permissions)) throw denied
  return caller
}

export function actorUserId(actor: OrgActor): string | null {
  return actor.kind === 'user' ? actor.user.id : (actor.actorUserId ?? null)
}

/** Appends the audit event of an organization change, naming the actor and how it acted. */
export async function auditOrg(ctx: AuthContext, actor: OrgActor, event: Omit<AuditInput, 'actorUserId' | 'meta'>): Promise<void> {
  const by = actorUserId(actor)
  await recordAudit(ctx, {
    ...event,
    actorUserId: by,
    targetUserId: event.targetUserId ?? by,
    detail: actor.kind === 'system' ? { ...event.detail, via: 'system' } : (event.detail ?? null),
    meta: actor.meta ?? null,
  })
}

/**
 * Moves one session's active organization; returns the updated row so the caller can re-issue
 * the cookie cache (get-session then shows the new value at once).
 */
export function setSessionActiveOrganization(ctx: AuthContext, row: SessionRow, organizationId: string | null): SessionRow {
  ctx.db.update(session).set({ activeOrganizationId: organizationId }).where(eq(session.id, row.id)).run()
  return { ...row, activeOrganizationId: organizationId }
}

/** Moves one session's active team (null clears it); returns the updated row. */
export function setSessionActiveTeam(ctx: AuthContext, row: SessionRow, teamId: string | null): SessionRow {
  ctx.db.update(session).set({ activeTeamId: teamId }).where(eq(session.id, row.id)).run()
  return { ...row, activeTeamId: teamId }
}

/** Every session of `userId` (or of everyone, without it) pointing at an organization it may no longer use. */
export function clearActiveOrganization(ctx: AuthContext, organizationId: string, userId?: string): void {
  const where = userId
    ? and(eq(session.activeOrganizationId, organizationId), eq(session.userId, userId))
    : eq(session.activeOrganizationId, organizationId)
  ctx.db.update(session).set({ activeOrganizationId: null, activeTeamId: null }).where(where).run()
}

export function findTeamMembership(ctx: AuthContext, teamId: string, userId: string): TeamMemberRow | undefined {
  return ctx.db
    .select()
    .from(teamMember)
    .where(and(eq(teamMember.teamId, teamId), eq(teamMember.userId, userId)))
    .get()
}

/** Puts a user in a team (better-auth's findOrCreateTeamMember): the existing row when already there. */
export function joinTeam(ctx: AuthContext, teamId: string, userId: string): TeamMemberRow {
  const existing = findTeamMembership(ctx, teamId, userId)
  if (existing) return existing
  const row: TeamMemberRow = { id: generateId(), teamId, userId, createdAt: new Date(ctx.clock.now()) }
  ctx.db.insert(teamMember).values(row).run()
  return row
}

/**
 * A member left (or was removed from) an organization: their memberships of its teams go too,
 * and no session of theirs keeps one of those teams active.
 */
export function leaveOrganizationTeams(ctx: AuthContext, organizationId: string, userId: string): void {
  const teamIds = ctx.db.select({ id: team.id }).from(team).where(eq(team.organizationId, organizationId)).all().map((t) => t.id)
  if (teamIds.length === 0) return
  ctx.db
    .delete(teamMember)
    .where(and(eq(teamMember.userId, userId), inArray(teamMember.teamId, teamIds)))
    .run()
  ctx.db
    .update(session)
    .set({ activeTeamId: null })
    .where(and(eq(session.userId, userId), inArray(session.activeTeamId, teamIds)))
    .run()
}

/** The actor's session after a change of its active organization, when there was one. */
export interface SessionChange {
  session: SessionRow | null
}

export function assertTeamsEnabled(ctx: AuthContext): void {
  if (!ctx.config().organization.teams.enabled) throw new APIError(404, 'NOT_FOUND', 'Not Found')
}

/** Tie-breaker for rows created in the same millisecond: SQLite's rowid follows insertion order. */
export const insertionOrder = (table: SQLiteTable): SQL => sql`${table}.rowid`
