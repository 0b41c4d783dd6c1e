import { and, desc, eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { VerificationRow } from '../../core/verification.js'
import { generateId } from '../../crypto/random.js'
import { verification } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/**
 * Email codes in the verification table as better-auth stores them: identifier
 * `{type}-otp-{email}`, value `{otp}:{wrong guesses}`.
 */
export const otpIdentifier = (type: string, email: string) => `${type}-otp-${email}`

async function insertRow(ctx: AuthContext, identifier: string, value: string, expiresAt: Date): Promise<void> {
  const now = new Date(ctx.clock.now())
  await ctx.db.insert(verification).values({ id: generateId(), identifier, value, expiresAt, createdAt: now, updatedAt: now })
}

/** A new code for an identifier, replacing any earlier one (an older code never comes back). */
export async function replaceOTP(ctx: AuthContext, identifier: string, value: string, expiresAt: Date): Promise<void> {
  await ctx.storage.transaction(async () => {
    await ctx.db.delete(verification).where(eq(verification.identifier, identifier))
    await insertRow(ctx, identifier, value, expiresAt)
  })
}

/** The identifier's code, expired or not (an expired one is answered OTP_EXPIRED, then removed). */
export async function currentOTP(ctx: AuthContext, identifier: string): Promise<VerificationRow | undefined> {
  return firstRow(
    ctx.db.select().from(verification).where(eq(verification.identifier, identifier)).orderBy(desc(verification.createdAt)).limit(1),
  )
}

/**
 * Takes the record out: a conditional delete returning what it removed. Of concurrent guesses only
 * the one that removed it compares its code; the others find nothing.
 */
export async function takeOTP(ctx: AuthContext, row: VerificationRow): Promise<boolean> {
  const deleted = await ctx.db.delete(verification).where(eq(verification.id, row.id)).returning({ id: verification.id })
  return deleted.length === 1
}

/** Puts a taken record back (a wrong guess, counted; or a check that does not spend the code). */
export async function putBackOTP(ctx: AuthContext, identifier: string, value: string, expiresAt: Date): Promise<void> {
  await insertRow(ctx, identifier, value, expiresAt)
}

/** Spends the code with exactly this stored value (a reset after its check): true when this call removed it. */
export async function spendOTPValue(ctx: AuthContext, identifier: string, value: string): Promise<boolean> {
  const deleted = await ctx.db
    .delete(verification)
    .where(and(eq(verification.identifier, identifier), eq(verification.value, value)))
    .returning({ id: verification.id })
  return deleted.length > 0
}

export async function deleteOTPs(ctx: AuthContext, identifier: string): Promise<void> {
  await ctx.db.delete(verification).where(eq(verification.identifier, identifier))
}
