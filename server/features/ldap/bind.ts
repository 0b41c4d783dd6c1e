import { createHmac, randomBytes } from 'node:crypto'
import { recordAudit } from '../../core/audit.js'
import { refusalNow } from '../../core/admission.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import type { UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { identifying, runSignIn } from '../../core/sign-in-table.js'
import { throttledPasswordCheck, throttleKey } from '../../core/throttle.js'
import { burnPasswordCheck } from '../../crypto/password.js'
import { changeOwnPassword } from '../account/rules.js'
import { identifyByPassword } from '../email-password/sign-in.js'
import { hasSecondFactor } from '../app-passwords/verify.js'
import { appPasswordVerifier } from './app-password-port.js'
import { DnError, normalizeDn, normalizeRdns, parseDn } from './dn.js'
import { layoutOf, uidOf } from './directory.js'
import { readsOf } from './reads.js'
import { decodePasswordModify, ResultCode, WireError } from './wire.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

/**
 * A simple bind (RFC 4511 §4.2) with a people DN: the same password check as a sign-in
 * (email-password's identifyByPassword: the login throttle, the lockout, an unknown uid costing a
 * hash, the failure audited `user.sign-in` with `method: ldap`), then the sign-in pipeline's
 * admission (ban, unverified email when required, a locked account). No session is made.
 *
 * A user with a second factor binds with an app password only, unless
 * `ldap.allowMainPasswordWithSecondFactor`. Every refusal is `invalidCredentials` (49), whatever
 * the reason; a DN with an empty password (an unauthenticated bind) is `unwillingToPerform` (53).
 *
 * App passwords are made for clients that bind again and again (Apache binds at every HTTP
 * request, a NAS at every login): a successful app-password bind is audited at most once a minute
 * per app password (as its last-used time is written), and once a bind of it has run without any
 * write, the same DN and secret are answered from memory (the bind memo, in the directory's read
 * cache) for up to a minute (never past the app password's expiry), as long as the database has
 * not changed at all: a revocation, a ban, a lock, a second factor enrolled or any other write, by
 * this process or another one on the file, empties it (SQLite only: on PostgreSQL the change
 * notifications do not cover app passwords and locks, so every bind there verifies afresh). The memo holds an HMAC of the secret under a key made at
 * start, never the secret. The main password is checked with scrypt at every bind (one check, as
 * a sign-in), its throttle count cleared and the bind audited in one commit.
 */

/**
 * A bind's answer. `appPassword`: the app password it opened with (when it expires, null: never),
 * so the connection re-checks that one at each operation (`appPasswordHolds`); null for the main
 * password or a refusal.
 */
export type BindOutcome = { code: number; user: UserRow | null; appPassword: { expiresAt: number | null } | null }

const METHOD = 'ldap'
const invalid = () => new APIError(401, 'INVALID_CREDENTIALS', 'Invalid credentials')

/** How long a remembered app-password bind, and its audit entry, stand for the next ones. */
const APP_PASSWORD_WINDOW_MS = 60_000
/** The bind memo's key: this process's own random key, never the secret itself. */
const memoSecret = randomBytes(32)
const memoKeyOf = (userId: string, secret: string): string =>
  `bind:${createHmac('sha256', memoSecret).update(userId).update('\0').update(secret).digest('base64url')}`
interface BindMemo {
  /** The row the bind was admitted with (the read cache's own object: a fresh read is another one). */
  user: UserRow
  /** Until when it stands (a minute, never past the app password's expiry). */
  until: number
  /** The app password's own expiry (null: never), handed to the connection. */
  expiresAt: number | null
}
/** When each app password's successful bind was last audited here (its memo key → ms). */
const audited = new Map<string, number>()
const AUDITED_MAX = 10_000

/** The uid a people DN names, or null. */
function uidOfDn(ctx: AuthContext, dn: string): string | null {
  try {
    const rdns = parseDn(dn)
    const first = rdns[0]
    if (first?.attribute.toLowerCase() !== 'uid' || first.multi) return null
    return normalizeRdns(rdns.slice(1)) === layoutOf(ctx).npeople ? first.value.toLowerCase() : null
  } catch (error) {
    if (error instanceof DnError) return null
    throw error
  }
}

