import { and, asc, count, eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { appPassword } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'
import type { AppPasswordRow } from './schema.js'

/** All of the app-password feature's SQL. */

export async function insertAppPassword(ctx: AuthContext, row: AppPasswordRow): Promise<void> {
  await ctx.db.insert(appPassword).values(row)
}

export function listAppPasswordsOf(ctx: AuthContext, userId: string): Promise<AppPasswordRow[]> {
  return ctx.db.select().from(appPassword).where(eq(appPassword.userId, userId)).orderBy(asc(appPassword.createdAt), asc(appPassword.id))
}

export async function countAppPasswordsOf(ctx: AuthContext, userId: string): Promise<number> {
  const row = await firstRow(ctx.db.select({ n: count() }).from(appPassword).where(eq(appPassword.userId, userId)))
  return Number(row?.n ?? 0)
}

/** Deletes one of this user's app passwords; the deleted row, or undefined when it was not theirs. */
export function deleteAppPasswordOf(ctx: AuthContext, userId: string, id: string): Promise<AppPasswordRow | undefined> {
  return firstRow(
    ctx.db
      .delete(appPassword)
      .where(and(eq(appPassword.id, id), eq(appPassword.userId, userId)))
      .returning(),
  )
}

/** Deletes every app password of the user; the deleted rows. */
export function deleteAppPasswordsOf(ctx: AuthContext, userId: string): Promise<AppPasswordRow[]> {
  return ctx.db.delete(appPassword).where(eq(appPassword.userId, userId)).returning()
}

/** The user's app password with this hash, if any (the hash is unique). */
export function findAppPasswordByHash(ctx: AuthContext, userId: string, hash: string): Promise<AppPasswordRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(appPassword)
      .where(and(eq(appPassword.hash, hash), eq(appPassword.userId, userId)))
      .limit(1),
  )
}

export async function touchAppPassword(ctx: AuthContext, id: string, at: number): Promise<void> {
  await ctx.db
    .update(appPassword)
    .set({ lastUsedAt: new Date(at) })
    .where(eq(appPassword.id, id))
}
