import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { user } from '../../db/schema.js'

/** Inserts the anonymous user (in the sign-in pipeline's transaction, before its session). */
export async function insertAnonymousUser(ctx: AuthContext, row: UserRow): Promise<void> {
  await ctx.db.insert(user).values(row)
}