export async function simpleBind(ctx: AuthContext, name: string, password: Buffer, meta: RequestMeta): Promise<BindOutcome> {
  if (name === '' && password.length === 0) return { code: ResultCode.success, user: null, appPassword: null }
  if (password.length === 0) return { code: ResultCode.unwillingToPerform, user: null, appPassword: null }
  const secret = password.toString('utf8')
  const uid = uidOfDn(ctx, name)
  const reads = readsOf(ctx)
  await reads.begin()
  const since = reads.mark()
  const found = uid === null ? undefined : ((await reads.byUid(uid)) ?? undefined)
  // The memo needs a signal that every write moves: SQLite's does; PostgreSQL's triggers notify the
  // directory's tables (user, member, team, …) but not app_password or login_throttle, so there a
  // revocation or a lock made on another instance would go unseen: each bind verifies afresh.
  const credentialKey = found ? memoKeyOf(found.id, secret) : null
  const memoKey = ctx.storage.dialect === 'sqlite' ? credentialKey : null
  if (found && memoKey) {
    const memo = reads.peek<BindMemo>(memoKey)
    const now = ctx.clock.now()
    if (memo && memo.user === found && now < memo.until && !refusalNow(ctx, found)) {
      ctx.events.signIn(METHOD, 'success')
      return { code: ResultCode.success, user: found, appPassword: { expiresAt: memo.expiresAt } }
    }
  }
  const key = found ? throttleKey('email', found.email) : throttleKey('username', uid ?? name)
  const detail = { via: METHOD }
  const tried = { dn: name.slice(0, 256) }

  // An app password first: it is a fast keyed hash, and a match never costs a password hash.
  const verify = appPasswordVerifier()
  const secondFactor = !!found && hasSecondFactor(ctx, found) && !ctx.config().ldap.allowMainPasswordWithSecondFactor
  let identified: { attempt: SignInAttempt; appPassword: { expiresAt: number | null } | null }
  try {
    identified = await identifying(ctx, METHOD, async () => {
      const appPassword = found && verify ? await verify(ctx, found.id, secret) : null
      if (found && appPassword) {
        const attempt: SignInAttempt = {
          user: found,
          method: METHOD,
          secondFactor: 'satisfied',
          detail: { ...detail, credential: 'app-password' },
        }
        return { attempt, appPassword }
      }
      if (found && secondFactor) {
        // The main password would skip the second factor: only an app password opens, and a wrong one counts.
        // The refusal costs a password hash, as an unknown uid's does: its timing must not tell who has a second factor.
        await throttledPasswordCheck(
          ctx,
          key,
          meta,
          async () => {
            await burnPasswordCheck(secret)
            return false
          },
          { targetUserId: found.id },
        )
        await recordAudit(ctx, {
          type: 'user.sign-in',
          outcome: 'failure',
          targetUserId: found.id,
          detail: { method: METHOD, ...detail, reason: 'APP_PASSWORD_REQUIRED', ...tried },
          meta,
        })
        throw invalid()
      }
      const attempt = await identifyByPassword(
        ctx,
        {
          method: METHOD,
          found,
          throttleKey: key,
          password: secret,
          detail,
          tried,
          invalidCredentials: invalid,
          emailNotVerified: invalid,
        },
        meta,
      )
      return { attempt, appPassword: null }
    })
  } catch (error) {
    if (error instanceof APIError) return { code: ResultCode.invalidCredentials, user: null, appPassword: null }
    throw error
  }
  const { attempt, appPassword } = identified
  // An app password's success is audited at most once a minute (clients bind at every request).
  const now = ctx.clock.now()
  const auditedAt = credentialKey ? audited.get(credentialKey) : undefined
  const audit = !appPassword || !credentialKey || auditedAt === undefined || now - auditedAt >= APP_PASSWORD_WINDOW_MS || now < auditedAt
  let user: UserRow
  try {
    // The sign-in table's bind outlet: admit, vouch (no entry, no bind for whom no face may vouch), commit + audit, metric.
    user = (await runSignIn(ctx, 'bind', { ...attempt, quiet: !audit }, meta)).attempt.user
  } catch (error) {
    if (error instanceof APIError) return { code: ResultCode.invalidCredentials, user: null, appPassword: null }
    throw error
  }
  if (appPassword && credentialKey && audit) {
    if (audited.size >= AUDITED_MAX) audited.clear()
    audited.set(credentialKey, now)
  }
  if (appPassword && memoKey && found) {
    // Kept only if nothing at all was written since this bind began (this bind's own audit included).
    const until = Math.min(now + APP_PASSWORD_WINDOW_MS, appPassword.expiresAt ?? Number.POSITIVE_INFINITY)
    reads.rememberSince(since, memoKey, { user: found, until, expiresAt: appPassword.expiresAt } satisfies BindMemo)
  }
  return { code: ResultCode.success, user, appPassword }
}

