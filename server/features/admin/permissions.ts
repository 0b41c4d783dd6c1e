import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { findUserById } from '../../core/users.js'
import { hasPermission, type PermissionRequest, type PermissionSubject } from './access.js'
import { adminError } from './errors.js'

export interface PermissionCheckInput {
  userId?: string
  role?: string
  permissions?: PermissionRequest
  /** Deprecated better-auth spelling of `permissions`. */
  permission?: PermissionRequest
}

/**
 * POST /admin/has-permission and the panel's permission preview. Subject: the signed-in user,
 * else `role`, else the user with `userId`.
 */
export async function checkPermission(ctx: AuthContext, caller: UserRow | null, input: PermissionCheckInput): Promise<boolean> {
  const permissions = input.permissions ?? input.permission
  if (!permissions) throw adminError(400, 'INVALID_PERMISSION_CHECK')
  let subject: PermissionSubject
  if (caller) subject = { userId: caller.id, role: caller.role }
  else if (input.role) subject = { userId: input.userId ?? null, role: input.role }
  else if (input.userId) {
    const found = await findUserById(ctx, input.userId)
    if (!found) throw adminError(400, 'PERMISSION_SUBJECT_NOT_FOUND')
    subject = { userId: found.id, role: found.role }
  } else throw adminError(400, 'USER_ID_OR_ROLE_IS_REQUIRED')
  return hasPermission(ctx.config(), subject, permissions)
}
