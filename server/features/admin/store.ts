import { eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { user } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/**
 * The admin feature's own writes (the storage port's rules: awaited, joinable from
 * ctx.storage.transaction). The user search behind list-users is its own module, user-search/,
 * with one engine per dialect.
 */

/** Writes a patch to one user (updatedAt from the clock); undefined when there is no such user. */
export async function updateUserRow(ctx: AuthContext, userId: string, patch: Partial<UserRow>): Promise<UserRow | undefined> {
  return firstRow(
    ctx.db
      .update(user)
      .set({ ...patch, updatedAt: new Date(ctx.clock.now()) })
      .where(eq(user.id, userId))
      .returning(),
  )
}
