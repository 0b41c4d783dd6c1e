import { and, asc, eq, isNotNull, isNull, lt } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { keypair } from '../../db/schema.js'
import type { KeypairRow } from './schema.js'

/** Every SQL statement of the jwt feature. */

export async function allKeypairs(ctx: AuthContext): Promise<KeypairRow[]> {
  return await ctx.db.select().from(keypair).orderBy(asc(keypair.createdAt))
}

export async function insertKeypair(ctx: AuthContext, row: KeypairRow): Promise<void> {
  await ctx.db.insert(keypair).values(row)
}

/** Marks every live key retired at `at` (rotation); returns their ids. */
export async function retireLiveKeypairs(ctx: AuthContext, at: Date): Promise<string[]> {
  return (await ctx.db.update(keypair).set({ expiresAt: at }).where(isNull(keypair.expiresAt)).returning({ id: keypair.id })).map(
    (r) => r.id,
  )
}

export async function retireKeypair(ctx: AuthContext, id: string, at: Date): Promise<void> {
  await ctx.db.update(keypair).set({ expiresAt: at }).where(eq(keypair.id, id))
}

/** Deletes keys retired before `before` (their grace period is over); returns their ids. */
export async function deleteKeypairsRetiredBefore(ctx: AuthContext, before: Date): Promise<string[]> {
  return (
    await ctx.db
      .delete(keypair)
      .where(and(isNotNull(keypair.expiresAt), lt(keypair.expiresAt, before)))
      .returning({ id: keypair.id })
  ).map((r) => r.id)
}
