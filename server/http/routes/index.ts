import { features } from '../../features/index.js'
import type { Route } from '../route.js'
import { coreRoutes } from './core.js'
import { openApiRoutes } from './open-api.js'

/** Every HTTP endpoint under the base path: the core areas', then those of every feature folder. */
export const allRoutes: Route[] = [
  ...coreRoutes,
  ...features.flatMap((feature) => feature.routes ?? []),
  // The OpenAPI document describes every route above, and itself.
  ...openApiRoutes(() => allRoutes),
]
