import { eq } from 'drizzle-orm'
import type { GatehouseConfig } from '../config/schema.js'
import { rateLimit } from '../db/schema.js'
import type { AuthContext } from './context.js'

/**
 * The request rate limiter of SPEC §9: window 10 s / max 100 per client+path, 3 per 10 s on
 * the strict paths. better-auth's algorithm: a request is refused while fewer than `window`
 * seconds have passed since the last counted request and the count has reached `max`; a gap of
 * more than `window` restarts the count.
 */
export interface RateRecord {
  count: number
  lastRequest: number
}

/** Clients already refused in their current window: the first refusal is audited, the rest are not. */
const refused = new WeakMap<RateLimitStore, Map<string, number>>()

export interface RateLimitStore {
  get(key: string): RateRecord | undefined
  set(key: string, record: RateRecord): void
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly records = new Map<string, RateRecord>()
  private lastSweep = 0

  constructor(private readonly clock: () => number) {}

  get(key: string): RateRecord | undefined {
    return this.records.get(key)
  }

  set(key: string, record: RateRecord): void {
    this.records.set(key, record)
    this.sweep()
  }

  /** Forgets clients idle for over ten minutes, so memory stays bounded under address churn. */
  private sweep(): void {
    const now = this.clock()
    if (now - this.lastSweep < 60_000) return
    this.lastSweep = now
    for (const [key, record] of this.records) if (now - record.lastRequest > 600_000) this.records.delete(key)
  }
}

export class DatabaseRateLimitStore implements RateLimitStore {
  constructor(private readonly ctx: AuthContext) {}

  get(key: string): RateRecord | undefined {
    return this.ctx.db.select().from(rateLimit).where(eq(rateLimit.key, key)).get()
  }

  set(key: string, record: RateRecord): void {
    this.ctx.db
      .insert(rateLimit)
      .values({ key, ...record })
      .onConflictDoUpdate({ target: rateLimit.key, set: record })
      .run()
  }
}

export interface RateRule {
  window: number
  max: number
}

export function ruleFor(config: GatehouseConfig['rateLimit'], path: string): RateRule {
  let rule: RateRule = { window: config.window, max: config.max }
  if (config.strictPaths.some((prefix) => path.startsWith(prefix))) rule = config.strict
  for (const [pattern, custom] of Object.entries(config.customRules)) {
    const hit = pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern
    if (hit) rule = custom
  }
  return rule
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; firstRefusal: boolean }

/**
 * Counts one request. The read and the write happen in one synchronous step on one event loop,
 * so concurrent requests cannot both slip under the limit.
 */
export function consume(store: RateLimitStore, key: string, rule: RateRule, now: number): RateDecision {
  const windowMs = rule.window * 1000
  const record = store.get(key)
  if (!record) {
    store.set(key, { count: 1, lastRequest: now })
    return { allowed: true }
  }
  const elapsed = now - record.lastRequest
  if (elapsed < windowMs && record.count >= rule.max) {
    let seen = refused.get(store)
    if (!seen) {
      seen = new Map()
      refused.set(store, seen)
    }
    const firstRefusal = seen.get(key) !== record.lastRequest
    if (firstRefusal) {
      if (seen.size > 10_000) seen.clear()
      seen.set(key, record.lastRequest)
    }
    return { allowed: false, retryAfterSeconds: Math.ceil((record.lastRequest + windowMs - now) / 1000), firstRefusal }
  }
  store.set(key, { count: elapsed > windowMs ? 1 : record.count + 1, lastRequest: now })
  return { allowed: true }
}
