import type { Route } from '../route.js'
import { coreRoutes } from './core.js'

/** Every HTTP endpoint under the base path. Each feature area adds its declarations here. */
export const allRoutes: Route[] = [...coreRoutes]
