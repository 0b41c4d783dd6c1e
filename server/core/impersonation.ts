import type { RequestMeta } from './context.js'
import { APIError, ERR } from './errors.js'

/**
 * What an impersonation session (admin impersonate-user, a panel link) may not do, and how the
 * audit tells who acted (issue 47 §4). An impersonator sees and acts as the person, but never
 * leaves a credential behind (an app password, an API key, a passkey, a second factor) nor takes
 * the account (its password, its email): the routes that would declare `refusedWhileImpersonating`
 * (server/http/route.ts) or, where the session is optional, call `assertNotImpersonating`.
 */

/** `impersonatedBy` of sessions opened from a control-panel link: no administrator session stands behind them. */
export const PANEL_IMPERSONATOR = 'gatehouse:panel'

/** 403 IMPERSONATION_NOT_ALLOWED for an impersonation session; nothing for any other (or none). */
export function assertNotImpersonating(current: { session: { impersonatedBy?: string | null } } | null | undefined): void {
  if (current?.session.impersonatedBy) throw new APIError(403, 'IMPERSONATION_NOT_ALLOWED', ERR.IMPERSONATION_NOT_ALLOWED)
}

/**
 * Marks a request's meta as made by an impersonation session (http/session.ts, once the session
 * is resolved): every audit event written with it names the impersonator as actor and the person
 * as subject (core/audit.ts recordAudit).
 */
export function noteImpersonation(meta: RequestMeta, current: { user: { id: string }; session: { impersonatedBy?: string | null } }): void {
  const by = current.session.impersonatedBy
  if (by) meta.impersonation = { by, userId: current.user.id }
}
