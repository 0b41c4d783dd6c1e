import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { APIError } from '../../core/errors.js'
import type { UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
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
  method: 'email' | 'username' | 'ldap'
  /** Audit detail on every event of this sign-in. */
  detail?: Record<string, unknown>
  /** Audit detail on a refused attempt only: the identifier tried. */
  tried: Record<string, unknown>
  /** The refusals, in the sign-in method's own words. */
  invalidCredentials: () => APIError
  emailNotVerified: () => APIError
}

/**
 * The first step of a password sign-in: a throttled password check (an unknown account still
 * costs a hash) and the refusal of a wrong one, with its audit event. What follows a right
 * password (refusals, second factor, session, cookies) is the sign-in pipeline's
 * (server/http/sign-in.ts); the cleared throttle count is committed with the session.
 */
export async function identifyByPassword(ctx: AuthContext, attempt: PasswordSignInAttempt, meta: RequestMeta): Promise<SignInAttempt> {
  const { found } = attempt
  const detail = attempt.detail ?? {}
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
      detail: { method: attempt.method, ...detail, reason, ...attempt.tried },
      meta,
    })
    throw attempt.invalidCredentials()
  }
  // An imported foreign hash that matched becomes scrypt in the sign-in's own commit (issue 29).
  const rehashed = check.rehash ? await hashPassword(attempt.password) : null
  const foreignHash = credential.password
  return {
    user: found,
    method: attempt.method,
    secondFactor: 'due',
    rememberMe: attempt.rememberMe,
    detail: attempt.detail,
    commit: async () => {
      await clearPasswordFailures(ctx, attempt.throttleKey)
      if (rehashed) await replaceForeignPasswordHash(ctx, credential.id, foreignHash, rehashed)
    },
    emailNotVerified: attempt.emailNotVerified,
    // A fresh link goes out first, so the refused user can verify (SPEC §8, reference §4.1).
    onRefused: async (error) => {
      if (error.code === 'EMAIL_NOT_VERIFIED') await sendVerificationEmailIfEnabled(ctx, found, attempt.callbackURL)
    },
  }
}

export interface SignInInput {
  email: string
  password: string
  rememberMe?: boolean
  /** Where the verification link of a refused unverified sign-in leads. */
  callbackURL?: string
}

/** POST /sign-in/email: identifies the user by email and password. */
export async function signInEmail(ctx: AuthContext, input: SignInInput, meta: RequestMeta): Promise<SignInAttempt> {
  if (!ctx.config().emailAndPassword.enabled) throw emailPasswordError(400, 'EMAIL_PASSWORD_DISABLED')
  assertValidEmail(input.email)
  return identifyByPassword(
    ctx,
    {
      method: 'email',
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
