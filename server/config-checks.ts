import type { GatehouseConfig } from './config/schema.js'
import type { AuthContext } from './core/context.js'
import type { ConfigIssue } from './feature.js'
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
