import type { GatehouseConfig } from '../../config/schema.js'
import { type PermissionRequest, parseRoleList, rolesGrant, statementsGrant } from '../../core/access-control.js'

export { joinRoles, type PermissionRequest } from '../../core/access-control.js'

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

/** A user's role column as a list ("admin,support" → ["admin", "support"]); none: the default role. */
export function splitRoles(role: string | null | undefined, config: GatehouseConfig): string[] {
  return parseRoleList(role || config.admin.defaultRole || 'user')
}

/** True when the role allows every requested action on every requested resource. */
export function roleAuthorizes(definition: RoleDefinition, request: PermissionRequest): boolean {
  return statementsGrant(definition, request)
}

export interface PermissionSubject {
  userId?: string | null
  role?: string | null
}

/**
 * better-auth's hasPermission: ids listed in `adminUserIds` may do everything; otherwise any of
 * the subject's roles must authorize the whole request. Unknown roles authorize nothing.
 */
export function hasPermission(config: GatehouseConfig, subject: PermissionSubject, request: PermissionRequest): boolean {
  if (subject.userId && config.admin.adminUserIds.includes(subject.userId)) return true
  return rolesGrant(knownRoles(config), splitRoles(subject.role, config), request)
}

/** An administrator by the config: one of `adminRoles`, or listed in `adminUserIds`. */
export function isAdministrator(config: GatehouseConfig, subject: PermissionSubject): boolean {
  if (subject.userId && config.admin.adminUserIds.includes(subject.userId)) return true
  return splitRoles(subject.role, config).some((r) => config.admin.adminRoles.includes(r))
}
