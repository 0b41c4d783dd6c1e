import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'

/**
 * Bearer tokens (better-auth's bearer plugin): every answer that sets the session cookie also
 * carries its signed value in `set-auth-token`, and `Authorization: Bearer <that value>` stands for
 * the session cookie on any request. The work is on the session path itself
 * (server/http/cookies.ts readSessionToken, server/http/session.ts setSessionCookies), which reads
 * this feature's config: the hottest path of all has no hook to await.
 */
export const bearerFeature = defineFeature({
  id: 'bearer',
  config: configSections,
})
