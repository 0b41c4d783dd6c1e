import type { GatehouseConfig } from '../../config/schema.js'
import { type PermissionRequest, parseRoleList, rolesGrant, type Statements } from '../../core/access-control.js'

/**
 * Organization access control (SPEC §6, reference §9.1): the feature's statements and default
 * roles on the one access engine of core/access-control.ts (role parsing, joining and the check
 * live there). A member's role string, split on commas, is looked up in the role table.
 */

/** The resources and actions of the organization feature. */
export const ORG_STATEMENTS = {
  organization: ['update', 'delete'],
  member: ['create', 'update', 'delete'],
  invitation: ['create', 'cancel'],
  team: ['create', 'update', 'delete'],
} as const satisfies Statements

export const DEFAULT_ORG_ROLES: Readonly<Record<string, Statements>> = {
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

/** The role table in force: the defaults plus the configured custom roles (a custom role of the same name wins). */
export function orgRoles(config: GatehouseConfig): Record<string, Statements> {
  return { ...DEFAULT_ORG_ROLES, ...config.organization.roles }
}

export function isKnownRole(config: GatehouseConfig, role: string): boolean {
  return Object.hasOwn(orgRoles(config), role)
}

/** True when one of the roles in `role` grants all of `permissions`. An empty request is denied. */
export function roleHasPermission(config: GatehouseConfig, role: string, permissions: PermissionRequest): boolean {
  return rolesGrant(orgRoles(config), parseRoleList(role), permissions)
}

/** Whether the role list includes the creator role ("owner" by default). */
export function includesCreatorRole(config: GatehouseConfig, role: string | readonly string[]): boolean {
  return parseRoleList(role).includes(config.organization.creatorRole)
}
