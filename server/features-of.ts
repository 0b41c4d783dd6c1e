import type { AuthContext } from './core/context.js'
import { setAuditListener } from './core/audit.js'
import { setCredentialRevocationListener } from './core/credential-revocation.js'
import { setSessionEndListener } from './core/session-ends.js'
import type { Feature } from './feature.js'

/**
 * The features a server runs, per context. The composition root attaches them; core and HTTP code
 * ask here to call their hooks. The context itself does not carry them, because the `Feature` type
 * names the context's types (routes, sessions, sign-in attempts): a context that named `Feature`
 * would be an import cycle through every module that uses a context.
 */
const attached = new WeakMap<object, readonly Feature[]>()

export function attachFeatures(ctx: object, list: readonly Feature[]): void {
  attached.set(ctx, list)
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
  return attached.get(ctx) ?? none
}

const none: readonly Feature[] = []

const withHookByList = new WeakMap<readonly Feature[], Map<keyof Feature, readonly Feature[]>>()

/**
 * The features of `ctx` that declare `hook`, in list order, worked out once per list: get-session
 * asks two hooks on every request (requestSession, sessionAnswered), which one or two of some
 * thirty features declare.
 */
export function featuresWith<K extends keyof Feature>(ctx: object, hook: K): readonly (Feature & Required<Pick<Feature, K>>)[] {
  const list = featuresOf(ctx)
  let byHook = withHookByList.get(list)
  if (!byHook) {
    byHook = new Map()
    withHookByList.set(list, byHook)
  }
  let found = byHook.get(hook)
  if (!found) {
    found = list.filter((feature) => feature[hook] !== undefined)
    byHook.set(hook, found)
  }
  return found as readonly (Feature & Required<Pick<Feature, K>>)[]
}
