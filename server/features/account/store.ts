import { eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { account } from '../../db/schema.js'

export type AccountRow = typeof account.$inferSelect

/** Removes one linked account row. */
export async function deleteAccountRow(ctx: AuthContext, accountId: string): Promise<void> {
  await ctx.db.delete(account).where(eq(account.id, accountId))
}
