import type { FeatureHooks } from '../feature-hooks.js'
import type { Route } from '../route.js'
import { coreRoutes } from './core.js'
import { openApiRoutes } from './open-api.js'

/**
 * Every HTTP endpoint under the base path: the core areas', then those of every feature the
 * composition root hands in (server/routes.ts passes the feature list; http/ imports no feature).
 */
export function routesOf(features: readonly FeatureHooks[]): Route[] {
  const routes: Route[] = [
    ...coreRoutes,
    ...features.flatMap(routesWithRules),
    // The OpenAPI document describes every route above, and itself.
    ...openApiRoutes(() => routes),
  ]
  return routes
}

/** A feature's routes, each carrying the feature's rate-limit rule for its path unless it declares its own. */
function routesWithRules(feature: FeatureHooks): Route[] {
  return (feature.routes ?? []).map((route) => {
    const declared = route.rateLimit ? undefined : feature.rateLimit?.find((r) => r.pathMatcher(route.path))
    return declared ? { ...route, rateLimit: declared.rule } : route
  })
}
