import { defineFeature } from '../../feature.js'
import { buildLog, hostedPagesRoutes } from './routes.js'
import { HOSTED_PAGES_ERRORS } from './errors.js'
import { configSections } from './config.js'

/**
 * Gatehouse's hosted end-user pages (issue 17): a small React + Mantine app under
 * `{basePath}/ui/` (renderer/hosted, built by vite.hosted.config.ts into out/hosted) and its public
 * configuration at `{basePath}/ui/api/config`. Themed by `appName` and `hostedPages.*`, edited in
 * the panel's Settings (Application and URLs).
 */
export const hostedPagesFeature = defineFeature({
  id: 'hosted-pages',
  config: configSections,
  errors: HOSTED_PAGES_ERRORS,
  routes: hostedPagesRoutes,
  start: ({ logger }) => {
    buildLog.logger = logger
    return () => {
      if (buildLog.logger === logger) buildLog.logger = null
    }
  },
})
