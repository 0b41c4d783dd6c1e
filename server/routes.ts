import { features } from './features/index.js'
import { routesOf } from './http/routes/index.js'

/**
 * Every HTTP endpoint under the base path, assembled on the composition floor from the feature list
 * and handed to the h3 app (gatehouse.ts), so http/ imports no feature.
 */
export const allRoutes = routesOf(features)
