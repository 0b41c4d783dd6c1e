import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'

/** A request waits on discovery at most this long (better-auth 1.7: 10 s). */
export const DISCOVERY_TIMEOUT_MS = 10_000
/** A fetched discovery document is kept this long, then fetched again on next use. */
export const DISCOVERY_CACHE_MS = 3_600_000

/** The parts of an OpenID Provider / RFC 8414 metadata document the sign-in uses. */
const discoveryDocument = z.looseObject({
  issuer: z.url().optional(),
  authorization_endpoint: z.url().optional(),
  token_endpoint: z.url().optional(),
  userinfo_endpoint: z.url().optional(),
  jwks_uri: z.string().optional(),
  id_token_signing_alg_values_supported: z.array(z.string()).optional(),
})
export type DiscoveryDocument = z.output<typeof discoveryDocument>

interface Entry {
  at: number
  doc: Promise<DiscoveryDocument | null>
}

const caches = new WeakMap<AuthContext, Map<string, Entry>>()

async function fetchDiscovery(url: string, headers: Record<string, string> | undefined): Promise<DiscoveryDocument | null> {
  try {
    const response = await fetch(url, {
      headers: { accept: 'application/json', 'user-agent': 'Gatehouse', ...headers },
      // With discoveryHeaders, better-auth follows redirects within the origin only; here: none then.
      redirect: headers ? 'error' : 'follow',
      signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
    })
    if (!response.ok) return null
    const parsed = discoveryDocument.safeParse(await response.json())
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}

/**
 * The provider's discovery document, fetched on first use and kept an hour; null when it cannot
 * be fetched or read (the provider is then unavailable, and asked again on the next request, as
 * better-auth 1.7 retries a provider whose discovery failed).
 */
export async function discover(ctx: AuthContext, url: string, headers?: Record<string, string>): Promise<DiscoveryDocument | null> {
  let cache = caches.get(ctx)
  if (!cache) {
    cache = new Map()
    caches.set(ctx, cache)
  }
  const key = `${url}\n${JSON.stringify(headers ?? {})}`
  const now = ctx.clock.now()
  const hit = cache.get(key)
  if (hit && now - hit.at < DISCOVERY_CACHE_MS) return hit.doc
  const entry: Entry = { at: now, doc: fetchDiscovery(url, headers) }
  cache.set(key, entry)
  const doc = await entry.doc
  if (!doc && cache.get(key) === entry) cache.delete(key)
  return doc
}
