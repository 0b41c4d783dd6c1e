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
