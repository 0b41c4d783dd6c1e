import { eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { user } from '../../db/schema.js'

/** `user.lastLoginMethod` (storeInDatabase), written after the session exists, as better-auth's session-create hook does. */
export async function storeLastLoginMethod(ctx: AuthContext, userId: string, method: string): Promise<void> {
  await ctx.db.update(user).set({ lastLoginMethod: method }).where(eq(user.id, userId))
}
