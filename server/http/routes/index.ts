import { features } from '../../features/index.js'
import type { Route } from '../route.js'
import { accountRoutes } from './account.js'
import { adminRoutes } from './admin.js'
import { coreRoutes } from './core.js'
import { openApiRoutes } from './open-api.js'
import { organizationRoutes } from './organization.js'
import { usernameRoutes } from './username.js'

/** Every HTTP endpoint under the base path: the core areas', then those of every feature folder. */
export const allRoutes: Route[] = [
  ...coreRoutes,
  ...usernameRoutes,
  ...adminRoutes,
  ...accountRoutes,
  ...organizationRoutes,
  ...features.flatMap((feature) => feature.routes ?? []),
  // The OpenAPI document describes every route above, and itself.
  ...openApiRoutes(() => allRoutes),
]
