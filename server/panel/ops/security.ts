import { clearAccountLock, listAccountLocks } from '../../auth/throttle.js'
import type { HandlerGroup } from '../service.js'

/** The panel's view of the per-account password throttle: the same domain functions, no rules here. */
export const securityHandlers: HandlerGroup<'security.locks' | 'security.unlock'> = (env) => ({
  'security.locks': async () => ({
    locks: (await listAccountLocks(env.gatehouse.ctx)).map((lock) => ({ ...lock, lockedUntil: lock.lockedUntil.getTime() })),
  }),
  'security.unlock': async ({ key }) => ({ success: await clearAccountLock(env.gatehouse.ctx, key, null, null) }),
})
