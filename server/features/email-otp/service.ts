import { fail } from '../../core/errors.js'
import { signUpRefusal } from '../../core/sign-up-gate.js'
import { z } from 'zod'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { deleteUserSessions, type SessionWithUser, type UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import {
  findUserByEmail,
  insertUser,
  proveEmailOwnership,
  readAdditionalFields,
  storeCredentialPassword,
  updateUserColumns,
} from '../../core/users.js'
import { hashPassword } from '../../crypto/password.js'
import { randomString } from '../../crypto/random.js'
import { safeEqual } from '../../crypto/sign.js'
import { emailOTPError } from './errors.js'
import { emailOTPMail, type OTPType } from './mail.js'
import { currentOTP, deleteOTPs, otpIdentifier, putBackOTP, replaceOTP, spendOTPValue, takeOTP } from './store.js'

export const OTP_TYPES = ['email-verification', 'sign-in', 'forget-password', 'change-email'] as const

/** better-auth lower-cases the address, then checks it (400 INVALID_EMAIL). */
export function checkedEmail(raw: string): string {
  const email = raw.toLowerCase()
  if (!z.email().safeParse(email).success) throw emailOTPError(400, 'INVALID_EMAIL')
  return email
}

/**
 * POST /email-otp/send-verification-otp (and /email-otp/request-password-reset): a new code
 * replaces the address's earlier one of that type; it is mailed when the address has a user, or for
 * `sign-in` while sign-up is allowed. The answer is the same either way.
 */
export async function sendOTP(ctx: AuthContext, email: string, type: OTPType, meta: RequestMeta): Promise<void> {
  const conf = ctx.config().emailOTP
  const identifier = otpIdentifier(type, email)
  const otp = randomString(conf.otpLength, '0123456789')
  await replaceOTP(ctx, identifier, `${otp}:0`, new Date(ctx.clock.now() + conf.expiresIn * 1000))
  const found = await findUserByEmail(ctx, email)
  if (!found && !(type === 'sign-in' && !conf.disableSignUp && (await signUpRefusal(ctx, email)) === null)) {
    await deleteOTPs(ctx, identifier)
    return
  }
  await ctx.mailer.send(emailOTPMail(ctx.config().mail.appName, found ?? { email }, otp, type, conf.expiresIn))
  await recordAudit(ctx, { type: 'user.email-otp-sent', targetUserId: found?.id ?? null, detail: { type }, meta })
}

/**
 * better-auth's atomicVerifyOTP. The record is taken out (a conditional delete) before the guess
 * is compared, so of concurrent guesses only the one holding it compares; a wrong guess puts it
 * back with one more attempt counted and its original expiry; once `allowedAttempts` wrong guesses
 * were counted it stays out (403 TOO_MANY_ATTEMPTS). So no more than `allowedAttempts` guesses are
 * ever compared, on any number of instances. `restore`: a right guess puts it back unchanged
 * (a check, or a spend that happens later in a transaction); returns the stored value.
 */
export async function verifyOTP(
  ctx: AuthContext,
  identifier: string,
  otp: string,
  disposition: 'consume' | 'restore' = 'consume',
): Promise<string> {
  const existing = await currentOTP(ctx, identifier)
  if (existing && existing.expiresAt.getTime() < ctx.clock.now()) {
    await deleteOTPs(ctx, identifier)
    throw emailOTPError(400, 'OTP_EXPIRED')
  }
  if (!existing || !(await takeOTP(ctx, existing))) throw emailOTPError(400, 'INVALID_OTP')
  const cut = existing.value.lastIndexOf(':')
  const stored = cut === -1 ? existing.value : existing.value.slice(0, cut)
  const used = Number.parseInt(cut === -1 ? '0' : existing.value.slice(cut + 1), 10) || 0
  if (used >= ctx.config().emailOTP.allowedAttempts) throw emailOTPError(403, 'TOO_MANY_ATTEMPTS')
  if (!safeEqual(stored, otp)) {
    await putBackOTP(ctx, identifier, `${stored}:${used + 1}`, existing.expiresAt)
    // Each compared wrong guess is on record (the attempts bound can be audited).
    await recordAudit(ctx, { type: 'user.email-otp-failed', outcome: 'failure', detail: { identifier, attempt: used + 1 } })
    throw emailOTPError(400, 'INVALID_OTP')
  }
  if (disposition === 'restore') {
    if (await currentOTP(ctx, identifier)) throw emailOTPError(400, 'INVALID_OTP')
    await putBackOTP(ctx, identifier, existing.value, existing.expiresAt)
  }
  return existing.value
}

/**
 * POST /sign-in/email-otp, the identification half: the code is checked (and left in place), the
 * user found, or created verified when unknown and sign-up is allowed; an unverified one is
 * promoted (the code proves the mailbox). The code is spent by the attempt's `commit`, in the
 * session's transaction: of two sign-ins with one code, one gets a session.
 */
export async function identifyByOTP(
  ctx: AuthContext,
  input: { email: string; otp: string; name?: string; image?: string; rest: Record<string, unknown> },
  meta: RequestMeta,
): Promise<SignInAttempt> {
  const email = input.email.toLowerCase()
  const identifier = otpIdentifier('sign-in', email)
  const value = await verifyOTP(ctx, identifier, input.otp, 'restore')
  let found: UserRow | undefined = await findUserByEmail(ctx, email)
  if (!found) {
    if (ctx.config().emailOTP.disableSignUp) throw emailOTPError(400, 'INVALID_OTP')
    const refusal = await signUpRefusal(ctx, email)
    if (refusal === 'closed') throw emailOTPError(400, 'INVALID_OTP')
    if (refusal) throw fail(403, 'SIGN_UP_INVITATION_REQUIRED', 'SIGN_UP_INVITATION_REQUIRED', 'email')
    const additionalFields = readAdditionalFields(ctx, input.rest, 'create')
    try {
      found = await insertUser(
        ctx,
        { email, name: input.name || '', image: input.image ?? null, emailVerified: true, additionalFields },
        null,
      )
      await recordAudit(ctx, { type: 'user.sign-up', actorUserId: found.id, detail: { method: 'email-otp' }, meta })
    } catch (e) {
      // A parallel sign-in with the same code created the user first: only one of them spends the code.
      found = await findUserByEmail(ctx, email)
      if (!found) throw e
    }
  } else {
    found = await proveEmailOwnership(ctx, found)
  }
  return {
    user: found,
    method: 'email-otp',
    secondFactor: 'due',
    commit: async () => {
      if (!(await spendOTPValue(ctx, identifier, value))) throw emailOTPError(400, 'INVALID_OTP')
    },
  }
}

/** POST /email-otp/check-verification-otp: a right code is left in place for the call that uses it. */
export async function checkOTP(ctx: AuthContext, email: string, type: string, otp: string): Promise<void> {
  await verifyOTP(ctx, otpIdentifier(type, email), otp, 'restore')
  if (!(await findUserByEmail(ctx, email))) throw emailOTPError(400, 'USER_NOT_FOUND')
}

/** POST /email-otp/verify-email: spends the code and marks the address verified. */
export async function verifyEmailByOTP(ctx: AuthContext, email: string, otp: string, meta: RequestMeta): Promise<UserRow> {
  await verifyOTP(ctx, otpIdentifier('email-verification', email), otp)
  const found = await findUserByEmail(ctx, email)
  if (!found) throw emailOTPError(400, 'USER_NOT_FOUND')
  const now = new Date(ctx.clock.now())
  await updateUserColumns(ctx, found.id, { email, emailVerified: true, updatedAt: now })
  await recordAudit(ctx, { type: 'user.email-verified', actorUserId: found.id, detail: { method: 'email-otp' }, meta })
  return { ...found, email, emailVerified: true, updatedAt: now }
}

/**
 * POST /email-otp/reset-password: the code is checked, the new password hashed, then the code
 * spent with the password written in one transaction (of two resets with one code, one wins).
 */
export async function resetPasswordByOTP(
  ctx: AuthContext,
  input: { email: string; otp: string; password: string },
  meta: RequestMeta,
): Promise<void> {
  const { minPasswordLength, maxPasswordLength, revokeSessionsOnPasswordReset } = ctx.config().emailAndPassword
  if (input.password.length < minPasswordLength) throw emailOTPError(400, 'PASSWORD_TOO_SHORT')
  if (input.password.length > maxPasswordLength) throw emailOTPError(400, 'PASSWORD_TOO_LONG')
  const identifier = otpIdentifier('forget-password', input.email)
  const value = await verifyOTP(ctx, identifier, input.otp, 'restore')
  const found = await findUserByEmail(ctx, input.email)
  if (!found) throw emailOTPError(400, 'USER_NOT_FOUND')
  const hash = await hashPassword(input.password)
  await ctx.storage.transaction(async () => {
    if (!(await spendOTPValue(ctx, identifier, value))) throw emailOTPError(400, 'INVALID_OTP')
    await storeCredentialPassword(ctx, found.id, hash, { reason: 'password-reset', actorUserId: found.id, meta })
    if (revokeSessionsOnPasswordReset) await deleteUserSessions(ctx, found.id)
    if (!found.emailVerified) await updateUserColumns(ctx, found.id, { emailVerified: true, updatedAt: new Date(ctx.clock.now()) })
    await recordAudit(ctx, { type: 'user.password-reset', actorUserId: found.id, detail: { method: 'email-otp' }, meta })
  })
}

// ---------------------------------------------------------------------------------------------
// Email change by code (better-auth's changeEmail option of the emailOTP plugin)

/** The change-email code's identifier: better-auth's `change-email-otp-{userId}:{newEmail}`. */
const changeEmailIdentifier = (userId: string, newEmail: string) => otpIdentifier('change-email', `${userId}:${newEmail}`)

/** The checks both change-email endpoints open with: the option, the new address's form, not the current one. */
function checkedNewEmail(ctx: AuthContext, current: SessionWithUser, raw: string): { email: string; newEmail: string } {
  if (!ctx.config().emailOTP.changeEmail.enabled) throw emailOTPError(400, 'CHANGE_EMAIL_WITH_OTP_IS_DISABLED')
  const email = current.user.email.toLowerCase()
  const newEmail = checkedEmail(raw)
  if (newEmail === email) throw emailOTPError(400, 'EMAIL_IS_THE_SAME')
  return { email, newEmail }
}

/**
 * POST /email-otp/request-email-change: a `change-email` code for the signed-in user and the new
 * address, mailed to the new address; with `verifyCurrentEmail`, an `email-verification` code of
 * the current address is spent first. An address that already has a user gets no mail (and keeps
 * no code); the answer is the same.
 */
export async function requestEmailChange(
  ctx: AuthContext,
  current: SessionWithUser,
  input: { newEmail: string; otp?: string },
  meta: RequestMeta,
): Promise<void> {
  const conf = ctx.config().emailOTP
  const { email, newEmail } = checkedNewEmail(ctx, current, input.newEmail)
  if (conf.changeEmail.verifyCurrentEmail) {
    if (!input.otp) throw emailOTPError(400, 'OTP_IS_REQUIRED_TO_VERIFY_CURRENT_EMAIL')
    await verifyOTP(ctx, otpIdentifier('email-verification', email), input.otp)
  }
  const identifier = changeEmailIdentifier(current.user.id, newEmail)
  const otp = randomString(conf.otpLength, '0123456789')
  await replaceOTP(ctx, identifier, `${otp}:0`, new Date(ctx.clock.now() + conf.expiresIn * 1000))
  if (await findUserByEmail(ctx, newEmail)) {
    await deleteOTPs(ctx, identifier)
    return
  }
  await ctx.mailer.send(
    emailOTPMail(ctx.config().mail.appName, { email: newEmail, name: current.user.name }, otp, 'change-email', conf.expiresIn),
  )
  await recordAudit(ctx, { type: 'user.email-otp-sent', targetUserId: current.user.id, detail: { type: 'change-email' }, meta })
}

/**
 * POST /email-otp/change-email: the code mailed to the new address is spent (race-safe, as every
 * code), then the user's address becomes the new one, verified. Returns the user as it now is.
 */
export async function changeEmailByOTP(
  ctx: AuthContext,
  current: SessionWithUser,
  input: { newEmail: string; otp: string },
  meta: RequestMeta,
): Promise<UserRow> {
  const { email, newEmail } = checkedNewEmail(ctx, current, input.newEmail)
  await verifyOTP(ctx, changeEmailIdentifier(current.user.id, newEmail), input.otp)
  // A valid code was given: telling what stands in the way leaks nothing (better-auth's words).
  const found = await findUserByEmail(ctx, email)
  if (!found) throw emailOTPError(400, 'USER_NOT_FOUND')
  if (await findUserByEmail(ctx, newEmail)) throw emailOTPError(400, 'EMAIL_ALREADY_IN_USE')
  const now = new Date(ctx.clock.now())
  await ctx.storage.transaction(async () => {
    await updateUserColumns(ctx, found.id, { email: newEmail, emailVerified: true, updatedAt: now })
    await recordAudit(ctx, {
      type: 'user.email-changed',
      actorUserId: found.id,
      detail: { from: email, to: newEmail, method: 'email-otp' },
      meta,
    })
  })
  return { ...found, email: newEmail, emailVerified: true, updatedAt: now }
}
