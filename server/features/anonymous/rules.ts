import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { findSessionByToken, type SessionWithUser } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { deleteUserRows, unsavedUser } from '../../core/users.js'
import { randomString } from '../../crypto/random.js'
import { anonymousError } from './errors.js'
import { insertAnonymousUser } from './store.js'

/**
 * The generated address of an anonymous user, as better-auth's plugin makes it: a 32-character
 * id at `anonymous.placeholder.invalid` (RFC 6761's reserved name), or `temp-{id}@{emailDomainName}`.
 */
export function anonymousEmail(ctx: AuthContext): string {
  const id = randomString(32)
  const domain = ctx.config().anonymous.emailDomainName
  return domain ? `temp-${id}@${domain}` : `${id}@anonymous.placeholder.invalid`
}

/**
 * POST /sign-in/anonymous, the identification half: a new user named "Anonymous" with a
 * generated, unverified address and `isAnonymous: true`, inserted in the sign-in pipeline's
 * transaction with its session. Refused to a request that already carries an anonymous session.
 */
export function identifyAnonymous(ctx: AuthContext, carried: SessionWithUser | null): SignInAttempt {
  if (carried?.user.isAnonymous) throw anonymousError(400, 'ANONYMOUS_USERS_CANNOT_SIGN_IN_AGAIN_ANONYMOUSLY')
  const row = unsavedUser(ctx, { name: 'Anonymous', email: anonymousEmail(ctx), emailVerified: false, isAnonymous: true })
  return {
    user: row,
    method: 'anonymous',
    // A new user has no second factor enrolled; the pipeline asks anyway, as for any one-factor way in.
    secondFactor: 'due',
    noEmailToVerify: true,
    commit: () => insertAnonymousUser(ctx, row),
    audit: [{ type: 'user.sign-up', actorUserId: row.id, detail: { method: 'anonymous' } }],
  }
}

/**
 * The anonymous session a request carried (cookie or bearer token), unexpired, or null. Read
 * without refreshing it, as better-auth's hook reads it (`disableRefresh`).
 */
export async function carriedAnonymousSession(ctx: AuthContext, token: string | null): Promise<SessionWithUser | null> {
  if (!token) return null
  const found = await findSessionByToken(ctx, token)
  if (!found || found.session.expiresAt.getTime() <= ctx.clock.now()) return null
  return found.user.isAnonymous ? found : null
}

/**
 * Link and remove (better-auth's after-hook): someone who carried an anonymous session signed in
 * or up another way, and the new session exists; the anonymous user, its sessions and accounts go,
 * unless `disableDeleteAnonymousUser`, the new user is the same one, or is anonymous itself. As in
 * better-auth, a failure to delete does not undo the sign-in (it is audited as a failure).
 */
export async function removeLinkedAnonymousUser(
  ctx: AuthContext,
  anonymous: SessionWithUser,
  signedIn: SessionWithUser,
  meta: RequestMeta,
): Promise<boolean> {
  if (ctx.config().anonymous.disableDeleteAnonymousUser) return false
  if (signedIn.user.id === anonymous.user.id || signedIn.user.isAnonymous) return false
  const event = {
    type: 'user.anonymous-linked',
    actorUserId: signedIn.user.id,
    targetUserId: anonymous.user.id,
    detail: { anonymousUserId: anonymous.user.id, newUserId: signedIn.user.id },
    meta,
  }
  try {
    await ctx.storage.transaction(async () => {
      await deleteUserRows(ctx, anonymous.user.id, { actorUserId: signedIn.user.id, meta })
      await recordAudit(ctx, event)
    })
    return true
  } catch {
    await recordAudit(ctx, { ...event, outcome: 'failure' }).catch(() => undefined)
    return false
  }
}

/** POST /delete-anonymous-user: the anonymous user deletes itself (its sessions, then the user). */
export async function deleteAnonymousUser(ctx: AuthContext, current: SessionWithUser, meta: RequestMeta): Promise<void> {
  if (ctx.config().anonymous.disableDeleteAnonymousUser) throw anonymousError(400, 'DELETE_ANONYMOUS_USER_DISABLED')
  if (!current.user.isAnonymous) throw anonymousError(403, 'USER_IS_NOT_ANONYMOUS')
  await ctx.storage.transaction(async () => {
    await deleteUserRows(ctx, current.user.id, { actorUserId: current.user.id, meta })
    await recordAudit(ctx, { type: 'user.deleted', actorUserId: current.user.id, detail: { method: 'anonymous' }, meta })
  })
}
