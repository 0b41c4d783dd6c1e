import type { AuthContext } from './core/context.js'
import { setAuditListener } from './core/audit.js'
import { setCredentialRevocationListener } from './core/credential-revocation.js'
import { setSessionEndListener } from './core/session-ends.js'
import type { Feature } from './feature.js'
import { attachHooks, hooksOf, membersWith } from './http/feature-hooks.js'

/**
 * The features a server runs, per context, whole (the frame's view). The composition root attaches
 * them; the features and the composition ask here. Core and HTTP ask the seam below them,
 * http/feature-hooks.ts, which keeps the same list typed as the hooks they call: the context does
 * not carry it, because the `Feature` type names the context's types (routes, sessions, sign-in
 * attempts), and a context that named `Feature` would be an import cycle through every module that
 * uses a context.
 */
export function attachFeatures(ctx: object, list: readonly Feature[]): void {
  attachHooks(ctx, list)
  setSessionEndListener(ctx, async (ended, ids) => {
    for (const feature of featuresWith(ended, 'sessionsEnded')) await feature.sessionsEnded(ended as AuthContext, ids)
  })
  setCredentialRevocationListener(ctx, async (revoking, revocation) => {
    for (const feature of featuresWith(revoking, 'credentialsRevoked'))
      await feature.credentialsRevoked(revoking as AuthContext, revocation)
  })
  setAuditListener(ctx, async (recording, event) => {
    for (const feature of featuresWith(recording, 'audited')) await feature.audited(recording, event)
  })
}

/** The features `ctx` runs; none in tool contexts (the CLI) that attach none. */
export function featuresOf(ctx: object): readonly Feature[] {
  // attachFeatures is the only writer of the seam's list, and it is given Features.
  return hooksOf(ctx) as readonly Feature[]
}

/** The features of `ctx` that declare `hook`, in list order (worked out once per list). */
export function featuresWith<K extends keyof Feature>(ctx: object, hook: K): readonly (Feature & Required<Pick<Feature, K>>)[] {
  return membersWith(featuresOf(ctx), hook)
}
