import type { GatehouseConfig } from '../../config/schema.js'
import { type PermissionRequest, parseRoleList, rolesGrant, statementsGrant } from '../../core/access-control.js'

export { joinRoles, type PermissionRequest } from '../../core/access-control.js'

/**
 * Administrator access control (SPEC §6, reference §8): resources and their actions, the
 * built-in roles, custom roles from the config, and the permission check every admin action
 * goes through, on the one access engine of core/access-control.ts.
 */
export const ADMIN_STATEMENTS = {
  user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'impersonate-admins', 'delete', 'set-password', 'set-email', 'get', 'update'],
  session: ['list', 'revoke', 'delete'],
} as const

export type AdminResource = keyof typeof ADMIN_STATEMENTS
export type AdminAction<R extends AdminResource = AdminResource> = (typeof ADMIN_STATEMENTS)[R][number]
export type UserAction = AdminAction<'user'>
export type SessionAction = AdminAction<'session'>

/** What a role may do: resource → allowed actions. */
export type RoleDefinition = {
  user?: readonly UserAction[]
  session?: readonly SessionAction[]
}

/**
 * The built-in roles. `admin` may do everything except impersonate other administrators
 * (current better-auth's rule: otherwise any role allowed to impersonate could become an admin).
 */
export const BUILT_IN_ROLES: Readonly<Record<string, RoleDefinition>> = {
  admin: {
    user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password', 'set-email', 'get', 'update'],
    session: ['list', 'revoke', 'delete'],
  },
  user: { user: [], session: [] },
}

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
