import { and, desc, eq, like, lte, ne } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { account, user, verification } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/**
 * Every SQL statement of social sign-in: OAuth states (verification rows under a prefix) and
 * provider accounts. Asynchronous, through ctx.db (the current transaction's handle inside
 * ctx.storage.transaction).
 */

export type AccountRow = typeof account.$inferSelect
export type VerificationRow = typeof verification.$inferSelect

// ---------------------------------------------------------------- verification rows (states, test results)

/** Deletes the expired rows whose identifier starts with `prefix`. */
export async function deleteExpiredVerifications(ctx: AuthContext, prefix: string, now: Date): Promise<void> {
  await ctx.db.delete(verification).where(and(like(verification.identifier, `${prefix}%`), lte(verification.expiresAt, now)))
}

export async function insertVerification(
  ctx: AuthContext,
  row: { id: string; identifier: string; value: string; expiresAt: Date; createdAt: Date },
): Promise<void> {
  await ctx.db.insert(verification).values({ ...row, updatedAt: row.createdAt })
}

/** The newest row with this identifier. */
export const findVerification = (ctx: AuthContext, identifier: string): Promise<VerificationRow | undefined> =>
  firstRow(ctx.db.select().from(verification).where(eq(verification.identifier, identifier)).orderBy(desc(verification.createdAt)).limit(1))

export async function deleteVerification(ctx: AuthContext, identifier: string): Promise<void> {
  await ctx.db.delete(verification).where(eq(verification.identifier, identifier))
}

// ---------------------------------------------------------------- provider accounts

export const findProviderAccount = (ctx: AuthContext, providerId: string, accountId: string): Promise<AccountRow | undefined> =>
  firstRow(
    ctx.db
      .select()
      .from(account)
      .where(and(eq(account.providerId, providerId), eq(account.accountId, accountId)))
      .limit(1),
  )

/** A user's accounts other than the credential one. */
export const listSocialAccounts = (ctx: AuthContext, userId: string): Promise<AccountRow[]> =>
  ctx.db
    .select()
    .from(account)
    .where(and(eq(account.userId, userId), ne(account.providerId, 'credential')))

export async function insertAccount(ctx: AuthContext, row: AccountRow): Promise<void> {
  await ctx.db.insert(account).values(row)
}

export async function updateAccount(ctx: AuthContext, id: string, columns: Partial<AccountRow>): Promise<void> {
  await ctx.db.update(account).set(columns).where(eq(account.id, id))
}

/** The name and image a provider reports, written over the user's on sign-in (overrideUserInfoOnSignIn). */
export async function updateUserProfile(
  ctx: AuthContext,
  userId: string,
  patch: { name: string; image: string | null; updatedAt: Date },
): Promise<void> {
  await ctx.db.update(user).set(patch).where(eq(user.id, userId))
}
