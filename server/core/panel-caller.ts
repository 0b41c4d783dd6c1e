import { AsyncLocalStorage } from 'node:async_hooks'
import type { RequestMeta } from './context.js'
import type { user } from '../db/schema.js'

/** A user row (core/sessions.ts names it too; not imported from there, which records audit events that ask this module). */
type UserRow = typeof user.$inferSelect

/**
 * Who runs a control-panel operation (issue 31 §1). The panel's transports say it once per
 * operation (server/panel/service.ts `dispatch`), and everything the operation does runs inside
 * that scope, so every audit event it records names this caller (`recordAudit`), whichever
 * feature records it:
 *
 * - `admin`: a Gatehouse user signed in to the browser panel through the sign-in pipeline;
 *   `access` is `full` for an administrator (`admin.adminRoles` / `admin.adminUserIds`) and
 *   `limited` for a role that holds only some `admin.*` permissions;
 * - `os-account`: the desktop app's local owner, the operating-system account running it;
 * - `recovery`: the browser panel opened with the link printed at start (bootstrap, lost admin).
 */
export type PanelCaller =
  | { kind: 'admin'; user: UserRow; access: 'full' | 'limited'; meta: RequestMeta }
  | { kind: 'os-account'; account: string; meta: RequestMeta }
  | { kind: 'recovery'; meta: RequestMeta }

const scope = new AsyncLocalStorage<PanelCaller>()

/** Runs `body` as `caller`: what it records in the audit log names them. */
export function runAsPanelCaller<T>(caller: PanelCaller, body: () => T): T {
  return scope.run(caller, body)
}

/** The caller of the panel operation running now, or null outside one. */
export function panelCaller(): PanelCaller | null {
  return scope.getStore() ?? null
}

/**
 * Leaves the caller's scope: work that outlives the operation (a timer, a scheduled job started
 * from it) must not record its later events in the caller's name.
 */
export function outsidePanelCaller<T>(body: () => T): T {
  return scope.exit(body)
}

/** How an audit event names a caller that is no user row (the desktop's OS account, the recovery link). */
export function callerLabel(caller: PanelCaller): string {
  if (caller.kind === 'admin') return caller.user.email
  if (caller.kind === 'os-account') return `os:${caller.account}`
  return 'recovery-link'
}
