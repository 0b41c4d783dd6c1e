import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { MAGIC_LINK_ERRORS } from './errors.js'
import { magicLinkEmail, setUpLinkEmail } from './mail.js'
import { magicLinkRoutes } from './routes.js'

/** better-auth's magicLink plugin: a single-use sign-in link mailed through the outbox. */
export const magicLinkFeature = defineFeature({
  id: 'magic-link',
  config: configSections,
  errors: MAGIC_LINK_ERRORS,
  routes: magicLinkRoutes,
  mailPreviews: ({ appName, user, link }) => ({
    'magic-link': () => magicLinkEmail(appName, user, link('/magic-link/verify?token=sample&callbackURL=%2F'), 300),
    'set-up-link': () =>
      setUpLinkEmail(appName, user, link('/magic-link/verify?token=sample&callbackURL=%2Fui%2Faccount%2Ftwo-factor%3Fenrol%3D1'), 3600),
  }),
})
