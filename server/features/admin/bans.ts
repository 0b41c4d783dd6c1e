import type { AuthContext, RequestMeta } from '../../core/context.js'
import { credentialsRevoked } from '../../core/credential-revocation.js'
import { deleteUserSessions, type UserRow } from '../../core/sessions.js'
import { type Actor, actorId, audit, authorize, refuse, requireUser } from './actor.js'
import { patchUser } from './users.js'

/** Bans (SPEC §4 Ban): a banned user has no session and cannot create one until the ban ends. */

export interface BanInput {
  userId: string
  banReason?: string
  /** Seconds until the ban lifts by itself. */
  banExpiresIn?: number
}

const banState = (row: UserRow) => ({
  banned: Boolean(row.banned),
  banReason: row.banReason,
  banExpires: row.banExpires?.toISOString() ?? null,
})

/** Bans a user and deletes every session of theirs, in one transaction. */
export async function banUser(ctx: AuthContext, actor: Actor, input: BanInput, meta: RequestMeta | null): Promise<UserRow> {
  const event = { type: 'admin.ban-user', meta }
  await authorize(ctx, actor, ['user', 'ban'], 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS', event, input.userId)
  const conf = ctx.config().admin
  // Refused before the transaction, so that the refusal's audit event is not rolled back with it.
  if (actorId(actor) === input.userId) {
    await refuse(ctx, actor, event, 400, 'YOU_CANNOT_BAN_YOURSELF', { targetUserId: input.userId })
  }
  return ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, input.userId)
    const expiresIn = input.banExpiresIn ?? conf.defaultBanExpiresIn
    const updated = await patchUser(ctx, input.userId, {
      banned: true,
      banReason: input.banReason || conf.defaultBanReason,
      banExpires: expiresIn ? new Date(ctx.clock.now() + expiresIn * 1000) : null,
    })
    const revoked = await deleteUserSessions(ctx, input.userId)
    await credentialsRevoked(ctx, { userId: input.userId, reason: 'banned', actorUserId: actorId(actor), meta })
    await audit(ctx, actor, event, {
      targetUserId: input.userId,
      detail: { before: banState(before), after: banState(updated), sessionsRevoked: revoked },
    })
    return updated
  })
}

export async function unbanUser(ctx: AuthContext, actor: Actor, input: { userId: string }, meta: RequestMeta | null): Promise<UserRow> {
  const event = { type: 'admin.unban-user', meta }
  await authorize(ctx, actor, ['user', 'ban'], 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS', event, input.userId)
  return ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, input.userId)
    const updated = await patchUser(ctx, input.userId, { banned: false, banReason: null, banExpires: null })
    await audit(ctx, actor, event, { targetUserId: input.userId, detail: { before: banState(before), after: banState(updated) } })
    return updated
  })
}
