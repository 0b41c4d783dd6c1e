import { recordAudit } from '../../auth/audit.js'
import { findUserById } from '../../auth/users.js'
import type { PanelEnv } from '../../panel/service.js'
import { PanelError } from '../../panel/service.js'
import { openBackupCodes } from './codes.js'
import { factorRemovedEmail } from './mail.js'
import { graceDeadline, removeSecondFactor, resetGrace } from './service.js'
import { countTrustedDevices, findTwoFactor, secondFactorCounts } from './store.js'
import { deletePasskey, findPasskey, listPasskeys } from '../passkey/store.js'

/** Panel handlers: the same domain functions as the API; every change audited as the operator. */
export const twoFactorPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  const userOf = (userId: string) => {
    const found = findUserById(ctx, userId)
    if (!found) throw new PanelError(404, 'USER_NOT_FOUND', 'User not found')
    return found
  }
  return {
    'twoFactor.overview': () => {
      const counts = secondFactorCounts(ctx)
      const config = ctx.config()
      return {
        enabled: config.twoFactor.enabled,
        passkeyEnabled: config.passkey.enabled,
        ...counts,
        without: counts.users - counts.withAny,
        enforcement: config.twoFactor.enforcement,
      }
    },
    'twoFactor.userFactors': ({ userId }: { userId: string }) => {
      const u = userOf(userId)
      const row = findTwoFactor(ctx, userId)
      const codes = row ? openBackupCodes(ctx.secret, row.backupCodes) : null
      return {
        twoFactorEnabled: Boolean(u.twoFactorEnabled),
        totp: !row ? ('none' as const) : row.verified === false ? ('pending' as const) : ('verified' as const),
        backupCodesLeft: codes ? codes.length : null,
        trustedDevices: countTrustedDevices(ctx, userId),
        graceDeadline: graceDeadline(ctx, userId),
        passkeys: listPasskeys(ctx, userId).map((p) => ({
          id: p.id,
          name: p.name,
          deviceType: p.deviceType,
          backedUp: p.backedUp,
          counter: p.counter,
          createdAt: p.createdAt ? p.createdAt.getTime() : null,
        })),
      }
    },
    'twoFactor.reset': ({ userId }: { userId: string }) => {
      const u = userOf(userId)
      const removed = removeSecondFactor(ctx, userId)
      recordAudit(ctx, { type: 'two-factor.reset', targetUserId: userId, detail: { via: 'panel', trustedDevices: removed.trustedDevices } })
      ctx.mailer.send(factorRemovedEmail(ctx.config().mail.appName, u, 'two-factor authentication (authenticator app, backup codes and trusted devices)'))
      return { success: true }
    },
    'twoFactor.resetGrace': ({ userId }: { userId: string }) => {
      userOf(userId)
      resetGrace(ctx, userId)
      recordAudit(ctx, { type: 'two-factor.grace-reset', targetUserId: userId, detail: { via: 'panel' } })
      return { success: true }
    },
    'twoFactor.setEnforcement': ({ roles, gracePeriod }: { roles: string[]; gracePeriod?: number }) => {
      env.gatehouse.config.update({ twoFactor: { enforcement: { roles, ...(gracePeriod !== undefined ? { gracePeriod } : {}) } } })
      recordAudit(ctx, { type: 'two-factor.enforcement-changed', detail: { roles, gracePeriod, via: 'panel' } })
      return { success: true }
    },
    'passkey.remove': ({ userId, passkeyId }: { userId: string; passkeyId: string }) => {
      const u = userOf(userId)
      const row = findPasskey(ctx, passkeyId)
      if (!row || row.userId !== userId) throw new PanelError(404, 'PASSKEY_NOT_FOUND', 'Passkey not found')
      deletePasskey(ctx, passkeyId)
      recordAudit(ctx, { type: 'passkey.removed', targetUserId: userId, target: passkeyId, detail: { name: row.name, via: 'panel' } })
      ctx.mailer.send(factorRemovedEmail(ctx.config().mail.appName, u, `the passkey ${row.name ? `"${row.name}"` : 'without a name'}`))
      return { success: true }
    },
  }
}
