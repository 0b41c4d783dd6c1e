import { desc, eq, lte } from 'drizzle-orm'
import { generateId } from '../crypto/random.js'
import { verification } from '../db/schema.js'
import { firstRow } from '../db/storage.js'
import type { AuthContext } from './context.js'

/**
 * The verification table (SPEC §3): one-time records such as `reset-password:{token}` and
 * `delete-account-{token}` (value = user id). Every lookup first removes expired records unless
 * `verification.disableCleanup` is set (SPEC §4 "expired ones are cleaned up when found").
 */

export type VerificationRow = typeof verification.$inferSelect

export async function createVerification(
  ctx: AuthContext,
  identifier: string,
  value: string,
  expiresInSeconds: number,
): Promise<VerificationRow> {
  const now = ctx.clock.now()
  const row: VerificationRow = {
    id: generateId(),
    identifier,
    value,
    expiresAt: new Date(now + expiresInSeconds * 1000),
    createdAt: new Date(now),
    updatedAt: new Date(now),
  }
  await ctx.db.insert(verification).values(row)
  return row
}

/** Removes every expired record; returns how many. */
export async function cleanupExpiredVerifications(ctx: AuthContext): Promise<number> {
  const removed = await ctx.db
    .delete(verification)
    .where(lte(verification.expiresAt, new Date(ctx.clock.now())))
    .returning({ id: verification.id })
  return removed.length
}

/** The newest unexpired record for an identifier (expired ones are cleaned up first). */
export async function findVerification(ctx: AuthContext, identifier: string): Promise<VerificationRow | undefined> {
  if (!ctx.config().verification.disableCleanup) await cleanupExpiredVerifications(ctx)
  const row = await firstRow(
    ctx.db.select().from(verification).where(eq(verification.identifier, identifier)).orderBy(desc(verification.createdAt)).limit(1),
  )
  if (!row || row.expiresAt.getTime() <= ctx.clock.now()) return undefined
  return row
}

/**
 * Deletes the record and returns it, exactly once: of two concurrent consumers only one gets it.
 * Checks the value too when one is given (e.g. the user id a delete token was issued to).
 */
export async function consumeVerification(
  ctx: AuthContext,
  identifier: string,
  expectedValue?: string,
): Promise<VerificationRow | undefined> {
  const row = await findVerification(ctx, identifier)
  if (!row || (expectedValue !== undefined && row.value !== expectedValue)) return undefined
  const deleted = await ctx.db.delete(verification).where(eq(verification.id, row.id)).returning({ id: verification.id })
  return deleted.length === 1 ? row : undefined
}

/** Removes every record of an identifier (e.g. after a successful reset). */
export async function deleteVerifications(ctx: AuthContext, identifier: string): Promise<void> {
  await ctx.db.delete(verification).where(eq(verification.identifier, identifier))
}
