import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { panelCaller } from '../../core/panel-caller.js'
import type { UserRow } from '../../core/sessions.js'
import { findUserById } from '../../core/users.js'
import { hasPermission, isAdministrator, joinRoles, knownRoles, type SessionAction, type UserAction } from './access.js'
import { type AdminErrorKey, adminError } from './errors.js'

/**
 * Who performs an admin action and whether they may: the rule every admin function starts with.
 * The HTTP endpoints and the control panel call the same functions; each checks the actor's
 * permission itself, so the rule lives here once. Every change appends an audit event.
 */

/** A signed-in user (HTTP), or the operator (control panel, CLI). */
export type Actor = { kind: 'user'; user: UserRow } | { kind: 'system'; via: 'panel' | 'cli' }

export const userActor = (row: UserRow): Actor => ({ kind: 'user', user: row })
export const systemActor = (via: 'panel' | 'cli'): Actor => ({ kind: 'system', via })

/** The actor of a control-panel operation: the admin signed in to the panel, else the operator. */
export const panelActor = (): Actor => {
  const caller = panelCaller()
  return caller?.kind === 'admin' ? userActor(caller.user) : systemActor('panel')
}

export const actorId = (actor: Actor): string | null => (actor.kind === 'user' ? actor.user.id : null)

export type Permission = ['user', UserAction] | ['session', SessionAction]

/** Whether the actor holds one permission. The operator (panel, CLI) holds them all. */
export function actorMay(ctx: AuthContext, actor: Actor, [resource, action]: Permission): boolean {
  if (actor.kind === 'system') return true
  return hasPermission(ctx.config(), { userId: actor.user.id, role: actor.user.role }, { [resource]: [action] })
}

export interface AuditContext {
  type: string
  meta: RequestMeta | null
}

export async function audit(
  ctx: AuthContext,
  actor: Actor,
  event: AuditContext,
  fields: { targetUserId?: string | null; target?: string | null; detail?: Record<string, unknown>; outcome?: 'success' | 'failure' },
): Promise<void> {
  await recordAudit(ctx, {
    type: event.type,
    outcome: fields.outcome ?? 'success',
    actorUserId: actorId(actor),
    targetUserId: fields.targetUserId ?? null,
    target: fields.target ?? null,
    detail: { ...(actor.kind === 'system' ? { via: actor.via } : {}), ...fields.detail },
    meta: event.meta,
  })
}

/** Refuses (403 with the endpoint's message) and records the refusal. */
export async function authorize(
  ctx: AuthContext,
  actor: Actor,
  permission: Permission,
  denied: AdminErrorKey,
  event: AuditContext,
  targetUserId: string | null = null,
): Promise<void> {
  if (actorMay(ctx, actor, permission)) return
  await audit(ctx, actor, event, { outcome: 'failure', targetUserId, detail: { reason: denied } })
  throw adminError(403, denied)
}

/** Records a refusal of the rule itself (not of a permission) and throws it. */
export async function refuse(
  ctx: AuthContext,
  actor: Actor,
  event: AuditContext,
  status: 400 | 403,
  reason: AdminErrorKey,
  fields: { targetUserId?: string | null; detail?: Record<string, unknown> } = {},
): Promise<never> {
  await audit(ctx, actor, event, { outcome: 'failure', targetUserId: fields.targetUserId ?? null, detail: { reason, ...fields.detail } })
  throw adminError(status, reason)
}

export async function requireUser(ctx: AuthContext, userId: string): Promise<UserRow> {
  const found = await findUserById(ctx, userId)
  if (!found) throw adminError(404, 'USER_NOT_FOUND')
  return found
}

/** Only roles this configuration defines may be given (current better-auth's rule). */
export function assertKnownRoles(ctx: AuthContext, role: string | readonly string[]): string {
  const roles = knownRoles(ctx.config())
  const list = typeof role === 'string' ? [role] : role
  if (list.length === 0) throw adminError(400, 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE')
  for (const name of list) {
    if (!Object.hasOwn(roles, name.trim())) throw adminError(400, 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE')
  }
  return joinRoles(list)
}

/**
 * Impersonating an administrator needs the `impersonate-admins` permission, which the built-in
 * admin role does not have (otherwise any role allowed to impersonate could become an admin).
 * The one check behind /admin/impersonate-user and the panel's impersonation link.
 */
export async function assertMayImpersonate(ctx: AuthContext, actor: Actor, target: UserRow, event: AuditContext): Promise<void> {
  if (!isAdministrator(ctx.config(), { userId: target.id, role: target.role })) return
  if (actorMay(ctx, actor, ['user', 'impersonate-admins'])) return
  await refuse(ctx, actor, event, 403, 'YOU_CANNOT_IMPERSONATE_ADMINS', { targetUserId: target.id })
}
