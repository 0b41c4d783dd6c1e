import { PANEL_IMPERSONATOR } from '../../core/impersonation.js'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { createSession, deleteSession, findSessionByToken, type SessionWithUser } from '../../core/sessions.js'
import { findUserById } from '../../core/users.js'
import { consumeVerification, createVerification } from '../../core/verification.js'
import { generateId } from '../../crypto/random.js'
import { type Actor, assertMayImpersonate, audit, authorize, requireUser, userActor } from './actor.js'
import { adminError } from './errors.js'

/**
 * Impersonation (SPEC §4 Impersonation): a session of the target marked impersonatedBy the admin,
 * lasting `impersonationSessionDuration` seconds; and the control panel's one-time link to one.
 */

/** Starts impersonating (POST /admin/impersonate-user). */
export async function impersonateUser(
  ctx: AuthContext,
  admin: SessionWithUser,
  input: { userId: string },
  meta: RequestMeta,
): Promise<SessionWithUser> {
  const actor = userActor(admin.user)
  const event = { type: 'admin.impersonate-user', meta }
  await authorize(ctx, actor, ['user', 'impersonate'], 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS', event, input.userId)
  const target = await requireUser(ctx, input.userId)
  await assertMayImpersonate(ctx, actor, target, event)
  const created = await createSession(ctx, target, {
    meta,
    columns: { impersonatedBy: admin.user.id },
    expiresIn: ctx.config().admin.impersonationSessionDuration,
  })
  await audit(ctx, actor, event, { targetUserId: target.id, target: created.session.id, detail: { adminSessionId: admin.session.id } })
  return created
}

export { PANEL_IMPERSONATOR }
/** A panel impersonation link is good for one use within this many seconds. */
export const IMPERSONATION_LINK_TTL = 60

const linkIdentifier = (token: string): string => `impersonation-link:${token}`

/**
 * The control panel's "impersonation link": a one-time token, valid for a minute, that
 * GET /admin/impersonation-link exchanges for an impersonation session in whatever browser opens
 * it. The same permission and admin-protection rules as /admin/impersonate-user apply.
 */
export async function createImpersonationLink(
  ctx: AuthContext,
  actor: Actor,
  userId: string,
  meta: RequestMeta | null,
): Promise<{ token: string; expiresAt: Date }> {
  const event = { type: 'admin.impersonation-link', meta }
  await authorize(ctx, actor, ['user', 'impersonate'], 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS', event, userId)
  const target = await requireUser(ctx, userId)
  await assertMayImpersonate(ctx, actor, target, event)
  const token = generateId(32)
  const row = await createVerification(ctx, linkIdentifier(token), target.id, IMPERSONATION_LINK_TTL)
  await audit(ctx, actor, event, { targetUserId: target.id })
  return { token, expiresAt: row.expiresAt }
}

/** Exchanges a panel link's token, once, for an impersonation session; null when it is unknown, used or expired. */
export async function redeemImpersonationLink(ctx: AuthContext, token: string, meta: RequestMeta): Promise<SessionWithUser | null> {
  const row = await consumeVerification(ctx, linkIdentifier(token))
  const target = row ? await findUserById(ctx, row.value) : undefined
  if (!target) return null
  const created = await createSession(ctx, target, {
    meta,
    columns: { impersonatedBy: PANEL_IMPERSONATOR },
    expiresIn: ctx.config().admin.impersonationSessionDuration,
  })
  await recordAudit(ctx, {
    type: 'admin.impersonate-user',
    targetUserId: target.id,
    target: created.session.id,
    detail: { via: 'panel-link' },
    meta,
  })
  return created
}

export interface StoppedImpersonation {
  /** null for a session opened from a panel link: there is no administrator session to return to. */
  admin: SessionWithUser | null
  /** The admin's session had rememberMe off: restore it as a browser-session cookie. */
  dontRemember: boolean
}

/**
 * Ends an impersonation: deletes the impersonation session and hands back the admin's own
 * session, found through the value of the signed admin_session cookie ("<token>:<dontRemember>").
 */
export async function stopImpersonating(
  ctx: AuthContext,
  current: SessionWithUser,
  adminCookie: string | null,
  meta: RequestMeta,
): Promise<StoppedImpersonation> {
  const adminId = current.session.impersonatedBy
  if (!adminId) throw adminError(400, 'YOU_ARE_NOT_IMPERSONATING_ANYONE')
  if (adminId === PANEL_IMPERSONATOR) {
    await deleteSession(ctx, current.session.token)
    await recordAudit(ctx, {
      type: 'admin.stop-impersonating',
      targetUserId: current.user.id,
      target: current.session.id,
      detail: { via: 'panel-link' },
      meta,
    })
    return { admin: null, dontRemember: false }
  }
  if (!(await findUserById(ctx, adminId))) throw adminError(500, 'FAILED_TO_FIND_USER')
  if (!adminCookie) throw adminError(500, 'FAILED_TO_FIND_ADMIN_SESSION')
  const colon = adminCookie.indexOf(':')
  const token = colon < 0 ? adminCookie : adminCookie.slice(0, colon)
  const dontRemember = colon >= 0 && adminCookie.slice(colon + 1).length > 0
  const admin = await findSessionByToken(ctx, token)
  if (!admin || admin.user.id !== adminId || admin.session.expiresAt.getTime() <= ctx.clock.now()) {
    throw adminError(500, 'FAILED_TO_FIND_ADMIN_SESSION')
  }
  await deleteSession(ctx, current.session.token)
  await recordAudit(ctx, {
    type: 'admin.stop-impersonating',
    actorUserId: adminId,
    targetUserId: current.user.id,
    target: current.session.id,
    detail: { adminSessionId: admin.session.id },
    meta,
  })
  return { admin, dontRemember }
}
