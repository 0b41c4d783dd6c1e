import { eq } from 'drizzle-orm'
import { hashPassword } from '../crypto/password.js'
import { generateId } from '../crypto/random.js'
import { session, verification } from '../db/schema.js'
import { passwordChangedNotice, passwordResetEmail } from '../mail/templates.js'
import { recordAudit } from './audit.js'
import type { AuthContext, RequestMeta } from './context.js'
import { APIError, fail } from './errors.js'
import { assertPasswordPolicy } from './password-policy.js'
import { findUserByEmail, findUserById, storeCredentialPassword } from './users.js'
import { createVerification, findVerification } from './verification.js'

/**
 * Password reset (SPEC §4): a 24-character token stored as `reset-password:{token}` (value: the
 * user id), valid `resetPasswordTokenExpiresIn` seconds, deleted when used.
 */

export const RESET_REQUEST_MESSAGE = 'If this email exists in our system, check your email for the reset link'

const identifier = (token: string) => `reset-password:${token}`

/**
 * Runs work after the answer has left. Errors never reach the caller; they are recorded in the
 * audit log (unless the database is already closed at shutdown).
 */
function inBackground(ctx: AuthContext, type: string, task: () => void | Promise<void>): void {
  setImmediate(async () => {
    try {
      await task()
    } catch (e) {
      try {
        await recordAudit(ctx, { type, outcome: 'failure', detail: { error: e instanceof Error ? e.message : String(e) } })
      } catch {}
    }
  })
}

/**
 * POST /request-password-reset (and /forget-password). The answer is the same for known and
 * unknown addresses and leaves after one indexed lookup: creating the token, writing the outbox
 * and the SMTP conversation all happen after it, so its timing does not tell whether the address
 * exists.
 */
export async function requestPasswordReset(ctx: AuthContext, input: { email: string; redirectTo?: string | null }, meta: RequestMeta): Promise<void> {
  const conf = ctx.config().emailAndPassword
  if (!conf.sendResetPassword) throw new APIError(400, 'RESET_PASSWORD_DISABLED', "Reset password isn't enabled")
  const found = await findUserByEmail(ctx, input.email)
  inBackground(ctx, 'user.password-reset-requested', async () => {
    if (!found) {
      await recordAudit(ctx, { type: 'user.password-reset-requested', outcome: 'failure', detail: { reason: 'UNKNOWN_EMAIL' }, meta })
      return
    }
    const expiresIn = ctx.config().emailAndPassword.resetPasswordTokenExpiresIn
    const token = generateId(24)
    const url = `${ctx.baseURL}/reset-password/${token}?callbackURL=${input.redirectTo ? encodeURIComponent(input.redirectTo) : ''}`
    const mail = passwordResetEmail(ctx.config().mail.appName, found, url, expiresIn)
    // One commit (one fsync) like the unknown-address branch's single audit write.
    await ctx.storage.transaction(async () => {
      await createVerification(ctx, identifier(token), found.id, expiresIn)
      ctx.mailer.send(mail)
      await recordAudit(ctx, { type: 'user.password-reset-requested', targetUserId: found.id, meta })
    })
  })
}

/** GET /reset-password/{token}: whether the token is (still) valid; it is not consumed. */
export async function isResetTokenValid(ctx: AuthContext, token: string): Promise<boolean> {
  return token.length > 0 && await findVerification(ctx, identifier(token)) !== undefined
}

/**
 * POST /reset-password: sets the new password on the user's credential account (creating one when
 * the user has none), consumes the token, and revokes every session when
 * `revokeSessionsOnPasswordReset` is set.
 */
export async function resetPassword(
  ctx: AuthContext,
  input: { token: string | undefined; newPassword: string },
  meta: RequestMeta,
): Promise<void> {
  if (!input.token) throw fail(400, 'INVALID_TOKEN')
  await assertPasswordPolicy(ctx, input.newPassword)
  const pending = await findVerification(ctx, identifier(input.token))
  if (!pending) throw fail(400, 'INVALID_TOKEN')
  const target = await findUserById(ctx, pending.value)
  if (!target) throw fail(400, 'USER_NOT_FOUND')
  const hash = await hashPassword(input.newPassword)
  const revoke = ctx.config().emailAndPassword.revokeSessionsOnPasswordReset
  let revoked = 0
  await ctx.storage.transaction(async () => {
    // Consumed here, after the hashing: of two concurrent resets with one token, one wins.
    if (ctx.db.delete(verification).where(eq(verification.id, pending.id)).run().changes !== 1) throw fail(400, 'INVALID_TOKEN')
    storeCredentialPassword(ctx, target.id, hash)
    if (revoke) revoked = ctx.db.delete(session).where(eq(session.userId, target.id)).run().changes
  })
  await recordAudit(ctx, { type: 'user.password-reset', actorUserId: target.id, detail: { revokedSessions: revoked }, meta })
  ctx.mailer.send(passwordChangedNotice(ctx.config().mail.appName, target, new Date(ctx.clock.now()), 'reset'))
}
