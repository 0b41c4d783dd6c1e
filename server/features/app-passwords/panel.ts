import { findUserById } from '../../core/users.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { PanelError } from '../../panel-frame/errors.js'
import { listAppPasswords, revokeAppPassword } from './rules.js'

/** Panel handlers: the owner's own domain functions; the audit names the admin (the panel's caller) as actor. */
export const appPasswordsPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  const userOf = async (userId: string) => {
    if (!(await findUserById(ctx, userId))) throw new PanelError(404, 'USER_NOT_FOUND', 'User not found')
  }
  return {
    'appPasswords.list': async ({ userId }: { userId: string }) => {
      await userOf(userId)
      return { appPasswords: await listAppPasswords(ctx, userId) }
    },
    'appPasswords.revoke': async ({ userId, id }: { userId: string; id: string }) => {
      await userOf(userId)
      await revokeAppPassword(ctx, userId, id, null)
      return { success: true }
    },
  }
}
