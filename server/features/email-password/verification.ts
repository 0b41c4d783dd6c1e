import { errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import { z } from 'zod'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import type { SessionWithUser, UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { findUserByEmail, findUserById, normalizeEmail } from '../../core/user-store.js'
import { updateUserColumns } from '../../core/users.js'
import { emailPasswordError } from './errors.js'
import { changeEmailConfirmation, verificationEmail } from './mail.js'

/**
 * Email verification (SPEC §4, reference §5.2): a stateless HS256 JWT keyed by the auth secret,
 * carrying `email`, optionally `updateTo` (email change) and the `userId` it was issued to, valid
 * `emailVerification.expiresIn` seconds. The link is `{base}/verify-email?token=&callbackURL=`.
 */

export interface VerificationClaims {
  email: string
  updateTo?: string
  userId?: string
  /**
   * better-auth 1.7's `requestType`: "change-email-verification" is a change mailed to the new
   * address, applied when followed (no session needed: the token names the user and its current
   * address). Without it, `updateTo` is the confirmation mailed to the current address.
   */
  requestType?: string
}

const claimsSchema = z.object({
  email: z.string().min(1),
  updateTo: z.string().optional(),
  userId: z.string().optional(),
  requestType: z.string().optional(),
})

const key = (ctx: AuthContext) => new TextEncoder().encode(ctx.secret)

export async function createEmailVerificationToken(ctx: AuthContext, claims: VerificationClaims): Promise<string> {
  const now = Math.floor(ctx.clock.now() / 1000)
  return new SignJWT({
    email: normalizeEmail(claims.email),
    ...(claims.updateTo ? { updateTo: normalizeEmail(claims.updateTo) } : {}),
    ...(claims.userId ? { userId: claims.userId } : {}),
    ...(claims.requestType ? { requestType: claims.requestType } : {}),
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt(now)
    .setExpirationTime(now + ctx.config().emailVerification.expiresIn)
    .sign(key(ctx))
}

export type VerifyEmailErrorCode = 'invalid_token' | 'token_expired' | 'user_not_found' | 'unauthorized' | 'invalid_user'

/** A refusal of GET /verify-email: appended to the callbackURL, or 401 with the code as message. */
export class VerifyEmailError extends Error {
  constructor(readonly error: VerifyEmailErrorCode) {
    super(error)
    this.name = 'VerifyEmailError'
  }
}

export async function readEmailVerificationToken(ctx: AuthContext, token: string): Promise<VerificationClaims> {
  let payload: unknown
  try {
    ;({ payload } = await jwtVerify(token, key(ctx), { algorithms: ['HS256'], currentDate: new Date(ctx.clock.now()) }))
  } catch (e) {
    throw new VerifyEmailError(e instanceof joseErrors.JWTExpired ? 'token_expired' : 'invalid_token')
  }
  const parsed = claimsSchema.safeParse(payload)
  if (!parsed.success) throw new VerifyEmailError('invalid_token')
  return parsed.data
}

export function verificationLink(ctx: AuthContext, token: string, callbackURL?: string | null): string {
  return `${ctx.baseURL}/verify-email?token=${token}&callbackURL=${encodeURIComponent(callbackURL || '/')}`
}

function assertVerificationEmailEnabled(ctx: AuthContext): void {
  if (!ctx.config().emailVerification.sendVerificationEmail) throw emailPasswordError(400, 'VERIFICATION_EMAIL_NOT_ENABLED')
}

/** Mails a verification link for the user's current address (throws when verification mail is off). */
export async function sendVerificationEmail(ctx: AuthContext, target: UserRow, callbackURL?: string | null): Promise<void> {
  assertVerificationEmailEnabled(ctx)
  const token = await createEmailVerificationToken(ctx, { email: target.email, userId: target.id })
  await ctx.mailer.send(verificationEmail(ctx.config().mail.appName, target, verificationLink(ctx, token, callbackURL)))
}

/** Sends the mail only when verification mail is enabled; for flows where it is optional. */
export async function sendVerificationEmailIfEnabled(ctx: AuthContext, target: UserRow, callbackURL?: string | null): Promise<boolean> {
  if (!ctx.config().emailVerification.sendVerificationEmail) return false
  await sendVerificationEmail(ctx, target, callbackURL)
  return true
}

/**
 * POST /send-verification-email (better-auth 1.7). Signed out, the answer never says whether the
 * address has an account: an unknown or already verified address gets no mail but the same answer
 * (a token is still signed so both paths do the same work). Signed in, only the session's own,
 * unverified address: another one is EMAIL_MISMATCH, a verified one EMAIL_ALREADY_VERIFIED.
 */
export async function requestVerificationEmail(
  ctx: AuthContext,
  input: { email: string; callbackURL?: string | null; session?: SessionWithUser | null },
  meta: RequestMeta,
): Promise<void> {
  assertVerificationEmailEnabled(ctx)
  if (input.session) {
    const own = input.session.user
    if (own.email.toLowerCase() !== input.email.toLowerCase()) throw emailPasswordError(400, 'EMAIL_MISMATCH')
    if (own.emailVerified) throw emailPasswordError(400, 'EMAIL_ALREADY_VERIFIED')
    await sendVerificationEmail(ctx, own, input.callbackURL)
    await recordAudit(ctx, { type: 'user.verification-email-sent', targetUserId: own.id, meta })
    return
  }
  const found = await findUserByEmail(ctx, input.email)
  if (!found || found.emailVerified) {
    await createEmailVerificationToken(ctx, { email: normalizeEmail(input.email) })
    return
  }
  await sendVerificationEmail(ctx, found, input.callbackURL)
  await recordAudit(ctx, { type: 'user.verification-email-sent', targetUserId: found.id, meta })
}

/** Mails the change-email confirmation to the current address, the new one encoded in the token. */
export async function sendChangeEmailConfirmation(
  ctx: AuthContext,
  target: UserRow,
  newEmail: string,
  callbackURL?: string | null,
): Promise<void> {
  const token = await createEmailVerificationToken(ctx, { email: target.email, updateTo: newEmail, userId: target.id })
  await ctx.mailer.send(changeEmailConfirmation(ctx.config().mail.appName, target, newEmail, verificationLink(ctx, token, callbackURL)))
}

export const CHANGE_EMAIL_VERIFICATION = 'change-email-verification'

/**
 * An unverified account's change of address (better-auth 1.7 without
 * `updateEmailWithoutVerification`): a verification link to the new address, which applies the
 * change when followed.
 */
export async function sendChangeEmailVerification(
  ctx: AuthContext,
  target: UserRow,
  newEmail: string,
  callbackURL?: string | null,
): Promise<void> {
  const token = await createEmailVerificationToken(ctx, {
    email: target.email,
    updateTo: newEmail,
    userId: target.id,
    requestType: CHANGE_EMAIL_VERIFICATION,
  })
  await ctx.mailer.send(
    verificationEmail(ctx.config().mail.appName, { ...target, email: newEmail }, verificationLink(ctx, token, callbackURL)),
  )
}

export type VerifyEmailResult =
  /**
   * Plain verification; `session` is set when the caller's session was re-issued, `signIn` when a
   * sign-in is due (autoSignInAfterVerification): the route finishes it through the pipeline.
   */
  | { kind: 'verified'; user: UserRow; session: SessionWithUser | null; signIn?: SignInAttempt }
  /** Email change confirmed: the address is replaced and the caller's session (if any) carries the new user. */
  | { kind: 'email-changed'; user: UserRow; session: SessionWithUser | null }

/**
 * GET /verify-email. A plain token sets emailVerified (idempotent: a token may be replayed until it
 * expires). A change-email token needs the session of the user whose current address it names;
 * it replaces the address, marks it unverified and mails a verification link to the new address.
 */
export async function verifyEmail(
  ctx: AuthContext,
  input: { token: string; callbackURL?: string | null; session: SessionWithUser | null },
  meta: RequestMeta,
): Promise<VerifyEmailResult> {
  const claims = await readEmailVerificationToken(ctx, input.token)
  const now = new Date(ctx.clock.now())

  if (claims.updateTo && claims.requestType === CHANGE_EMAIL_VERIFICATION) {
    return applyChangeMailedToNewAddress(ctx, { ...claims, updateTo: claims.updateTo }, input.session, meta)
  }
  if (claims.updateTo) {
    const current = input.session
    if (!current || current.user.email !== claims.email || (claims.userId && claims.userId !== current.user.id)) {
      throw new VerifyEmailError('unauthorized')
    }
    const taken = await findUserByEmail(ctx, claims.updateTo)
    if (taken && taken.id !== current.user.id) throw new VerifyEmailError('invalid_token')
    const patch = { email: claims.updateTo, emailVerified: false, updatedAt: now }
    try {
      await updateUserColumns(ctx, current.user.id, patch)
    } catch (e) {
      // Taken between the check and the write.
      if (e instanceof APIError && e.code === 'USER_ALREADY_EXISTS') throw new VerifyEmailError('invalid_token')
      throw e
    }
    const updated: UserRow = { ...current.user, ...patch }
    await recordAudit(ctx, {
      type: 'user.email-changed',
      actorUserId: updated.id,
      detail: { from: claims.email, to: claims.updateTo, confirmed: true },
      meta,
    })
    await sendVerificationEmailIfEnabled(ctx, updated, input.callbackURL)
    return { kind: 'email-changed', user: updated, session: { session: current.session, user: updated } }
  }

  const found = await findUserByEmail(ctx, claims.email)
  if (!found) throw new VerifyEmailError('user_not_found')
  if (claims.userId && claims.userId !== found.id) throw new VerifyEmailError('invalid_token')
  if (found.emailVerified) return { kind: 'verified', user: found, session: null }

  await updateUserColumns(ctx, found.id, { emailVerified: true, updatedAt: now })
  const verified: UserRow = { ...found, emailVerified: true, updatedAt: now }
  await recordAudit(ctx, { type: 'user.email-verified', actorUserId: verified.id, detail: { email: verified.email }, meta })

  if (!ctx.config().emailVerification.autoSignInAfterVerification) return { kind: 'verified', user: verified, session: null }
  if (input.session && input.session.user.id === verified.id) {
    return { kind: 'verified', user: verified, session: { session: input.session.session, user: verified } }
  }
  return {
    kind: 'verified',
    user: verified,
    session: null,
    signIn: { user: verified, method: 'email-verification', secondFactor: 'due', detail: { via: 'email-verification' } },
  }
}

/**
 * A change-email link followed from the new mailbox (better-auth 1.7 "change-email-verification"):
 * the token's user, still at the token's address, takes the new one; `emailVerified` stays as it
 * was, as better-auth. No session is needed; another user's session is refused.
 */
async function applyChangeMailedToNewAddress(
  ctx: AuthContext,
  claims: VerificationClaims & { updateTo: string },
  session: SessionWithUser | null,
  meta: RequestMeta,
): Promise<VerifyEmailResult> {
  if (!claims.userId) throw new VerifyEmailError('invalid_token')
  const bound = await findUserById(ctx, claims.userId)
  if (!bound) throw new VerifyEmailError('user_not_found')
  if (bound.email !== claims.email) throw new VerifyEmailError('invalid_token')
  if (session && session.user.id !== bound.id) throw new VerifyEmailError('invalid_user')
  const taken = await findUserByEmail(ctx, claims.updateTo)
  if (taken && taken.id !== bound.id) throw new VerifyEmailError('invalid_token')
  const now = new Date(ctx.clock.now())
  const patch = { email: claims.updateTo, updatedAt: now }
  try {
    await updateUserColumns(ctx, bound.id, patch)
  } catch (e) {
    // Taken between the check and the write.
    if (e instanceof APIError && e.code === 'USER_ALREADY_EXISTS') throw new VerifyEmailError('invalid_token')
    throw e
  }
  const updated: UserRow = { ...bound, ...patch }
  await recordAudit(ctx, {
    type: 'user.email-changed',
    actorUserId: updated.id,
    detail: { from: claims.email, to: claims.updateTo, confirmed: true, via: 'new-address' },
    meta,
  })
  return { kind: 'email-changed', user: updated, session: session ? { session: session.session, user: updated } : null }
}
