import type { PanelEnv } from '../../panel-frame/env.js'
import { sectionSettings } from '../../panel-frame/settings-ops.js'
import { listSigningKeys, rotateSigningKey } from './keys.js'

const PANEL_META = { ipAddress: null, userAgent: 'gatehouse-panel' }

export const jwtPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  const settings = sectionSettings(env, 'jwt')
  return {
    'jwt.settings': settings.read,
    'jwt.configure': settings.apply,
    'jwt.keys': async () => {
      const c = ctx.config().jwt
      return { keys: await listSigningKeys(ctx), gracePeriod: c.jwks.gracePeriod, alg: c.jwks.keyPairConfig.alg, enabled: c.enabled }
    },
    'jwt.rotate': () => rotateSigningKey(ctx, { via: 'panel', meta: PANEL_META }),
  }
}
