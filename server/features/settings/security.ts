import { clearAccountLock, listAccountLocks } from '../../core/throttle.js'
import type { PanelEnv } from '../../panel-frame/env.js'

/** The panel's view of the per-account password throttle: the same domain functions, no rules here. */
export const securityPanel = (env: PanelEnv) => ({
  'security.locks': async () => ({
    locks: (await listAccountLocks(env.gatehouse.ctx)).map((lock) => ({ ...lock, lockedUntil: lock.lockedUntil.getTime() })),
  }),
  'security.unlock': async ({ key }: { key: string }) => ({ success: await clearAccountLock(env.gatehouse.ctx, key, null, null) }),
})
