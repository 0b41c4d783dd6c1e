import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { clearAccountLock, listAccountLocks, secondFactorThrottleKey, throttleKey } from '../../core/throttle.js'
import { mailPasswordResetLink } from '../email-password/password-reset.js'
import { sendVerificationEmail } from '../email-password/verification.js'
import { mailSetUpLink } from '../magic-link/service.js'
import { type Actor, actorId, audit, authorize, requireUser } from './actor.js'
import { banUser } from './bans.js'
import { revokeUserSessions } from './sessions.js'
import { removeUser } from './users.js'
import { APIError } from '../../core/errors.js'
import { adminError } from './errors.js'
import { hostedPageIfOn } from '../../http/hosted-page-url.js'

/**
 * What an administrator does for a user who asks for help (issue 31 §3): mail them a password
 * reset or a verification link (through the outbox, like their own request), see and lift the
 * login throttle's locks on their account, and act on several users at once.
 */

/**
 * Where a link an administrator mails lands: a hosted page (`{baseURL}/ui/<page>`). Without the
 * hosted pages there is no page of ours to land on (the user's own request names its app's page
 * instead), so the mail is refused rather than sent with a link that ends on an error.
 */
function hostedLanding(
  ctx: AuthContext,
  page: 'reset-password' | 'verify-email' | 'account/two-factor',
  params: Record<string, string> = {},
): string {
  const url = hostedPageIfOn(ctx, page, params)
  if (!url) throw adminError(400, 'HOSTED_PAGES_DISABLED')
  return url
}

/**
 * A password-reset link mailed to the user, as if they had asked for it (needs `user:update`): it
 * lands on the hosted reset page with the token, where the user chooses a password and then signs
 * in (the only way in for an imported user who has none).
 */
export async function sendPasswordResetMail(ctx: AuthContext, actor: Actor, userId: string, meta: RequestMeta | null): Promise<void> {
  const event = { type: 'admin.send-password-reset', meta }
  await authorize(ctx, actor, ['user', 'update'], 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS', event, userId)
  const target = await requireUser(ctx, userId)
  await mailPasswordResetLink(ctx, target, hostedLanding(ctx, 'reset-password'), () =>
    audit(ctx, actor, event, { targetUserId: target.id, detail: { email: target.email } }),
  )
}

/**
 * A verification link for the user's current address (needs `user:update`): followed, it verifies
 * and lands on the hosted "Email verified" page (`verified=1` is the marker that page reads when
 * nobody is signed in; a refused link lands there with `error=`).
 */
export async function sendVerificationMail(ctx: AuthContext, actor: Actor, userId: string, meta: RequestMeta | null): Promise<void> {
  const event = { type: 'admin.send-verification-email', meta }
  await authorize(ctx, actor, ['user', 'update'], 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS', event, userId)
  const target = await requireUser(ctx, userId)
  await sendVerificationEmail(ctx, target, hostedLanding(ctx, 'verify-email', { verified: '1' }))
  await audit(ctx, actor, event, { targetUserId: target.id, detail: { email: target.email } })
}

/** How long a set-up link stays valid (seconds): a mailed nudge is read later than a link one asked for. */
export const SET_UP_LINK_EXPIRES_IN = 3600

/**
 * A set-up link mailed to the user (needs `user:update`, as a password reset): a magic link,
 * single-use and valid for an hour, that signs them in and lands on the hosted two-factor page as
 * an enrolment (`/ui/account/two-factor?enrol=1`). Audited with the administrator as the actor.
 * Refused while the hosted pages, magic-link sign-in or two-factor are off.
 */
export async function sendSetUpLinkMail(ctx: AuthContext, actor: Actor, userId: string, meta: RequestMeta | null): Promise<void> {
  const event = { type: 'admin.send-set-up-link', meta }
  await authorize(ctx, actor, ['user', 'update'], 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS', event, userId)
  const target = await requireUser(ctx, userId)
  const landing = hostedLanding(ctx, 'account/two-factor', { enrol: '1' })
  if (!ctx.config().magicLink.enabled) throw adminError(400, 'SET_UP_LINK_NEEDS_MAGIC_LINK')
  if (!ctx.config().twoFactor.enabled) throw adminError(400, 'SET_UP_LINK_NEEDS_TWO_FACTOR')
  await mailSetUpLink(ctx, target, landing, SET_UP_LINK_EXPIRES_IN)
  await audit(ctx, actor, event, { targetUserId: target.id, detail: { email: target.email, expiresIn: SET_UP_LINK_EXPIRES_IN } })
}

/** The login-throttle keys guesses at this user's account are counted under (password by email or username, second factor). */
function lockKeysOf(row: UserRow): string[] {
  const keys = [throttleKey('email', row.email), secondFactorThrottleKey(row.id)]
  if (row.username) keys.push(throttleKey('username', row.username))
  return keys
}

export interface UserLock {
  key: string
  kind: 'password' | 'second-factor'
  failures: number
  lockedUntil: Date
}

/** The user's account locks in force now (empty when lockout is off or nothing is locked). */
export async function userLocks(ctx: AuthContext, actor: Actor, userId: string): Promise<UserLock[]> {
  await authorize(ctx, actor, ['user', 'get'], 'YOU_ARE_NOT_ALLOWED_TO_GET_USER', { type: 'admin.get-user', meta: null }, userId)
  const target = await requireUser(ctx, userId)
  const keys = new Set(lockKeysOf(target))
  return (await listAccountLocks(ctx))
    .filter((lock) => keys.has(lock.key))
    .map((lock) => ({ ...lock, kind: lock.key.startsWith('two-factor:') ? ('second-factor' as const) : ('password' as const) }))
}

/** Lifts every lock of the user's account (needs `user:update`); how many there were. Each is audited. */
export async function liftUserLocks(ctx: AuthContext, actor: Actor, userId: string, meta: RequestMeta | null): Promise<number> {
  const event = { type: 'security.account-unlocked', meta }
  await authorize(ctx, actor, ['user', 'update'], 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS', event, userId)
  const target = await requireUser(ctx, userId)
  let lifted = 0
  for (const key of lockKeysOf(target)) if (await clearAccountLock(ctx, key, actorId(actor), meta, target.id)) lifted++
  return lifted
}

export type BulkAction = 'ban' | 'revokeSessions' | 'remove'

export interface BulkOutcome {
  done: string[]
  failed: Array<{ userId: string; code: string; message: string }>
}

/**
 * One action on several users: each goes through the single-user function (its permission check,
 * rules and audit event per user); a refusal for one user (yourself, a vanished user) does not
 * stop the others and is reported with its code.
 */
export async function bulkUserAction(
  ctx: AuthContext,
  actor: Actor,
  input: { action: BulkAction; userIds: readonly string[]; banReason?: string },
  meta: RequestMeta | null,
): Promise<BulkOutcome> {
  const outcome: BulkOutcome = { done: [], failed: [] }
  for (const userId of new Set(input.userIds)) {
    try {
      if (input.action === 'ban') await banUser(ctx, actor, { userId, ...(input.banReason ? { banReason: input.banReason } : {}) }, meta)
      else if (input.action === 'revokeSessions') {
        await requireUser(ctx, userId)
        await revokeUserSessions(ctx, actor, userId, meta)
      } else await removeUser(ctx, actor, userId, meta)
      outcome.done.push(userId)
    } catch (e) {
      if (!(e instanceof APIError)) throw e
      outcome.failed.push({ userId, code: e.code, message: e.message })
    }
  }
  return outcome
}
