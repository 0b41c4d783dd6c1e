import type { GatehouseConfig } from '../config/schema.js'
import type { PanelCaller } from '../core/panel-caller.js'
import { ADMIN_STATEMENTS, hasPermission } from '../features/admin/access.js'
import { contract, type OpName, opNames } from './contract.js'

/**
 * What a panel caller may do (issue 31): the one rule the panel's dispatcher refuses by
 * (server/panel/service.ts) and the renderer is told in `server.info` (so it hides or disables
 * what would be refused). An operation that declares an `admin.*` permission (OpDef.permission)
 * needs it, by the same `hasPermission` the admin domain functions check; every view reads; any
 * other change needs an administrator (`access: 'full'`). The desktop's OS account and the
 * recovery link act as the server's operator: everything.
 *
 * `users.bulk` declares no permission of its own: each of its actions is checked per user by the
 * domain function it runs (ban: user:ban, revokeSessions: session:revoke, remove: user:delete).
 */

type AdminCaller = Extract<PanelCaller, { kind: 'admin' }>

/** Limited roles may run these changes, their domain functions checking the role's own permissions. */
const LIMITED_MUTATIONS = /^users\./

/** Why `op` is refused to `caller`, or null when it is allowed. */
export function panelRefusal(config: GatehouseConfig, caller: PanelCaller | null, op: OpName): string | null {
  if (caller?.kind !== 'admin') return null
  const def = contract[op] as { mutates: boolean; permission?: readonly [string, string] }
  if (def.permission) {
    const [resource, action] = def.permission
    return hasPermission(config, subjectOf(caller), { [resource]: [action] })
      ? null
      : `Your role does not allow this (it needs the ${resource}:${action} permission)`
  }
  if (!def.mutates || caller.access === 'full' || LIMITED_MUTATIONS.test(op)) return null
  return 'Your role may view this, but changing it needs an administrator'
}

const subjectOf = (caller: AdminCaller) => ({ userId: caller.user.id, role: caller.user.role })

/** The `admin.*` permissions the caller holds, as `resource:action` (the operator: all of them). */
export function callerPermissions(config: GatehouseConfig, caller: PanelCaller | null): string[] {
  const all = (Object.keys(ADMIN_STATEMENTS) as Array<keyof typeof ADMIN_STATEMENTS>).flatMap((resource) =>
    ADMIN_STATEMENTS[resource].map((action) => [resource, action] as const),
  )
  return all
    .filter(([resource, action]) => caller?.kind !== 'admin' || hasPermission(config, subjectOf(caller), { [resource]: [action] }))
    .map(([resource, action]) => `${resource}:${action}`)
}

/** The changes (mutating operations) the caller may run: what the renderer offers. */
export function allowedChanges(config: GatehouseConfig, caller: PanelCaller | null): OpName[] {
  return opNames.filter((op) => contract[op].mutates && panelRefusal(config, caller, op) === null)
}

/** Downloads (backups, exports) carry whole data sets: an administrator's, never a view-only role's. */
export const panelMayDownload = (caller: PanelCaller): boolean => caller.kind !== 'admin' || caller.access === 'full'
