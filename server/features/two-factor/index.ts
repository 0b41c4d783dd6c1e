import { defineFeature } from '../../feature.js'
import { twoFactorPanel } from './panel.js'
import { afterPasswordVerified, twoFactorRoutes } from './routes.js'

/** better-auth's twoFactor plugin: TOTP, mailed one-time codes, backup codes, trusted devices; plus role enforcement. */
export const twoFactorFeature = defineFeature({
  id: 'two-factor',
  routes: twoFactorRoutes,
  panel: twoFactorPanel,
  afterPasswordVerified,
})
