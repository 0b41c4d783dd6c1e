import { and, desc, gte, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { forwardAuthCount } from '../../db/schema.js'

/** Every SQL statement of forward auth (async: the storage port). */

/** Adds allowed answers to an app's hour (one statement per app and hour). */
export async function addAllowedCounts(ctx: AuthContext, rows: readonly { app: string; hour: number; allowed: number }[]): Promise<void> {
  if (rows.length === 0) return
  await ctx.storage.transaction(async () => {
    for (const row of rows) {
      await ctx.db
        .insert(forwardAuthCount)
        .values(row)
        .onConflictDoUpdate({
          target: [forwardAuthCount.app, forwardAuthCount.hour],
          set: { allowed: sql`${forwardAuthCount.allowed} + ${row.allowed}` },
        })
    }
  })
}

/** The counts since `from` (epoch ms), newest hour first. */
export async function listAllowedCounts(ctx: AuthContext, from: number): Promise<{ app: string; hour: number; allowed: number }[]> {
  return await ctx.db
    .select()
    .from(forwardAuthCount)
    .where(and(gte(forwardAuthCount.hour, from)))
    .orderBy(desc(forwardAuthCount.hour), forwardAuthCount.app)
}
