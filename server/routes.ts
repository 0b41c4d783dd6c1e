import { provideHostedPages } from './features/hosted-pages/routes.js'
import { HOSTED_PAGES } from './features/hosted-page-list.js'
import { features } from './features/index.js'
import { routesOf } from './http/routes/index.js'

/**
 * Every HTTP endpoint under the base path, assembled on the composition floor from the feature list
 * and handed to the h3 app (gatehouse.ts), so http/ imports no feature; and the hosted pages every
 * feature declares, handed to the hosted-pages routes that serve them.
 */
export const allRoutes = routesOf(features)
provideHostedPages(HOSTED_PAGES)
