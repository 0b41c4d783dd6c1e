import { eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { user } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/** Usernames are unique in lower case (SPEC §3). */
export const normalizeUsername = (username: string): string => username.toLowerCase()

export function findUserByUsername(ctx: AuthContext, username: string): Promise<UserRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(user)
      .where(eq(user.username, normalizeUsername(username))),
  )
}
