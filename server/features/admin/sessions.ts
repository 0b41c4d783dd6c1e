import type { AuthContext, RequestMeta } from '../../core/context.js'
import { activeSessionsOfUser, deleteSessionByToken, deleteUserSessions, type SessionRow } from '../../core/sessions.js'
import { credentialsRevoked } from '../../core/credential-revocation.js'
import { type Actor, actorId, audit, authorize } from './actor.js'

/** An administrator's view of other users' sessions (SPEC §7 Admin). */

/** The user's unexpired sessions, impersonation sessions included (an admin should see them). */
export async function listSessionsOfUser(ctx: AuthContext, actor: Actor, userId: string): Promise<SessionRow[]> {
  const event = { type: 'admin.list-user-sessions', meta: null }
  await authorize(ctx, actor, ['session', 'list'], 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS', event, userId)
  return activeSessionsOfUser(ctx, userId)
}

/** Revokes one session by token; unknown tokens succeed too (better-auth). */
export async function revokeUserSession(ctx: AuthContext, actor: Actor, sessionToken: string, meta: RequestMeta | null): Promise<void> {
  const event = { type: 'admin.revoke-user-session', meta }
  await authorize(ctx, actor, ['session', 'revoke'], 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS', event)
  const removed = await deleteSessionByToken(ctx, sessionToken)
  await audit(ctx, actor, event, {
    targetUserId: removed?.userId ?? null,
    target: removed?.id ?? null,
    detail: { found: Boolean(removed) },
  })
}

/** Revokes every session of a user; how many there were. */
export async function revokeUserSessions(ctx: AuthContext, actor: Actor, userId: string, meta: RequestMeta | null): Promise<number> {
  const event = { type: 'admin.revoke-user-sessions', meta }
  await authorize(ctx, actor, ['session', 'revoke'], 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS', event, userId)
  const revoked = await ctx.storage.transaction(async () => {
    const count = await deleteUserSessions(ctx, userId)
    await credentialsRevoked(ctx, { userId, reason: 'sessions-revoked', actorUserId: actorId(actor), meta })
    return count
  })
  await audit(ctx, actor, event, { targetUserId: userId, detail: { count: revoked } })
  return revoked
}
