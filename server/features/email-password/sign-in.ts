import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import { createSession, type SessionWithUser, type UserRow } from '../../core/sessions.js'
import { clearPasswordFailures, throttledCredentialCheck, throttleKey } from '../../core/throttle.js'
import { findCredentialAccount, findUserByEmail, normalizeEmail } from '../../core/user-store.js'
import { assertValidEmail, replaceForeignPasswordHash } from '../../core/users.js'
import { hashPassword } from '../../crypto/password.js'
import { emailPasswordError } from './errors.js'
import { sendVerificationEmailIfEnabled } from './verification.js'

/**
 * A password sign-in once the identifier named an account (or none): the one sequence behind
 * POST /sign-in/email and POST /sign-in/username.
 */
export interface PasswordSignInAttempt {
  /** The account the identifier names; undefined: none (the answer and its cost stay the same). */
  found: UserRow | undefined
  /** The per-account throttle key (an unknown identifier is counted under its own name). */
  throttleKey: string
  password: string
  rememberMe?: boolean
  /** Where the verification link of a refused unverified sign-in leads. */
  callbackURL?: string
  /** Audit detail on every event of this sign-in (`{method: 'username'}`). */
  detail?: Record<string, unknown>
  /** Audit detail on a refused attempt only: the identifier tried. */
  tried: Record<string, unknown>
  /** The refusals, in the sign-in method's own words. */
  invalidCredentials: () => APIError
  emailNotVerified: () => APIError
}

/**
 * Throttled password check (an unknown account still costs a hash), refusal with its audit
 * event, the verified-email check (a fresh link is mailed before refusing), then the session and
 * its audit event in one commit. Bans are enforced by createSession. The route answers through
 * signedInAnswer, where features act on a verified password (afterPasswordVerified: two-factor).
 */
export async function passwordSignIn(ctx: AuthContext, attempt: PasswordSignInAttempt, meta: RequestMeta): Promise<SessionWithUser> {
  const { found } = attempt
  const detail = attempt.detail ?? {}
  const failed = (reason: string) =>
    recordAudit(ctx, { type: 'user.sign-in', outcome: 'failure', targetUserId: found?.id ?? null, detail: { ...detail, reason }, meta })
  const credential = found ? await findCredentialAccount(ctx, found.id) : undefined
  const check = await throttledCredentialCheck(ctx, attempt.throttleKey, meta, credential?.password, attempt.password, {
    targetUserId: found?.id,
    clearOnSuccess: false,
  })
  const matched = check.ok
  if (!found || !credential?.password || !matched) {
    const reason = !found ? 'UNKNOWN_USER' : !credential?.password ? 'NO_CREDENTIAL' : 'INVALID_PASSWORD'
    await recordAudit(ctx, {
      type: 'user.sign-in',
      outcome: 'failure',
      targetUserId: found?.id ?? null,
      detail: { ...detail, reason, ...attempt.tried },
      meta,
    })
    throw attempt.invalidCredentials()
  }
  if (ctx.config().emailAndPassword.requireEmailVerification && !found.emailVerified) {
    await clearPasswordFailures(ctx, attempt.throttleKey)
    await failed('EMAIL_NOT_VERIFIED')
    // A fresh link goes out first, so the refused user can verify (SPEC §8, reference §4.1).
    await sendVerificationEmailIfEnabled(ctx, found, attempt.callbackURL)
    throw attempt.emailNotVerified()
  }
  // An imported foreign hash that matched becomes scrypt in the sign-in's own commit (issue 29).
  const rehashed = check.rehash ? await hashPassword(attempt.password) : null
  try {
    // One commit for the session and its audit event: each commit is an fsync.
    return await ctx.storage.transaction(async () => {
      await clearPasswordFailures(ctx, attempt.throttleKey)
      if (rehashed) await replaceForeignPasswordHash(ctx, credential.id, credential.password as string, rehashed)
      const created = await createSession(ctx, found, { rememberMe: attempt.rememberMe, meta })
      await recordAudit(ctx, {
        type: 'user.sign-in',
        actorUserId: found.id,
        target: created.session.id,
        ...(attempt.detail ? { detail: attempt.detail } : {}),
        meta,
      })
      return created
    })
  } catch (e) {
    if (e instanceof APIError) await failed(e.code)
    throw e
  }
}

export interface SignInInput {
  email: string
  password: string
  rememberMe?: boolean
  /** Where the verification link of a refused unverified sign-in leads. */
  callbackURL?: string
}

/** POST /sign-in/email. */
export async function signInEmail(ctx: AuthContext, input: SignInInput, meta: RequestMeta): Promise<SessionWithUser> {
  if (!ctx.config().emailAndPassword.enabled) throw emailPasswordError(400, 'EMAIL_PASSWORD_DISABLED')
  assertValidEmail(input.email)
  return passwordSignIn(
    ctx,
    {
      found: await findUserByEmail(ctx, input.email),
      throttleKey: throttleKey('email', input.email),
      password: input.password,
      rememberMe: input.rememberMe,
      callbackURL: input.callbackURL,
      tried: { email: normalizeEmail(input.email) },
      invalidCredentials: () => emailPasswordError(401, 'INVALID_EMAIL_OR_PASSWORD'),
      emailNotVerified: () => emailPasswordError(403, 'EMAIL_NOT_VERIFIED'),
    },
    meta,
  )
}
