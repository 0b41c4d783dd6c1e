import { and, asc, eq, gt, isNull, or, type SQL, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { member, organization, team, teamMember, user } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/**
 * The LDAP directory's reads. Binds read one person at a time (findUserByUid, findUser); the
 * directory's index (directory-index.ts) reads everyone in chunks, in a stable order, as arrays of
 * plain values (`storage.rows`: no per-row object, no Date), so loading a hundred thousand people
 * never holds the event loop for long nor needs one huge result in memory at once.
 */

/**
 * A timestamp column as epoch milliseconds, read as a plain number on both engines (SQLite stores
 * them so; on PostgreSQL the whole milliseconds of the timestamptz, as drizzle's Date would hold).
 */
const epochMs = (ctx: AuthContext, column: typeof user.createdAt | typeof user.banExpires): SQL<number> =>
  ctx.storage.dialect === 'postgres' ? sql<number>`floor(extract(epoch from ${column}) * 1000)::float8` : sql<number>`${column}`

/**
 * A person as the directory's index reads them, one array per row (no object, no Date: a hundred
 * thousand of these are read at each load): the directory's columns, times as epoch milliseconds.
 */
export type DirectoryRow = [
  id: string,
  name: string,
  email: string,
  emailVerified: boolean,
  createdAt: number,
  updatedAt: number,
  username: string | null,
  role: string | null,
  banned: boolean | null,
  banExpires: number | null,
]

/** Positions in a DirectoryRow. */
export const ROW = {
  id: 0,
  name: 1,
  email: 2,
  emailVerified: 3,
  createdAt: 4,
  updatedAt: 5,
  username: 6,
  role: 7,
  banned: 8,
  banExpires: 9,
} as const

/** SQLite answers booleans as 0/1, PostgreSQL as booleans. */
const bool = (value: unknown): boolean => value === true || value === 1

/**
 * Up to `limit` people after `after` (createdAt in epoch milliseconds, id), oldest first: one
 * chunk of the directory's load, read as arrays (`storage.rows`). The row comparison
 * `(createdAt, id) > (?, ?)` lets both engines start each chunk at its place in the createdAt
 * index instead of scanning from the start.
 */
export async function listDirectoryPeopleAfter(
  ctx: AuthContext,
  after: { createdAt: number; id: string } | null,
  limit: number,
): Promise<DirectoryRow[]> {
  const query = directoryPeopleQuery(ctx, after, limit)
  const rows = (await ctx.storage.rows(query)) as DirectoryRow[]
  for (const row of rows) {
    row[ROW.emailVerified] = bool(row[ROW.emailVerified])
    const banned = row[ROW.banned] as unknown
    row[ROW.banned] = banned === null ? null : bool(banned)
  }
  return rows
}

/**
 * The select of `listDirectoryPeopleAfter` (not run): a keyset chunk in the directory's order, one
 * range of the index `user (createdAt, id)` (migrations 0023 / pg 0024) on both engines, no sort.
 */
export function directoryPeopleQuery(ctx: AuthContext, after: { createdAt: number; id: string } | null, limit: number) {
  const where = after
    ? sql`(${user.createdAt}, ${user.id}) > (${sql.param(new Date(after.createdAt), user.createdAt)}, ${after.id})`
    : undefined
  return ctx.db
    .select({
      id: user.id,
      name: user.name,
      email: user.email,
      emailVerified: user.emailVerified,
      createdAt: epochMs(ctx, user.createdAt),
      updatedAt: epochMs(ctx, user.updatedAt),
      username: user.username,
      role: user.role,
      banned: user.banned,
      banExpires: epochMs(ctx, user.banExpires),
    })
    .from(user)
    .where(where)
    .orderBy(asc(user.createdAt), asc(user.id))
    .limit(limit)
}

/** A membership as the load reads it: [member id, user id, organization slug, member role]. */
export type MembershipRow = [id: string, userId: string, slug: string, role: string]

/** Up to `limit` memberships after the member id `after`, with their organization's slug: the group rule's sources, in chunks. */
export async function listMembershipsAfter(ctx: AuthContext, after: string | null, limit: number): Promise<MembershipRow[]> {
  const query = ctx.db
    .select({ id: member.id, userId: member.userId, slug: organization.slug, role: member.role })
    .from(member)
    .innerJoin(organization, eq(member.organizationId, organization.id))
    .where(after === null ? undefined : gt(member.id, after))
    .orderBy(asc(member.id))
    .limit(limit)
  return (await ctx.storage.rows(query)) as MembershipRow[]
}

/** A team membership as the load reads it: [teamMember id, user id, organization slug, team name]. */
export type TeamMembershipRow = [id: string, userId: string, slug: string, teamName: string]

/** Up to `limit` team memberships after the teamMember id `after`, with the team's name and its organization's slug. */
export async function listTeamMembershipsAfter(ctx: AuthContext, after: string | null, limit: number): Promise<TeamMembershipRow[]> {
  const query = ctx.db
    .select({ id: teamMember.id, userId: teamMember.userId, slug: organization.slug, teamName: team.name })
    .from(teamMember)
    .innerJoin(team, eq(team.id, teamMember.teamId))
    .innerJoin(organization, eq(organization.id, team.organizationId))
    .where(after === null ? undefined : gt(teamMember.id, after))
    .orderBy(asc(teamMember.id))
    .limit(limit)
  return (await ctx.storage.rows(query)) as TeamMembershipRow[]
}

/** The user whose LDAP uid is `uid` (the username, else the email of a user without one). */
export async function findUserByUid(ctx: AuthContext, uid: string): Promise<UserRow | undefined> {
  const value = uid.trim().toLowerCase()
  return firstRow(
    ctx.db
      .select()
      .from(user)
      .where(or(eq(user.username, value), and(isNull(user.username), eq(user.email, value))))
      .limit(1),
  )
}

/** Users by email. */
export async function findUsersByMail(ctx: AuthContext, mail: string): Promise<UserRow[]> {
  return ctx.db.select().from(user).where(eq(user.email, mail.trim().toLowerCase()))
}

export async function findUser(ctx: AuthContext, id: string): Promise<UserRow | undefined> {
  return firstRow(ctx.db.select().from(user).where(eq(user.id, id)))
}
