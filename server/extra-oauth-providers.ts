import type { AuthContext } from './core/context.js'
import type { ExtraOAuthProvider, ProviderProblem } from './core/oauth-providers.js'
import { featuresOf } from './features-of.js'

/**
 * The OAuth providers features add to the social engine at run time (Feature.oauthProviders), asked
 * of the features this context runs. Above feature.ts, since it reads the feature list: the provider
 * shape itself stays in core (core/oauth-providers.ts).
 */

/** The extra provider `id` from the first feature that offers it, or null. */
export async function resolveExtraProvider(ctx: AuthContext, id: string): Promise<ExtraOAuthProvider | null> {
  for (const feature of featuresOf(ctx)) {
    const source = feature.oauthProviders
    if (!source?.list(ctx).some((p) => p.id === id)) continue
    return source.resolve(ctx, id)
  }
  return null
}

/** Why the extra provider `id` is offered but cannot be resolved now (OAuthProviderSource.explain), or null. */
export async function explainExtraProvider(ctx: AuthContext, id: string): Promise<ProviderProblem | null> {
  for (const feature of featuresOf(ctx)) {
    const source = feature.oauthProviders
    if (source?.list(ctx).some((p) => p.id === id)) return (await source.explain?.(ctx, id)) ?? null
  }
  return null
}

/** Every extra provider offered now, by id and name. */
export const listExtraProviders = (ctx: AuthContext): { id: string; name: string }[] =>
  featuresOf(ctx).flatMap((f) => f.oauthProviders?.list(ctx) ?? [])
