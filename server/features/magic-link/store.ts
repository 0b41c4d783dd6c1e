import { eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { createVerification, findVerification, type VerificationRow } from '../../core/verification.js'
import { verification } from '../../db/schema.js'

/** better-auth's record: `magic-link:{token}` → `{"type":"magic-link","email","name"}`. */
export const magicLinkIdentifier = (token: string) => `magic-link:${token}`

export async function storeMagicLink(ctx: AuthContext, token: string, value: string, expiresIn: number): Promise<void> {
  await createVerification(ctx, magicLinkIdentifier(token), value, expiresIn)
}

/** The unexpired record of a token, not spent. */
export async function findMagicLink(ctx: AuthContext, token: string): Promise<VerificationRow | undefined> {
  return findVerification(ctx, magicLinkIdentifier(token))
}

/**
 * Spends the record: a conditional delete returning what it removed. Run inside the sign-in
 * pipeline's transaction, so of two uses of one link (on any number of instances) one deletes the
 * row and gets its session; the other deletes nothing, and its transaction rolls back.
 */
export async function spendMagicLink(ctx: AuthContext, row: VerificationRow): Promise<boolean> {
  const deleted = await ctx.db.delete(verification).where(eq(verification.id, row.id)).returning({ id: verification.id })
  return deleted.length === 1
}
