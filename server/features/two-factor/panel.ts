import { recordAudit } from '../../core/audit.js'
import { findUserById } from '../../core/users.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { PanelError, refuseStartupKeys } from '../../panel-frame/errors.js'
import { openBackupCodes } from './codes.js'
import { factorRemovedEmail } from './mail.js'
import { graceDeadline, removeSecondFactor, resetGrace } from './service.js'
import { countTrustedDevices, findTwoFactor, secondFactorCounts } from './store.js'
import { deletePasskey, findPasskey, listPasskeys } from '../passkey/store.js'

/** Panel handlers: the same domain functions as the API; every change audited as the operator. */
export const twoFactorPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  const userOf = async (userId: string) => {
    const found = await findUserById(ctx, userId)
    if (!found) throw new PanelError(404, 'USER_NOT_FOUND', 'User not found')
    return found
  }
  return {
    'twoFactor.overview': async () => {
      const counts = await secondFactorCounts(ctx)
      const config = ctx.config()
      return {
        enabled: config.twoFactor.enabled,
        passkeyEnabled: config.passkey.enabled,
        ...counts,
        without: counts.users - counts.withAny,
        enforcement: config.twoFactor.enforcement,
      }
    },
    'twoFactor.userFactors': async ({ userId }: { userId: string }) => {
      const u = await userOf(userId)
      const row = await findTwoFactor(ctx, userId)
      const codes = row ? openBackupCodes(ctx.secret, row.backupCodes) : null
      return {
        twoFactorEnabled: Boolean(u.twoFactorEnabled),
        totp: !row ? ('none' as const) : row.verified === false ? ('pending' as const) : ('verified' as const),
        backupCodesLeft: codes ? codes.length : null,
        trustedDevices: await countTrustedDevices(ctx, userId),
        graceDeadline: await graceDeadline(ctx, userId),
        passkeys: (await listPasskeys(ctx, userId)).map((p) => ({
          id: p.id,
          name: p.name,
          deviceType: p.deviceType,
          backedUp: p.backedUp,
          counter: p.counter,
          createdAt: p.createdAt ? p.createdAt.getTime() : null,
        })),
      }
    },
    'twoFactor.reset': async ({ userId }: { userId: string }) => {
      const u = await userOf(userId)
      const removed = await removeSecondFactor(ctx, userId)
      await recordAudit(ctx, {
        type: 'two-factor.reset',
        targetUserId: userId,
        detail: { via: 'panel', trustedDevices: removed.trustedDevices },
      })
      await ctx.mailer.send(
        factorRemovedEmail(ctx.config().mail.appName, u, 'two-factor authentication (authenticator app, backup codes and trusted devices)'),
      )
      return { success: true }
    },
    'twoFactor.resetGrace': async ({ userId }: { userId: string }) => {
      await userOf(userId)
      await resetGrace(ctx, userId)
      await recordAudit(ctx, { type: 'two-factor.grace-reset', targetUserId: userId, detail: { via: 'panel' } })
      return { success: true }
    },
    'twoFactor.setEnforcement': async ({ roles, gracePeriod }: { roles?: string[]; gracePeriod?: number }) => {
      const enforcement = { ...(roles !== undefined ? { roles } : {}), ...(gracePeriod !== undefined ? { gracePeriod } : {}) }
      const change = { twoFactor: { enforcement } }
      // A value set at start-up would not take effect: refused (409 SET_AT_STARTUP), never stored.
      refuseStartupKeys(env.gatehouse.config.startupKeys(), change)
      env.gatehouse.config.update(change)
      // On PostgreSQL, shared with the other instances before the answer leaves.
      await env.gatehouse.config.flushed()
      await recordAudit(ctx, { type: 'two-factor.enforcement-changed', detail: { roles, gracePeriod, via: 'panel' } })
      return { success: true }
    },
    'passkey.remove': async ({ userId, passkeyId }: { userId: string; passkeyId: string }) => {
      const u = await userOf(userId)
      const row = await findPasskey(ctx, passkeyId)
      if (!row || row.userId !== userId) throw new PanelError(404, 'PASSKEY_NOT_FOUND', 'Passkey not found')
      await deletePasskey(ctx, passkeyId)
      await recordAudit(ctx, { type: 'passkey.removed', targetUserId: userId, target: passkeyId, detail: { name: row.name, via: 'panel' } })
      await ctx.mailer.send(
        factorRemovedEmail(ctx.config().mail.appName, u, `the passkey ${row.name ? `"${row.name}"` : 'without a name'}`),
      )
      return { success: true }
    },
  }
}
