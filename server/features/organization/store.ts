import { and, asc, count, desc, eq, gt, inArray, ne, or, type SQL, sql } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { AuthContext } from '../../core/context.js'
import { invitation, member, organization, team, teamMember, user } from '../../db/schema.js'
import { clearActiveTeams } from '../../core/sessions.js'
import { firstRow } from '../../db/storage.js'
import type { InvitationRow, MemberRow, OrganizationRow, TeamMemberRow, TeamRow } from './schema.js'

/**
 * Every SQL statement of the organization feature. All asynchronous (the storage port); called
 * inside `ctx.storage.transaction` they join it through `ctx.db`.
 */

export interface MemberUser {
  id: string
  name: string
  email: string
  image: string | null
}

export type MemberWithUser = MemberRow & { user: MemberUser }
export type TeamWithCount = TeamRow & { memberCount: number }

/** Built per call: the table binding holds the table only once the composition root handed it down. */
const memberUserColumns = () => ({ id: user.id, name: user.name, email: user.email, image: user.image })

/**
 * Tie-breaker for rows created in the same millisecond: SQLite's rowid follows insertion order;
 * PostgreSQL has no such column, so there the id (stable, not chronological) breaks ties.
 */
const insertionOrder = (ctx: AuthContext, table: SQLiteTable & { id: SQLiteColumn }): SQL | SQLiteColumn =>
  ctx.storage.dialect === 'sqlite' ? sql`${table}.rowid` : table.id

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`)

/** Case-insensitive LIKE on both engines (PostgreSQL's LIKE is case-sensitive): lower() on both sides. */
const ilike = (column: SQLiteColumn, pattern: string): SQL => sql`lower(${column}) like ${pattern.toLowerCase()} escape '\\'`

/**
 * A column of the outer query, qualified with its table, for a correlated subquery: drizzle
 * writes a column in a select field unqualified, which inside `(select … from member where …)`
 * resolves to the subquery's own table (member.id), so every count was 0 (issue 31 §3).
 */
const outer = (table: SQLiteTable, column: SQLiteColumn): SQL => sql`${table}.${sql.identifier(column.name)}`

const countOf = async (query: PromiseLike<Array<{ n: number }>>): Promise<number> => Number((await firstRow(query))?.n ?? 0)

// ---- users (existence and display) ---------------------------------------------------------

export async function userExists(ctx: AuthContext, userId: string): Promise<boolean> {
  return (await firstRow(ctx.db.select({ id: user.id }).from(user).where(eq(user.id, userId)))) !== undefined
}

export async function findMemberUser(ctx: AuthContext, userId: string): Promise<MemberUser | undefined> {
  return firstRow(ctx.db.select(memberUserColumns()).from(user).where(eq(user.id, userId)))
}

// ---- organizations ------------------------------------------------------------------------

export async function findOrganizationById(ctx: AuthContext, id: string): Promise<OrganizationRow | undefined> {
  return firstRow(ctx.db.select().from(organization).where(eq(organization.id, id)))
}

export async function findOrganizationBySlug(ctx: AuthContext, slug: string): Promise<OrganizationRow | undefined> {
  return firstRow(ctx.db.select().from(organization).where(eq(organization.slug, slug)))
}

/** Every organization's id, name and slug (the start-up check of stored slugs). */
export async function listOrganizationSlugs(ctx: AuthContext): Promise<Array<{ id: string; name: string; slug: string }>> {
  return ctx.db.select({ id: organization.id, name: organization.name, slug: organization.slug }).from(organization)
}

/** Every team, as its id, its organization's id and its name (the directory's map from a team id to a group name). */
export async function listTeamNames(ctx: AuthContext): Promise<Array<{ id: string; organizationId: string; name: string }>> {
  return ctx.db.select({ id: team.id, organizationId: team.organizationId, name: team.name }).from(team)
}

/** Organizations whose slug is one of `slugs`, compared case-insensitively (`slugs` in lower case). */
export async function findOrganizationsBySlugs(
  ctx: AuthContext,
  slugs: string[],
): Promise<Array<{ id: string; name: string; slug: string }>> {
  if (slugs.length === 0) return []
  return ctx.db
    .select({ id: organization.id, name: organization.name, slug: organization.slug })
    .from(organization)
    .where(inArray(sql`lower(${organization.slug})`, slugs))
}

export async function insertOrganization(ctx: AuthContext, row: OrganizationRow): Promise<void> {
  await ctx.db.insert(organization).values(row)
}

export async function updateOrganizationRow(ctx: AuthContext, id: string, patch: Partial<OrganizationRow>): Promise<void> {
  await ctx.db.update(organization).set(patch).where(eq(organization.id, id))
}

/** Deletes an organization; its members, invitations and teams cascade. */
export async function deleteOrganizationRow(ctx: AuthContext, id: string): Promise<void> {
  await ctx.db.delete(organization).where(eq(organization.id, id))
}

/** The organizations a user is a member of, oldest first. */
export async function listOrganizationsOfUser(ctx: AuthContext, userId: string): Promise<OrganizationRow[]> {
  const rows = await ctx.db
    .select({ organization })
    .from(member)
    .innerJoin(organization, eq(member.organizationId, organization.id))
    .where(eq(member.userId, userId))
    .orderBy(asc(organization.createdAt), insertionOrder(ctx, organization))
  return rows.map((r) => r.organization)
}

/** A user's memberships with each organization's name and slug. */
export async function listMembershipsOfUser(
  ctx: AuthContext,
  userId: string,
): Promise<Array<{ organizationId: string; name: string; slug: string; role: string }>> {
  return ctx.db
    .select({ organizationId: organization.id, name: organization.name, slug: organization.slug, role: member.role })
    .from(member)
    .innerJoin(organization, eq(member.organizationId, organization.id))
    .where(eq(member.userId, userId))
}

/** Organizations matching `search` (name or slug, case-insensitive substring), newest first, with member counts. */
export async function searchOrganizationRows(
  ctx: AuthContext,
  query: { search?: string; limit: number; offset: number },
): Promise<{ rows: Array<{ organization: OrganizationRow; memberCount: number }>; total: number }> {
  const term = query.search?.trim()
  const pattern = term ? `%${escapeLike(term)}%` : null
  const where = pattern ? or(ilike(organization.name, pattern), ilike(organization.slug, pattern)) : undefined
  const total = await countOf(ctx.db.select({ n: count() }).from(organization).where(where))
  const rows = await ctx.db
    .select({
      organization,
      memberCount: sql<number>`(select count(*) from ${member} where ${member.organizationId} = ${outer(organization, organization.id)})`,
    })
    .from(organization)
    .where(where)
    .orderBy(desc(organization.createdAt), desc(insertionOrder(ctx, organization)))
    .limit(query.limit)
    .offset(query.offset)
  return { rows: rows.map((r) => ({ organization: r.organization, memberCount: Number(r.memberCount) })), total }
}

// ---- members ------------------------------------------------------------------------------

export async function findMembership(ctx: AuthContext, organizationId: string, userId: string): Promise<MemberRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(member)
      .where(and(eq(member.organizationId, organizationId), eq(member.userId, userId))),
  )
}

export async function findMemberById(ctx: AuthContext, id: string): Promise<MemberRow | undefined> {
  return firstRow(ctx.db.select().from(member).where(eq(member.id, id)))
}

/** The member of an organization whose user has this (normalized) email. */
export async function findMemberByEmail(ctx: AuthContext, organizationId: string, email: string): Promise<MemberRow | undefined> {
  const row = await firstRow(
    ctx.db
      .select({ member })
      .from(member)
      .innerJoin(user, eq(member.userId, user.id))
      .where(and(eq(member.organizationId, organizationId), eq(user.email, email))),
  )
  return row?.member
}

export async function insertMember(ctx: AuthContext, row: MemberRow): Promise<void> {
  await ctx.db.insert(member).values(row)
}

export async function updateMemberRoleRow(ctx: AuthContext, memberId: string, role: string): Promise<void> {
  await ctx.db.update(member).set({ role }).where(eq(member.id, memberId))
}

export async function deleteMemberRow(ctx: AuthContext, memberId: string): Promise<void> {
  await ctx.db.delete(member).where(eq(member.id, memberId))
}

/** Memberships one user holds (across organizations). */
export async function countMembershipsOfUser(ctx: AuthContext, userId: string): Promise<number> {
  return countOf(ctx.db.select({ n: count() }).from(member).where(eq(member.userId, userId)))
}

export async function countMembers(ctx: AuthContext, organizationId: string): Promise<number> {
  return countOf(ctx.db.select({ n: count() }).from(member).where(eq(member.organizationId, organizationId)))
}

/** Every member's user id and role, oldest first (owner counts, default inviter). */
export async function listMemberRoles(ctx: AuthContext, organizationId: string): Promise<Array<{ userId: string; role: string }>> {
  return ctx.db
    .select({ userId: member.userId, role: member.role })
    .from(member)
    .where(eq(member.organizationId, organizationId))
    .orderBy(asc(member.createdAt), insertionOrder(ctx, member))
}

/** The organization ids a user is a member of. */
export async function listOrganizationIdsOfUser(ctx: AuthContext, userId: string): Promise<string[]> {
  const rows = await ctx.db.select({ organizationId: member.organizationId }).from(member).where(eq(member.userId, userId))
  return rows.map((m) => m.organizationId)
}

export const MEMBER_SORT_FIELDS = ['createdAt', 'role', 'userId', 'id', 'teamId', 'name', 'email'] as const
export const MEMBER_FILTER_FIELDS = ['role', 'userId', 'teamId', 'id', 'email', 'name'] as const
export const MEMBER_FILTER_OPERATORS = ['eq', 'ne', 'contains', 'starts_with', 'ends_with'] as const

export interface MemberPageQuery {
  limit?: number
  offset?: number
  sortBy?: (typeof MEMBER_SORT_FIELDS)[number]
  sortDirection?: 'asc' | 'desc'
  filterField?: (typeof MEMBER_FILTER_FIELDS)[number]
  filterOperator?: (typeof MEMBER_FILTER_OPERATORS)[number]
  filterValue?: string
}

/** Built per call, like memberUserColumns. */
const memberColumns = () => ({
  createdAt: member.createdAt,
  role: member.role,
  userId: member.userId,
  id: member.id,
  teamId: member.teamId,
  name: user.name,
  email: user.email,
})

function memberFilter(query: MemberPageQuery): SQL | undefined {
  if (!query.filterField || query.filterValue === undefined) return undefined
  const column = memberColumns()[query.filterField]
  const value = query.filterValue
  switch (query.filterOperator ?? 'eq') {
    case 'ne':
      return ne(column, value)
    case 'contains':
      return ilike(column, `%${escapeLike(value)}%`)
    case 'starts_with':
      return ilike(column, `${escapeLike(value)}%`)
    case 'ends_with':
      return ilike(column, `%${escapeLike(value)}`)
    default:
      return eq(column, value)
  }
}

/** A page of an organization's members (+ user), sorted and filtered, with the total matching. */
export async function pageMembers(
  ctx: AuthContext,
  organizationId: string,
  query: MemberPageQuery,
): Promise<{ members: MemberWithUser[]; total: number }> {
  const where = and(eq(member.organizationId, organizationId), memberFilter(query))
  const total = await countOf(ctx.db.select({ n: count() }).from(member).innerJoin(user, eq(member.userId, user.id)).where(where))
  const sortColumn = memberColumns()[query.sortBy ?? 'createdAt']
  const rows = await ctx.db
    .select({ member, user: memberUserColumns() })
    .from(member)
    .innerJoin(user, eq(member.userId, user.id))
    .where(where)
    .orderBy(query.sortDirection === 'desc' ? desc(sortColumn) : asc(sortColumn), insertionOrder(ctx, member))
    .limit(Math.max(0, query.limit ?? 100))
    .offset(Math.max(0, query.offset ?? 0))
  return { members: rows.map((r) => ({ ...r.member, user: r.user })), total }
}

/** The first `limit` members (+ user) of an organization, oldest first. */
export async function listMembersWithUsers(ctx: AuthContext, organizationId: string, limit: number): Promise<MemberWithUser[]> {
  return (await pageMembers(ctx, organizationId, { limit })).members
}

// ---- invitations --------------------------------------------------------------------------

export async function findInvitationById(ctx: AuthContext, id: string): Promise<InvitationRow | undefined> {
  return firstRow(ctx.db.select().from(invitation).where(eq(invitation.id, id)))
}

/** Every invitation (any status) of an organization, oldest first. */
export async function listInvitationsOf(ctx: AuthContext, organizationId: string): Promise<InvitationRow[]> {
  return ctx.db
    .select()
    .from(invitation)
    .where(eq(invitation.organizationId, organizationId))
    .orderBy(asc(invitation.createdAt), insertionOrder(ctx, invitation))
}

const pendingAt = (organizationId: string, now: number): SQL | undefined =>
  and(eq(invitation.organizationId, organizationId), eq(invitation.status, 'pending'), gt(invitation.expiresAt, new Date(now)))

/** Whether the address has a pending, unexpired invitation to any organization (signUp.mode "invitation"). */
export async function hasPendingInvitation(ctx: AuthContext, email: string): Promise<boolean> {
  const now = new Date(ctx.clock.now())
  const found = await firstRow(
    ctx.db
      .select({ id: invitation.id })
      .from(invitation)
      .where(and(eq(invitation.email, email), eq(invitation.status, 'pending'), gt(invitation.expiresAt, now)))
      .limit(1),
  )
  return found !== undefined
}

/** Pending, unexpired invitations of one address to one organization, oldest first. */
export async function listPendingInvitationsFor(ctx: AuthContext, organizationId: string, email: string): Promise<InvitationRow[]> {
  return ctx.db
    .select()
    .from(invitation)
    .where(and(pendingAt(organizationId, ctx.clock.now()), eq(invitation.email, email)))
    .orderBy(asc(invitation.createdAt), insertionOrder(ctx, invitation))
}

export async function countPendingInvitations(ctx: AuthContext, organizationId: string): Promise<number> {
  return countOf(ctx.db.select({ n: count() }).from(invitation).where(pendingAt(organizationId, ctx.clock.now())))
}

export async function insertInvitation(ctx: AuthContext, row: InvitationRow): Promise<void> {
  await ctx.db.insert(invitation).values(row)
}

export async function updateInvitationRow(
  ctx: AuthContext,
  id: string,
  patch: Partial<Pick<InvitationRow, 'status' | 'expiresAt'>>,
): Promise<void> {
  await ctx.db.update(invitation).set(patch).where(eq(invitation.id, id))
}

/** Marks a still-pending invitation accepted; false when it was no longer pending (a concurrent answer). */
export async function markInvitationAccepted(ctx: AuthContext, id: string): Promise<boolean> {
  const changed = await ctx.db
    .update(invitation)
    .set({ status: 'accepted' })
    .where(and(eq(invitation.id, id), eq(invitation.status, 'pending')))
    .returning({ id: invitation.id })
  return changed.length === 1
}

// ---- teams --------------------------------------------------------------------------------

export async function findTeamById(ctx: AuthContext, id: string): Promise<TeamRow | undefined> {
  return firstRow(ctx.db.select().from(team).where(eq(team.id, id)))
}

export async function countTeams(ctx: AuthContext, organizationId: string): Promise<number> {
  return countOf(ctx.db.select({ n: count() }).from(team).where(eq(team.organizationId, organizationId)))
}

export async function insertTeam(ctx: AuthContext, row: TeamRow): Promise<void> {
  await ctx.db.insert(team).values(row)
}

export async function updateTeamRow(ctx: AuthContext, id: string, patch: Partial<Pick<TeamRow, 'name' | 'updatedAt'>>): Promise<void> {
  await ctx.db.update(team).set(patch).where(eq(team.id, id))
}

/** Deletes a team (its teamMember rows cascade) and clears it from every session that had it active. */
export async function deleteTeamRow(ctx: AuthContext, id: string): Promise<void> {
  await ctx.db.delete(team).where(eq(team.id, id))
  await clearActiveTeams(ctx, [id])
}

export async function listTeamsOf(ctx: AuthContext, organizationId: string): Promise<TeamRow[]> {
  return ctx.db.select().from(team).where(eq(team.organizationId, organizationId)).orderBy(asc(team.createdAt), insertionOrder(ctx, team))
}

export async function listTeamsWithCounts(ctx: AuthContext, organizationId: string): Promise<TeamWithCount[]> {
  const rows = await ctx.db
    .select({ team, memberCount: sql<number>`(select count(*) from ${teamMember} where ${teamMember.teamId} = ${outer(team, team.id)})` })
    .from(team)
    .where(eq(team.organizationId, organizationId))
    .orderBy(asc(team.createdAt), insertionOrder(ctx, team))
  return rows.map((r) => ({ ...r.team, memberCount: Number(r.memberCount) }))
}

/** The teams a user belongs to (any organization), in the order they joined. */
export async function listTeamsOfUser(ctx: AuthContext, userId: string): Promise<TeamRow[]> {
  const rows = await ctx.db
    .select({ team })
    .from(teamMember)
    .innerJoin(team, eq(teamMember.teamId, team.id))
    .where(eq(teamMember.userId, userId))
    .orderBy(asc(teamMember.createdAt), insertionOrder(ctx, teamMember))
  return rows.map((r) => r.team)
}

export async function findTeamMembership(ctx: AuthContext, teamId: string, userId: string): Promise<TeamMemberRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(teamMember)
      .where(and(eq(teamMember.teamId, teamId), eq(teamMember.userId, userId))),
  )
}

export async function insertTeamMember(ctx: AuthContext, row: TeamMemberRow): Promise<void> {
  await ctx.db.insert(teamMember).values(row)
}

export async function listTeamMemberRows(ctx: AuthContext, teamId: string): Promise<TeamMemberRow[]> {
  return ctx.db
    .select()
    .from(teamMember)
    .where(eq(teamMember.teamId, teamId))
    .orderBy(asc(teamMember.createdAt), insertionOrder(ctx, teamMember))
}

/** Takes a user out of some teams; none of their sessions keeps one of those teams active. */
export async function deleteTeamMemberships(ctx: AuthContext, userId: string, teamIds: readonly string[]): Promise<void> {
  if (teamIds.length === 0) return
  await ctx.db.delete(teamMember).where(and(eq(teamMember.userId, userId), inArray(teamMember.teamId, [...teamIds])))
  await clearActiveTeams(ctx, teamIds, userId)
}

export async function listTeamIdsOf(ctx: AuthContext, organizationId: string): Promise<string[]> {
  const rows = await ctx.db.select({ id: team.id }).from(team).where(eq(team.organizationId, organizationId))
  return rows.map((t) => t.id)
}

// What other features ask of organizations (oidc-provider's claims and client restrictions, the
// jwt and api-key features' membership checks, the overview's counts): they call these, never
// query organization's tables themselves.

/** A user's team memberships with each team's name and its organization's slug, by slug then team name. */
export async function listTeamMembershipsOfUser(
  ctx: AuthContext,
  userId: string,
): Promise<Array<{ teamId: string; teamName: string; slug: string }>> {
  return ctx.db
    .select({ teamId: team.id, teamName: team.name, slug: organization.slug })
    .from(teamMember)
    .innerJoin(team, eq(team.id, teamMember.teamId))
    .innerJoin(organization, eq(organization.id, team.organizationId))
    .where(eq(teamMember.userId, userId))
    .orderBy(asc(organization.slug), asc(team.name))
}

/** Which of these organization ids exist. */
export async function existingOrganizationIds(ctx: AuthContext, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return []
  return (await ctx.db.select({ id: organization.id }).from(organization).where(inArray(organization.id, ids))).map((r) => r.id)
}

/** Which of these team ids exist. */
export async function existingTeamIds(ctx: AuthContext, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return []
  return (await ctx.db.select({ id: team.id }).from(team).where(inArray(team.id, ids))).map((r) => r.id)
}

/** How many organizations there are. */
export async function countOrganizations(ctx: AuthContext): Promise<number> {
  return (await firstRow(ctx.db.select({ n: count() }).from(organization)))?.n ?? 0
}

/** Who is in which team of an organization (the control panel's team view), in the order they joined. */
export async function listTeamMembershipsOf(ctx: AuthContext, organizationId: string): Promise<Array<{ teamId: string; userId: string }>> {
  return ctx.db
    .select({ teamId: teamMember.teamId, userId: teamMember.userId })
    .from(teamMember)
    .innerJoin(team, eq(teamMember.teamId, team.id))
    .where(eq(team.organizationId, organizationId))
    .orderBy(asc(teamMember.createdAt), insertionOrder(ctx, teamMember))
}
