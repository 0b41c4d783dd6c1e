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

/** What fetching a discovery document gave: the document, or why there is none. */
export type DiscoveryProbe =
  | { doc: DiscoveryDocument }
  | { problem: 'unreachable'; reason: string }
  | { problem: 'refused'; reason: string }
  | { problem: 'invalid'; reason: string }

/** Fetches a discovery document once (no cache), saying why when there is none. */
export async function probeDiscovery(
  url: string,
  headers?: Record<string, string>,
  timeoutMs = DISCOVERY_TIMEOUT_MS,
): Promise<DiscoveryProbe> {
  let response: Response
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', 'user-agent': 'Gatehouse', ...headers },
      // With discoveryHeaders, better-auth follows redirects within the origin only; here: none then.
      redirect: headers ? 'error' : 'follow',
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message)
    return { problem: 'unreachable', reason }
  }
  if (!response.ok) return { problem: 'refused', reason: `HTTP ${response.status}` }
  let body: unknown
  try {
    body = await response.json()
  } catch {
    return { problem: 'invalid', reason: 'not JSON' }
  }
  const parsed = discoveryDocument.safeParse(body)
  return parsed.success ? { doc: parsed.data } : { problem: 'invalid', reason: parsed.error.issues[0]?.path.join('.') ?? 'unreadable' }
}

async function fetchDiscovery(url: string, headers: Record<string, string> | undefined): Promise<DiscoveryDocument | null> {
  const probe = await probeDiscovery(url, headers)
  return 'doc' in probe ? probe.doc : null
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
