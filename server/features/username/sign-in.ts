import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { throttleKey } from '../../core/throttle.js'
import { assertPasswordLength } from '../email-password/password-policy.js'
import { identifyByPassword } from '../email-password/sign-in.js'
import { usernameError } from './errors.js'
import { assertValidUsername } from './rules.js'
import { findUserByUsername, normalizeUsername } from './store.js'

export interface SignInUsernameInput {
  username: string
  password: string
  rememberMe?: boolean
  /** Where the verification link (sent when the email is unverified) leads afterwards. */
  callbackURL?: string
}

/**
 * POST /sign-in/username: email-password's sign-in sequence, the account found by username. Any
 * miss (unknown username, no credential account, no password, wrong password) is the same 401,
 * and an unknown username still costs a hash computation.
 */
export async function signInUsername(ctx: AuthContext, input: SignInUsernameInput, meta: RequestMeta): Promise<SignInAttempt> {
  const invalidCredentials = () => usernameError(401, 'INVALID_USERNAME_OR_PASSWORD')
  if (!input.username || !input.password) {
    await recordAudit(ctx, {
      type: 'user.sign-in',
      outcome: 'failure',
      targetUserId: null,
      detail: { method: 'username', reason: 'MISSING_CREDENTIALS', username: input.username ? normalizeUsername(input.username) : null },
      meta,
    })
    throw invalidCredentials()
  }
  assertValidUsername(ctx, input.username)
  if (input.password.length > ctx.config().emailAndPassword.maxPasswordLength) assertPasswordLength(ctx, input.password)
  const found = await findUserByUsername(ctx, input.username)
  return identifyByPassword(
    ctx,
    {
      method: 'username',
      found,
      // Per-account throttle (docs/SECURITY.md): a known account shares its counter with email
      // sign-in; an unknown username is counted under its own name, so both answer alike.
      throttleKey: found ? throttleKey('email', found.email) : throttleKey('username', normalizeUsername(input.username)),
      password: input.password,
      rememberMe: input.rememberMe,
      callbackURL: input.callbackURL,
      tried: { username: normalizeUsername(input.username) },
      invalidCredentials,
      emailNotVerified: () => usernameError(403, 'EMAIL_NOT_VERIFIED'),
    },
    meta,
  )
}
