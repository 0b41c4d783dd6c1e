import type { GatehouseConfig } from '../config/schema.js'

/**
 * The one access engine (better-auth's createAccessControl, used by admin roles, organization
 * roles and API-key permissions alike): statements name each resource's actions, a role is a
 * statement subset, a request is resource → actions and is granted when one of the subject's roles
 * grants every action of every resource it names. An empty request, an unknown role or an unknown
 * resource grants nothing.
 */

/** resource → actions: what a feature declares, what a role grants, what a request asks. */
export type Statements = Record<string, readonly string[]>
export type PermissionRequest = Record<string, readonly string[]>

/** "admin, member" or ["admin", "member"] → ["admin", "member"]: split on commas, trimmed, no empty entries. */
export function parseRoleList(roles: string | readonly string[] | null | undefined): string[] {
  if (roles === null || roles === undefined) return []
  // One role (the common case, asked at every LDAP operation and permission check): no lists built.
  if (typeof roles === 'string' && !roles.includes(',')) {
    const role = roles.trim()
    return role ? [role] : []
  }
  return (typeof roles === 'string' ? [roles] : roles)
    .flatMap((role) => role.split(','))
    .map((role) => role.trim())
    .filter(Boolean)
}

/** The stored form of one or several roles: comma-joined, trimmed, no empty entries. */
export const joinRoles = (roles: string | readonly string[]): string => parseRoleList(roles).join(',')

/** Whether one role's statements grant the whole request. */
export function statementsGrant(granted: Statements, request: PermissionRequest): boolean {
  const entries = Object.entries(request)
  if (entries.length === 0) return false
  return entries.every(([resource, actions]) => {
    const allowed = Object.hasOwn(granted, resource) ? granted[resource] : undefined
    return allowed !== undefined && actions.length > 0 && actions.every((action) => allowed.includes(action))
  })
}

/** Whether any of `roles` (looked up in `table`) grants the whole request. */
export function rolesGrant(table: Readonly<Record<string, Statements>>, roles: readonly string[], request: PermissionRequest): boolean {
  return roles.some((name) => {
    const statements = Object.hasOwn(table, name) ? table[name] : undefined
    return statements !== undefined && statementsGrant(statements, request)
  })
}

/** Who asks, for the server's own roles: a user id (`admin.adminUserIds`) and the role column. */
export interface PermissionSubject {
  userId?: string | null
  role?: string | null
}

/** A user's role column as a list ("admin,support" → ["admin", "support"]); none: the default role. */
export function splitRoles(role: string | null | undefined, config: GatehouseConfig): string[] {
  return parseRoleList(role || config.admin.defaultRole || 'user')
}

/**
 * An administrator by the config: one of `admin.adminRoles`, or listed in `admin.adminUserIds`
 * (the admin feature's rule; here so that a feature that may not depend on admin, such as
 * organization's reserved slugs, asks the same question).
 */
export function isAdministrator(config: GatehouseConfig, subject: PermissionSubject): boolean {
  if (subject.userId && config.admin.adminUserIds.includes(subject.userId)) return true
  return splitRoles(subject.role, config).some((r) => config.admin.adminRoles.includes(r))
}
