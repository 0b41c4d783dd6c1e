import { inArray, or } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { account, user } from '../../db/schema.js'

/** Every SQL statement of the users-file import. */

export interface ExistingUser {
  id: string
  email: string
  username: string | null
}

/** Users holding any of these ids, emails or usernames. */
export async function findExistingUsers(
  ctx: AuthContext,
  keys: { ids: string[]; emails: string[]; usernames: string[] },
): Promise<ExistingUser[]> {
  const conditions = [
    keys.ids.length > 0 ? inArray(user.id, keys.ids) : undefined,
    keys.emails.length > 0 ? inArray(user.email, keys.emails) : undefined,
    keys.usernames.length > 0 ? inArray(user.username, keys.usernames) : undefined,
  ].filter((c) => c !== undefined)
  if (conditions.length === 0) return []
  return ctx.db
    .select({ id: user.id, email: user.email, username: user.username })
    .from(user)
    .where(or(...conditions))
}

export interface NewCredential {
  id: string
  userId: string
  password: string
  createdAt: Date
}

/** One batch of users and their credential accounts (the caller holds the transaction). */
export async function insertUsers(ctx: AuthContext, users: UserRow[], credentials: NewCredential[]): Promise<void> {
  if (users.length > 0) await ctx.db.insert(user).values(users)
  if (credentials.length > 0) {
    await ctx.db.insert(account).values(
      credentials.map((c) => ({
        id: c.id,
        accountId: c.userId,
        providerId: 'credential',
        userId: c.userId,
        password: c.password,
        createdAt: c.createdAt,
        updatedAt: c.createdAt,
      })),
    )
  }
}
