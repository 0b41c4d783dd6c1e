import { defineRoute, redirect } from '../../http/route.js'

/**
 * better-auth before 1.7 called generic providers back at /oauth2/callback/<providerId>; 1.7 uses
 * /callback/<providerId> as for every provider. A provider still registered with the old redirect
 * URI (set `redirectURI` to it) is sent on to the one callback, query and all: same origin, so the
 * browser presents its state cookie there.
 */
export const genericOAuthRoutes = [
  defineRoute({
    method: 'GET',
    path: '/oauth2/callback/:providerId',
    handler: (rc) => redirect(`${rc.ctx.baseURL}/callback/${encodeURIComponent(rc.params.providerId ?? '')}${rc.url.search}`),
  }),
]
