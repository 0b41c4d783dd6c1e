import type { GatehouseConfig } from '../config/schema.js'

/**
 * Organization access control (SPEC §6, reference §9.1): a member's role string in an
 * organization, split on commas, against the role table. A request is allowed when any of the
 * member's roles grants every requested action of every requested resource.
 */

export type Statements = Record<string, readonly string[]>

/** The resources and actions of the organization feature. */
export const ORG_STATEMENTS = {
  organization: ['update', 'delete'],
  member: ['create', 'update', 'delete'],
  invitation: ['create', 'cancel'],
  team: ['create', 'update', 'delete'],
} as const satisfies Statements

export const DEFAULT_ORG_ROLES: Record<string, Statements> = {
  owner: {
    organization: ['update', 'delete'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
  },
  admin: {
    organization: ['update'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
  },
  member: { organization: [], member: [], invitation: [], team: [] },
}

/** "admin, member" or ["admin", "member"] → ["admin", "member"]: trimmed, no empty entries. */
export function parseRoleList(roles: string | readonly string[]): string[] {
  return (typeof roles === 'string' ? [roles] : roles)
    .flatMap((role) => role.split(','))
    .map((role) => role.trim())
    .filter(Boolean)
}

/** The stored form: comma-joined, trimmed. */
export const joinRoles = (roles: string | readonly string[]): string => parseRoleList(roles).join(',')

/** The role table in force: the defaults plus the configured custom roles (a custom role of the same name wins). */
export function orgRoles(config: GatehouseConfig): Record<string, Statements> {
  return { ...DEFAULT_ORG_ROLES, ...config.organization.roles }
}

export function isKnownRole(config: GatehouseConfig, role: string): boolean {
  return Object.hasOwn(orgRoles(config), role)
}

export type PermissionRequest = Record<string, readonly string[]>

/** True when one of the roles in `role` grants all of `permissions`. An empty request is denied. */
export function roleHasPermission(config: GatehouseConfig, role: string, permissions: PermissionRequest): boolean {
  const resources = Object.entries(permissions)
  if (resources.length === 0) return false
  const table = orgRoles(config)
  return parseRoleList(role).some((name) => {
    const statements = Object.hasOwn(table, name) ? table[name] : undefined
    if (!statements) return false
    return resources.every(([resource, actions]) => {
      const granted = Object.hasOwn(statements, resource) ? statements[resource] : undefined
      return granted !== undefined && actions.every((action) => granted.includes(action))
    })
  })
}

/** Whether the role list includes the creator role ("owner" by default). */
export function includesCreatorRole(config: GatehouseConfig, role: string | readonly string[]): boolean {
  return parseRoleList(role).includes(config.organization.creatorRole)
}
