/**
 * The third storage of the rate limiter (SPEC §9: "memory, secondary storage or database"):
 * rateLimit.storage 'secondary-storage', counters in the Redis/Valkey of --redis-url, shared by
 * every instance, so "3 sign-ins per 10 s from one client" holds across all of them.
 *
 * Race-safe: each request is counted by one atomic Lua script (read, decide, write), so parallel
 * requests on several instances can never all slip under the limit. The algorithm is the one of
 * auth/rate-limit.ts (better-auth's): refused while fewer than `window` seconds have passed since
 * the last counted request and the count has reached `max`; a gap of more than `window` restarts
 * the count. Time comes from the caller's clock (the injected ctx.clock), not Redis's: Redis's own
 * expiry only collects keys idle for longer than any window (so a TestClock works too).
 */
import type { SecondaryStorage } from '../secondary-storage/redis.js'

export interface RateRecord {
  count: number
  lastRequest: number
}

export interface RateRule {
  window: number
  max: number
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; firstRefusal: boolean }

/**
 * KEYS[1] the counter (a hash: c = count, t = last counted request in ms, r = last refusal's
 * window marker). ARGV: now (ms), window (ms), max, idle expiry (ms).
 * Returns {1} allowed, or {0, retryAfterMs, firstRefusal(0|1)}.
 */
const CONSUME = `local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local c = tonumber(redis.call('HGET', KEYS[1], 'c'))
local t = tonumber(redis.call('HGET', KEYS[1], 't'))
if c == nil or t == nil then
  redis.call('HSET', KEYS[1], 'c', 1, 't', now)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {1}
end
local elapsed = now - t
if elapsed < window and c >= max then
  local first = 0
  if redis.call('HGET', KEYS[1], 'r') ~= tostring(t) then
    redis.call('HSET', KEYS[1], 'r', tostring(t))
    first = 1
  end
  return {0, t + window - now, first}
end
if elapsed > window then c = 1 else c = c + 1 end
redis.call('HSET', KEYS[1], 'c', c, 't', now)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1}`

/** KEYS[1] the counter: one counted request taken back (never below zero; a missing counter stays missing). */
const RELEASE = `local c = tonumber(redis.call('HGET', KEYS[1], 'c'))
if c ~= nil and c > 0 then redis.call('HSET', KEYS[1], 'c', c - 1) end
return 1`

export class SecondaryStorageRateLimitStore {
  private readonly client: { eval(script: string, keys: number, ...args: (string | number)[]): Promise<unknown> }

  constructor(
    private readonly storage: SecondaryStorage & { client: unknown },
    /** Collects counters idle this long (ms); longer than any window. */
    private readonly idleExpiryMs = 3_600_000,
  ) {
    this.client = storage.client as SecondaryStorageRateLimitStore['client']
  }

  /** Counts one request atomically across every instance sharing the Redis. */
  async consume(key: string, rule: RateRule, now: number): Promise<RateDecision> {
    const windowMs = rule.window * 1000
    const result = (await this.client.eval(
      CONSUME,
      1,
      `rl:${key}`,
      now,
      windowMs,
      rule.max,
      Math.max(this.idleExpiryMs, windowMs * 2),
    )) as number[]
    if (result[0] === 1) return { allowed: true }
    return { allowed: false, retryAfterSeconds: Math.ceil(Number(result[1]) / 1000), firstRefusal: result[2] === 1 }
  }

  /** Takes back one counted request (rate-limit.ts RateLimitStore.release), atomically. */
  async release(key: string): Promise<void> {
    await this.client.eval(RELEASE, 1, `rl:${key}`)
  }

  /** The stored record (what the other stores' get returns). */
  async get(key: string): Promise<RateRecord | undefined> {
    const client = this.storage.client as { hmget(key: string, ...fields: string[]): Promise<(string | null)[]> }
    const [c, t] = await client.hmget(`rl:${key}`, 'c', 't')
    return c == null || t == null ? undefined : { count: Number(c), lastRequest: Number(t) }
  }

  /** Overwrites the record (the other stores' set; `consume` is the race-safe path). */
  async set(key: string, record: RateRecord): Promise<void> {
    const client = this.storage.client as {
      hset(key: string, ...values: (string | number)[]): Promise<unknown>
      pexpire(key: string, ms: number): Promise<unknown>
    }
    await client.hset(`rl:${key}`, 'c', record.count, 't', record.lastRequest)
    await client.pexpire(`rl:${key}`, this.idleExpiryMs)
  }
}
