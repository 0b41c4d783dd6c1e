import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import type { AuthContext } from '../../core/context.js'

/** SPEC §9 Key-set fetch: timeout 5 s, cooldown 30 s, cache 10 min. */
export const KEY_SET_TIMEOUT_MS = 5_000
export const KEY_SET_COOLDOWN_MS = 30_000
export const KEY_SET_CACHE_MS = 600_000

export class KeySetUnavailable extends Error {
  constructor(url: string, cause: unknown) {
    super(`key set ${url} could not be fetched`, { cause })
    this.name = 'KeySetUnavailable'
  }
}

interface Entry {
  keys: JSONWebKeySet | null
  getKey: JWTVerifyGetKey | null
  fetchedAt: number
  lastAttempt: number
  pending: Promise<void> | null
}

/**
 * Remote key sets (Apple, Facebook, Google) cached per URL. Time comes from the injected clock,
 * so the 10-minute cache and the 30-second cooldown are testable; the 5-second timeout is a real
 * network timeout whose signal tests can replace (`timeoutSignal`). A token whose `kid` is not in the cached set triggers a refetch, at most once
 * per cooldown; jose selects and imports the key.
 */
export class RemoteKeySets {
  private readonly entries = new Map<string, Entry>()
  /**
   * The abort signal bounding one key-set fetch (default: a real `KEY_SET_TIMEOUT_MS` timer).
   * Replaceable so tests can fire the timeout themselves instead of waiting for it.
   */
  timeoutSignal: (ms: number) => AbortSignal = (ms) => AbortSignal.timeout(ms)

  constructor(
    private readonly ctx: AuthContext,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  private async load(url: string, entry: Entry): Promise<void> {
    entry.lastAttempt = this.ctx.clock.now()
    try {
      const response = await this.fetchImpl(url, {
        headers: { accept: 'application/json' },
        signal: this.timeoutSignal(KEY_SET_TIMEOUT_MS),
      })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const body = (await response.json()) as JSONWebKeySet
      if (!body || !Array.isArray(body.keys)) throw new Error('not a JWK set')
      entry.keys = body
      entry.getKey = createLocalJWKSet(body)
      entry.fetchedAt = this.ctx.clock.now()
    } catch (error) {
      throw new KeySetUnavailable(url, error)
    }
  }

  private async refresh(url: string, entry: Entry): Promise<void> {
    if (!entry.pending) {
      entry.pending = this.load(url, entry).finally(() => {
        entry.pending = null
      })
    }
    await entry.pending
  }

  /** A jose key resolver for tokens signed with keys from `url`. */
  resolver(url: string): JWTVerifyGetKey {
    return async (header, token) => {
      let entry = this.entries.get(url)
      if (!entry) {
        entry = { keys: null, getKey: null, fetchedAt: 0, lastAttempt: 0, pending: null }
        this.entries.set(url, entry)
      }
      const now = this.ctx.clock.now()
      const stale = !entry.getKey || now - entry.fetchedAt >= KEY_SET_CACHE_MS
      const coolingDown = entry.lastAttempt !== 0 && now - entry.lastAttempt < KEY_SET_COOLDOWN_MS
      if (stale && !(coolingDown && entry.getKey)) {
        if (!entry.getKey && coolingDown) throw new KeySetUnavailable(url, new Error('cooling down after a failed fetch'))
        await this.refresh(url, entry)
      } else if (header.kid && !entry.keys?.keys.some((k) => k.kid === header.kid) && !coolingDown) {
        await this.refresh(url, entry)
      }
      if (!entry.getKey) throw new KeySetUnavailable(url, new Error('no key set'))
      return entry.getKey(header, token)
    }
  }
}

const perContext = new WeakMap<AuthContext, RemoteKeySets>()

export function keySetsFor(ctx: AuthContext): RemoteKeySets {
  let sets = perContext.get(ctx)
  if (!sets) {
    sets = new RemoteKeySets(ctx)
    perContext.set(ctx, sets)
  }
  return sets
}
