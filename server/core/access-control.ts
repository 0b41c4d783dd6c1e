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
