import { defineFeature } from '../../feature.js'
import { anonymousColumns } from './columns.js'
import { requestSessionToken } from '../../http/session.js'
import { configSections } from './config.js'
import { ANONYMOUS_ERRORS } from './errors.js'
import { anonymousRoutes } from './routes.js'
import { carriedAnonymousSession, removeLinkedAnonymousUser } from './rules.js'

/**
 * Anonymous users (better-auth's anonymous plugin): POST /sign-in/anonymous makes a user with a
 * generated address and `isAnonymous: true`, signed in through the sign-in pipeline. When someone
 * carrying an anonymous session signs in or up by any other method, the pipeline's `signedIn` hook
 * removes the anonymous user once the new session exists (link and remove).
 */
export const anonymousFeature = defineFeature({
  id: 'anonymous',
  columns: anonymousColumns,
  config: configSections,
  errors: ANONYMOUS_ERRORS,
  routes: anonymousRoutes,
  // An anonymous user has a generated address and no one behind it to vouch for (core/admission.ts).
  faceRefusal: (_ctx, user) => (user.isAnonymous ? 'ANONYMOUS_USER' : null),
  signedIn: async (rc, signedIn, attempt) => {
    // better-auth's hook matches the sign-in, sign-up, callback and verification paths, not the
    // two-factor step (whose first step already dropped the anonymous session cookie).
    if (!rc.ctx.config().anonymous.enabled || attempt.method === 'two-factor') return
    const carried = await carriedAnonymousSession(rc.ctx, requestSessionToken(rc))
    if (carried) await removeLinkedAnonymousUser(rc.ctx, carried, signedIn, rc.meta)
  },
})
