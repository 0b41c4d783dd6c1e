import { recordAudit, type AuditInput } from './audit.js'
import type { AuthContext, RequestMeta } from './context.js'
import { APIError, ERR } from './errors.js'
import { assertNotBanned, createSession, type SessionWithUser, type UserRow } from './sessions.js'
import { accountLockedFor, throttleKey } from './throttle.js'

/**
 * What a sign-in is made of, and the rows of the sign-in table (core/sign-in-table.ts) that are
 * pure domain: a way of signing in only *identifies* the user; then, for every method and outlet
 * alike, the table runs admit (banned, unverified-when-required, locked) → … → the session, the
 * method's own writes and the audit event in one transaction, so no method can forget a rule, and
 * a new method is a new `method` name and its first step.
 */

/**
 * The sign-in methods. A method's name is what the audit log, the metrics and the last-login
 * cookie record. Whether it asks for an enrolled second factor is its `secondFactor`, not its name.
 */
export type SignInMethod = 'email' | 'username' | 'social' | 'passkey' | 'two-factor' | 'email-verification' | 'sign-up' | (string & {})

export interface SignInAttempt {
  /** The identified user. */
  user: UserRow
  method: SignInMethod
  /**
   * `due`: an enrolled second factor is asked for (the method is one factor: a password, a mailed
   * link, a provider's word); `passed`: this attempt completes a second-factor challenge;
   * `satisfied`: the method counts as two factors itself (a passkey: possession and, usually, user
   * verification), as two-factor reads passkeys as a second factor.
   */
  secondFactor: 'due' | 'passed' | 'satisfied'
  rememberMe?: boolean
  /** Audit detail of the sign-in event (`{provider: 'github'}`), success or refusal. */
  detail?: Record<string, unknown>
  /**
   * The identification's own writes (a password's throttle count cleared, a challenge spent, a
   * link used): committed with the session, or alone when the pipeline refuses or asks for a
   * second factor, since the identification succeeded either way.
   */
  commit?: () => Promise<void>
  /** Writes that need the new session, in its transaction (two-factor's marker that the session passed a second factor). */
  withSession?: (created: SessionWithUser) => Promise<void>
  /** The method's own audit events, in the session's transaction (e.g. `passkey.sign-in`). */
  audit?: AuditInput[]
  /**
   * The user has no address to verify (an anonymous user's is generated): the
   * `requireEmailVerification` refusal does not apply, as better-auth's anonymous endpoint makes
   * its session without it. Bans and locks still do.
   */
  noEmailToVerify?: boolean
  /** The refusal of an unverified email, in the method's own words (default: `EMAIL_NOT_VERIFIED`). */
  emailNotVerified?: () => APIError
  /**
   * A success not audited again (an LDAP bind with an app password audited less than a minute
   * ago: clients such as Apache bind at every request). Refusals are always audited.
   */
  quiet?: boolean
  /** Runs after a refusal was audited, before it is thrown (password: mail a fresh verification link). */
  onRefused?: (error: APIError) => Promise<void>
}

const emailNotVerified = () => new APIError(403, 'EMAIL_NOT_VERIFIED', ERR.EMAIL_NOT_VERIFIED)

/** `requireEmailVerification` is on and this user's email is not verified (the one reading of the rule). */
export const emailUnverifiedRefused = (ctx: AuthContext, user: { emailVerified: boolean }): boolean =>
  ctx.config().emailAndPassword.requireEmailVerification && !user.emailVerified

/**
 * The refusals every method shares, in this order: a ban (an expired one is cleared), an
 * unverified email while `requireEmailVerification` is on, a locked account (the login
 * throttle's lock of the account's email). Returns the user as it now is.
 */
export async function admitSignIn(ctx: AuthContext, attempt: SignInAttempt): Promise<UserRow> {
  const current = await assertNotBanned(ctx, attempt.user)
  if (emailUnverifiedRefused(ctx, current) && !attempt.noEmailToVerify) {
    throw (attempt.emailNotVerified ?? emailNotVerified)()
  }
  await accountLockedFor(ctx, accountKeys(current))
  return current
}

/**
 * The login-throttle key that locks an account: its email's, where password guesses (by email or
 * username) are counted. Second-factor guesses lock the second step only (its own key, checked by
 * the two-factor feature), so the password step still answers with a challenge meanwhile.
 */
export const accountKeys = (target: UserRow): string[] => [throttleKey('email', target.email)]

/** The session, the identification's writes and the audit events, in one commit. */
export async function openSignInSession(ctx: AuthContext, attempt: SignInAttempt, meta: RequestMeta): Promise<SessionWithUser> {
  return ctx.storage.transaction(async () => {
    await attempt.commit?.()
    const created = await createSession(ctx, attempt.user, { rememberMe: attempt.rememberMe, meta })
    await attempt.withSession?.(created)
    for (const event of attempt.audit ?? []) await recordAudit(ctx, { ...event, meta })
    await recordAudit(ctx, {
      type: 'user.sign-in',
      actorUserId: attempt.user.id,
      target: created.session.id,
      detail: signInDetail(attempt),
      meta,
    })
    return created
  })
}

/** A refused sign-in: the identification's writes still stand, the refusal is audited, the method reacts. */
export async function refuseSignIn(ctx: AuthContext, attempt: SignInAttempt, error: APIError, meta: RequestMeta): Promise<void> {
  await attempt.commit?.()
  await recordAudit(ctx, {
    type: 'user.sign-in',
    outcome: 'failure',
    targetUserId: attempt.user.id,
    detail: { ...signInDetail(attempt), reason: error.code },
    meta,
  })
  await attempt.onRefused?.(error)
}

export function signInDetail(attempt: SignInAttempt): Record<string, unknown> {
  return { method: attempt.method, ...attempt.detail }
}