/**
 * Whether the app password a connection bound with still opens `userId`'s account (asked at each
 * operation on that connection): answered from the bind memo while it stands (nothing at all was
 * written since it was made, so nothing was revoked), else checked again as a bind checks it.
 * A bind made the memo; a check here makes none (the memo is the bind's, with its audit window).
 */
export async function appPasswordHolds(ctx: AuthContext, userId: string, secret: string): Promise<boolean> {
  if (ctx.storage.dialect === 'sqlite') {
    const memo = readsOf(ctx).peek<BindMemo>(memoKeyOf(userId, secret))
    if (memo && memo.user.id === userId && ctx.clock.now() < memo.until) return true
  }
  const verify = appPasswordVerifier()
  return !!verify && (await verify(ctx, userId, secret)) !== null
}

/**
 * Password modify (RFC 3062) for one's own password: bound, with the old password and a new one
 * (none generated), through account's change-password rules (policy, throttled check of the old
 * one, audit, notice). Another user's identity is refused, and so is a user with a second factor
 * (unless `ldap.allowMainPasswordWithSecondFactor`): the web asks a session that passed it.
 */
export async function modifyOwnPassword(
  ctx: AuthContext,
  bound: UserRow | null,
  value: Buffer | null,
  meta: RequestMeta,
): Promise<{ code: number; message: string }> {
  if (!bound) return { code: ResultCode.unwillingToPerform, message: 'bind first' }
  // The web asks a session that passed the second factor: over LDAP (bound with an app password,
  // which opens LDAP only) the main password is not changed, under the bind's own rule.
  if (hasSecondFactor(ctx, bound) && !ctx.config().ldap.allowMainPasswordWithSecondFactor) {
    return {
      code: ResultCode.unwillingToPerform,
      message: `with a second factor, change your password on your account page: ${hostedPageURL(ctx, 'account/password')}`,
    }
  }
  let request: ReturnType<typeof decodePasswordModify>
  try {
    request = decodePasswordModify(value)
  } catch (error) {
    if (error instanceof WireError) return { code: ResultCode.protocolError, message: 'malformed password modify request' }
    throw error
  }
  if (request.user !== null) {
    const own = normalizeDn(layoutOf(ctx).personDn(uidOf(bound)))
    let named: string | null = null
    try {
      named = normalizeDn(request.user.replace(/^dn:/i, ''))
    } catch {}
    if (named !== own) return { code: ResultCode.unwillingToPerform, message: 'only your own password can be changed' }
  }
  if (!request.oldPassword || !request.newPassword) {
    return { code: ResultCode.unwillingToPerform, message: 'the old and the new password are both required' }
  }
  try {
    await changeOwnPassword(ctx, bound, { currentPassword: request.oldPassword, newPassword: request.newPassword }, meta)
    return { code: ResultCode.success, message: '' }
  } catch (error) {
    if (!(error instanceof APIError)) throw error
    if (error.code === 'INVALID_PASSWORD' || error.status === 429) return { code: ResultCode.invalidCredentials, message: '' }
    // The password rules' refusal, in their own words (too short, too common, …): constraintViolation.
    return { code: ResultCode.constraintViolation, message: error.message }
  }
}
