import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { fail } from '../../core/errors.js'
import { deleteUserSessions } from '../../core/sessions.js'
import { findUserByEmail, findUserById } from '../../core/user-store.js'
import { storeCredentialPassword } from '../../core/users.js'
import { consumeVerification, createVerification, findVerification } from '../../core/verification.js'
import { hashPassword } from '../../crypto/password.js'
import { generateId } from '../../crypto/random.js'
import { emailPasswordError } from './errors.js'
import { passwordResetEmail } from './mail.js'
import { assertPasswordPolicy } from './password-policy.js'

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
function inBackground(ctx: AuthContext, type: string, task: () => Promise<void>): void {
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
export async function requestPasswordReset(
  ctx: AuthContext,
  input: { email: string; redirectTo?: string | null },
  meta: RequestMeta,
): Promise<void> {
  const conf = ctx.config().emailAndPassword
  if (!conf.sendResetPassword) throw emailPasswordError(400, 'RESET_PASSWORD_DISABLED')
  const found = await findUserByEmail(ctx, input.email)
  inBackground(ctx, 'user.password-reset-requested', async () => {
    if (!found) {
      await recordAudit(ctx, { type: 'user.password-reset-requested', outcome: 'failure', detail: { reason: 'UNKNOWN_EMAIL' }, meta })
      return
    }
    // One commit (one fsync) like the unknown-address branch's single audit write.
    await mailPasswordResetLink(ctx, found, input.redirectTo, () =>
      recordAudit(ctx, { type: 'user.password-reset-requested', targetUserId: found.id, meta }),
    )
  })
}

/**
 * Creates a reset token for `target` and puts the reset mail in the outbox, with `audit` in the
 * same transaction: the request above, and an administrator's "send a password-reset mail".
 */
export async function mailPasswordResetLink(
  ctx: AuthContext,
  target: { id: string; email: string; name: string },
  redirectTo: string | null | undefined,
  audit: () => Promise<void>,
): Promise<void> {
  if (!ctx.config().emailAndPassword.sendResetPassword) throw emailPasswordError(400, 'RESET_PASSWORD_DISABLED')
  const expiresIn = ctx.config().emailAndPassword.resetPasswordTokenExpiresIn
  const token = generateId(24)
  const url = `${ctx.baseURL}/reset-password/${token}?callbackURL=${redirectTo ? encodeURIComponent(redirectTo) : ''}`
  const mail = passwordResetEmail(ctx.config().mail.appName, target, url, expiresIn)
  await ctx.storage.transaction(async () => {
    await createVerification(ctx, identifier(token), target.id, expiresIn)
    await ctx.mailer.send(mail)
    await audit()
  })
}

/** GET /reset-password/{token}: whether the token is (still) valid; it is not consumed. */
export async function isResetTokenValid(ctx: AuthContext, token: string): Promise<boolean> {
  return token.length > 0 && (await findVerification(ctx, identifier(token))) !== undefined
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
  if (!input.token) throw fail(400, 'INVALID_TOKEN', 'INVALID_TOKEN', 'token')
  const token = input.token
  await assertPasswordPolicy(ctx, input.newPassword, [], 'newPassword')
  const pending = await findVerification(ctx, identifier(token))
  if (!pending) throw fail(400, 'INVALID_TOKEN', 'INVALID_TOKEN', 'token')
  const target = await findUserById(ctx, pending.value)
  if (!target) throw fail(400, 'USER_NOT_FOUND')
  const hash = await hashPassword(input.newPassword)
  const revoke = ctx.config().emailAndPassword.revokeSessionsOnPasswordReset
  const revoked = await ctx.storage.transaction(async () => {
    // Consumed here, after the hashing: of two concurrent resets with one token, one wins.
    if (!(await consumeVerification(ctx, identifier(token), pending.value))) throw fail(400, 'INVALID_TOKEN', 'INVALID_TOKEN', 'token')
    await storeCredentialPassword(ctx, target.id, hash, { reason: 'password-reset', actorUserId: target.id, meta })
    return revoke ? await deleteUserSessions(ctx, target.id) : 0
  })
  await recordAudit(ctx, { type: 'user.password-reset', actorUserId: target.id, detail: { revokedSessions: revoked }, meta })
}
