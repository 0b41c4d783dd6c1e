import type { Route } from '../route.js'
import { accountRoutes } from './account.js'
import { coreRoutes } from './core.js'
import { organizationRoutes } from './organization.js'
import { socialRoutes } from './social.js'

/** Every HTTP endpoint under the base path. Each feature area adds its declarations here. */
export const allRoutes: Route[] = [...coreRoutes, ...accountRoutes, ...organizationRoutes, ...socialRoutes]
