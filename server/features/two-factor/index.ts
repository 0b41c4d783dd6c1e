import { defineFeature } from '../../feature.js'
import { twoFactorPanel } from './panel.js'
import { secondFactor, twoFactorRoutes } from './routes.js'
import { TWO_FACTOR_ERRORS } from './errors.js'
import * as tables from './schema.js'
import { twoFactorConfig } from './config.js'

/** better-auth's twoFactor plugin: TOTP, mailed one-time codes, backup codes, trusted devices; plus role enforcement. */
export const twoFactorFeature = defineFeature({
  id: 'two-factor',
  config: { twoFactor: twoFactorConfig },
  tables,
  errors: TWO_FACTOR_ERRORS,
  routes: twoFactorRoutes,
  panel: twoFactorPanel,
  secondFactor,
})
