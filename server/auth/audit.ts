import { auditEvent } from '../db/schema.js'
import type { AuthContext, RequestMeta } from './context.js'

export type AuditEventType =
  | 'user.sign-up'
  | 'user.sign-in'
  | 'user.sign-out'
  | 'session.revoked'
  | 'session.revoked-all'
  | 'session.revoked-others'
  | 'session.expired'

export interface AuditInput {
  type: AuditEventType | (string & {})
  outcome?: 'success' | 'failure'
  actorUserId?: string | null
  targetUserId?: string | null
  target?: string | null
  detail?: Record<string, unknown> | null
  meta?: RequestMeta | null
}

/** Appends one event to the audit log. The log is append-only: nothing updates or deletes it. */
export function recordAudit(ctx: AuthContext, event: AuditInput): void {
  ctx.db
    .insert(auditEvent)
    .values({
      type: event.type,
      outcome: event.outcome ?? 'success',
      actorUserId: event.actorUserId ?? null,
      targetUserId: event.targetUserId ?? event.actorUserId ?? null,
      target: event.target ?? null,
      ipAddress: event.meta?.ipAddress ?? null,
      userAgent: event.meta?.userAgent ?? null,
      detail: event.detail ?? null,
      createdAt: new Date(ctx.clock.now()),
    })
    .run()
}
