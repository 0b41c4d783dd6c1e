import { defineFeature } from '../../feature.js'
import { twoFactorColumns } from './columns.js'
import { twoFactorPanel } from './panel.js'
import { secondFactor, twoFactorRoutes } from './routes.js'
import { enrolmentOverdue } from './service.js'
import { TWO_FACTOR_ERRORS } from './errors.js'
import * as tables from './schema.js'
import { configSections } from './config.js'

/** better-auth's twoFactor plugin: TOTP, mailed one-time codes, backup codes, trusted devices; plus role enforcement. */
export const twoFactorFeature = defineFeature({
  id: 'two-factor',
  columns: twoFactorColumns,
  config: configSections,
  tables,
  errors: TWO_FACTOR_ERRORS,
  routes: twoFactorRoutes,
  // better-auth's twoFactor plugin rule: a code is six digits, so its paths get the strict budget.
  rateLimit: [{ pathMatcher: (path) => path.startsWith('/two-factor/'), rule: () => ({ window: 10, max: 3 }) }],
  panel: twoFactorPanel,
  secondFactor,
  // A face vouches for no one of an enforced role whose enrolment grace is over (core/admission.ts).
  faceRefusal: (ctx, user) => enrolmentOverdue(ctx, user),
  // Removing a role that must have a second factor asks first (groups/claims.ts roleChangeImpact).
  namedRoles: (ctx) =>
    ctx.config().twoFactor.enforcement.roles.map((name) => ({
      where: 'twoFactor.enforcement.roles',
      name,
      effect: 'nobody can be given it any more, so only those who hold it now must have a second factor by it',
    })),
})
