import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { member, organization, team, teamMember, user } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/**
 * The LDAP directory's reads. Binds read one person at a time (findUserByUid, findUser); the
 * directory's index (directory-index.ts) reads everyone in chunks, in a stable order, so loading a
 * hundred thousand people never holds the event loop for long nor needs one huge result in memory
 * at once.
 */

/** The columns the directory shows and decides by (the admission rule's, the uid's, the entry's): one index entry per person. */
const directoryColumns = () => ({
  id: user.id,
  name: user.name,
  email: user.email,
  emailVerified: user.emailVerified,
  createdAt: user.createdAt,
  updatedAt: user.updatedAt,
  username: user.username,
  role: user.role,
  banned: user.banned,
  banExpires: user.banExpires,
})

/** A person as the directory's index holds them. */
export interface DirectoryRow {
  id: string
  name: string
  email: string
  emailVerified: boolean
  createdAt: Date
  updatedAt: Date
  username: string | null
  role: string | null
  banned: boolean | null
  banExpires: Date | null
}

/**
 * Up to `limit` people after `after` (createdAt, id), oldest first: one chunk of the directory's
 * load. The row comparison `(createdAt, id) > (?, ?)` lets both engines start each chunk at its
 * place in the createdAt index instead of scanning from the start.
 */
export async function listDirectoryPeopleAfter(
  ctx: AuthContext,
  after: { createdAt: Date; id: string } | null,
  limit: number,
): Promise<DirectoryRow[]> {
  const where = after ? sql`(${user.createdAt}, ${user.id}) > (${sql.param(after.createdAt, user.createdAt)}, ${after.id})` : undefined
  return ctx.db.select(directoryColumns()).from(user).where(where).orderBy(asc(user.createdAt), asc(user.id)).limit(limit)
}

/** Up to `limit` memberships after the member id `after`, with their organization's slug: the group rule's sources, in chunks. */
export async function listMembershipsAfter(
  ctx: AuthContext,
  after: string | null,
  limit: number,
): Promise<Array<{ id: string; userId: string; slug: string; role: string }>> {
  return ctx.db
    .select({ id: member.id, userId: member.userId, slug: organization.slug, role: member.role })
    .from(member)
    .innerJoin(organization, eq(member.organizationId, organization.id))
    .where(after === null ? undefined : gt(member.id, after))
    .orderBy(asc(member.id))
    .limit(limit)
}

/** Up to `limit` team memberships after the teamMember id `after`, with the team's name and its organization's slug. */
export async function listTeamMembershipsAfter(
  ctx: AuthContext,
  after: string | null,
  limit: number,
): Promise<Array<{ id: string; userId: string; slug: string; teamName: string }>> {
  return ctx.db
    .select({ id: teamMember.id, userId: teamMember.userId, slug: organization.slug, teamName: team.name })
    .from(teamMember)
    .innerJoin(team, eq(team.id, teamMember.teamId))
    .innerJoin(organization, eq(organization.id, team.organizationId))
    .where(after === null ? undefined : gt(teamMember.id, after))
    .orderBy(asc(teamMember.id))
    .limit(limit)
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
