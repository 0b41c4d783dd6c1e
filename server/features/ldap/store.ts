import { and, asc, eq, gt, isNull, or } from 'drizzle-orm'
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

/** Every user, oldest first (bans are applied by the directory, with the clock). */
export async function listUsers(ctx: AuthContext): Promise<UserRow[]> {
  return ctx.db.select().from(user).orderBy(user.createdAt, user.id)
}

/** Up to `limit` users after `after` (createdAt, id), oldest first: one chunk of the directory's load. */
export async function listUsersAfter(ctx: AuthContext, after: { createdAt: Date; id: string } | null, limit: number): Promise<UserRow[]> {
  const where = after ? or(gt(user.createdAt, after.createdAt), and(eq(user.createdAt, after.createdAt), gt(user.id, after.id))) : undefined
  return ctx.db.select().from(user).where(where).orderBy(asc(user.createdAt), asc(user.id)).limit(limit)
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
