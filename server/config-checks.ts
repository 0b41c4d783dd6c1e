import type { GatehouseConfig } from './config/schema.js'
import type { AuthContext } from './core/context.js'
import type { BoundListeners, ConfigIssue, ListenerState } from './feature.js'
import { featuresWith } from './features-of.js'
import { cookieDomainIssue } from './http/cookies.js'

/**
 * What a configuration gets wrong about this server that its schema cannot see: the base URL
 * outside the cookie domain (server/http/cookies.ts), and each feature's `configProblems` about
 * the stored data (a role named like an organization). Asked before the listener opens (gatehouse.ts:
 * the first issue is a ConfigError) and before the panel saves a change (settings).
 */
export async function configProblems(ctx: AuthContext, config: GatehouseConfig, baseURL = ctx.baseURL): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = []
  const cookie = cookieDomainIssue(config, baseURL)
  if (cookie) issues.push(cookie)
  for (const feature of featuresWith(ctx, 'configProblems')) issues.push(...(await feature.configProblems(ctx, config)))
  return issues
}

/**
 * Binds the listener addresses `next` asks for (LDAP, LDAPS, metrics) before the panel stores it:
 * rejects with the first ListenerRefusal (what was bound before it is released), else resolves
 * with what to release should the save not happen. The config change that follows adopts them.
 */
export async function bindListeners(ctx: AuthContext, next: GatehouseConfig): Promise<BoundListeners> {
  const bound: BoundListeners[] = []
  const release = async () => {
    await Promise.all(bound.map((b) => b.release()))
  }
  try {
    for (const feature of featuresWith(ctx, 'listeners')) {
      const held = await feature.bindListeners?.(ctx, next)
      if (held) bound.push(held)
    }
  } catch (error) {
    await release()
    throw error
  }
  return { release }
}

/** Every listener besides the HTTP one, with its state: the one answer of the Overview, the LDAP view and Metrics. */
export function listenerStates(ctx: AuthContext): ListenerState[] {
  return featuresWith(ctx, 'listeners').flatMap((feature) => feature.listeners(ctx))
}
