import type { GatehouseConfig } from '../../config/schema.js'
import { type PermissionRequest, type PermissionSubject, rolesGrant, splitRoles, statementsGrant } from '../../core/access-control.js'

export { isAdministrator, joinRoles, type PermissionRequest, type PermissionSubject, splitRoles } from '../../core/access-control.js'

export {
  ADMIN_STATEMENTS,
  type AdminAction,
  type AdminResource,
  BUILT_IN_ROLES,
  type RoleDefinition,
  type SessionAction,
  type UserAction,
} from './statements.js'
import type { RoleDefinition } from './statements.js'
import { BUILT_IN_ROLES } from './statements.js'

/**
 * Every role known to this configuration: the built-in ones with the configured custom roles
 * merged over them (a custom role named like a built-in one replaces it).
 */
export function knownRoles(config: GatehouseConfig): Record<string, RoleDefinition> {
  return { ...BUILT_IN_ROLES, ...config.admin.roles }
}

/** True when the role allows every requested action on every requested resource. */
export function roleAuthorizes(definition: RoleDefinition, request: PermissionRequest): boolean {
  return statementsGrant(definition, request)
}

/**
 * better-auth's hasPermission: ids listed in `adminUserIds` may do everything; otherwise any of
 * the subject's roles must authorize the whole request. Unknown roles authorize nothing.
 */
export function hasPermission(config: GatehouseConfig, subject: PermissionSubject, request: PermissionRequest): boolean {
  if (subject.userId && config.admin.adminUserIds.includes(subject.userId)) return true
  return rolesGrant(knownRoles(config), splitRoles(subject.role, config), request)
}
