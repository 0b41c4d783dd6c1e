import { and, eq, inArray } from 'drizzle-orm'
import { account, user } from '../db/schema.js'
import { firstRow } from '../db/storage.js'
import type { AuthContext } from './context.js'
import type { UserRow } from './sessions.js'

/** The user and account lookups every account rule needs (re-exported by users.ts). */

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export async function findUserByEmail(ctx: AuthContext, email: string): Promise<UserRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(user)
      .where(eq(user.email, normalizeEmail(email))),
  )
}

export async function findUserById(ctx: AuthContext, id: string): Promise<UserRow | undefined> {
  return firstRow(ctx.db.select().from(user).where(eq(user.id, id)))
}

/** Every account row of a user (credential and linked providers), oldest first. */
export async function listAccountRows(ctx: AuthContext, userId: string) {
  return ctx.db.select().from(account).where(eq(account.userId, userId)).orderBy(account.createdAt)
}

export async function findCredentialAccount(ctx: AuthContext, userId: string) {
  return firstRow(
    ctx.db
      .select()
      .from(account)
      .where(and(eq(account.userId, userId), eq(account.providerId, 'credential'))),
  )
}

/** Name and email of each user among `ids` (absent: deleted), for showing people instead of ids. */
export async function findPeopleByIds(
  ctx: AuthContext,
  ids: readonly string[],
): Promise<Array<{ id: string; name: string; email: string }>> {
  const found: Array<{ id: string; name: string; email: string }> = []
  // SQLite allows 999 bound parameters per statement: look the ids up in slices.
  for (let i = 0; i < ids.length; i += 500) {
    const slice = ids.slice(i, i + 500)
    found.push(...(await ctx.db.select({ id: user.id, name: user.name, email: user.email }).from(user).where(inArray(user.id, slice))))
  }
  return found
}

/** Options of a feature's user-field reader: a new user, or an update of `currentUserId`. */
export interface UserFieldsOptions {
  mode: 'create' | 'update'
  currentUserId?: string | null
}
