import { and, eq, isNull, or } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { user } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/**
 * The LDAP directory's reads: read from the database at every operation, so a change made
 * anywhere (another instance included) is what the next LDAP request sees.
 */

/** Every user, oldest first (bans are applied by the directory, with the clock). */
export async function listUsers(ctx: AuthContext): Promise<UserRow[]> {
  return ctx.db.select().from(user).orderBy(user.createdAt, user.id)
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
