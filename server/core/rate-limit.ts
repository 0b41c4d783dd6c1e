import { isIP } from 'node:net'
import { and, eq, gt, sql } from 'drizzle-orm'
import type { GatehouseConfig } from '../config/schema.js'
import { rateLimit } from '../db/schema.js'
import { firstRow } from '../db/storage.js'
import { recordAudit } from './audit.js'
import type { AuthContext, RequestMeta } from './context.js'

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

/**
 * Where the counts live. `consume` reads and writes one client's record atomically: the memory
 * store synchronously (no await on the request path), the database store in one statement.
 */
export interface RateLimitStore {
  consume(key: string, rule: RateRule, now: number): RateDecision | Promise<RateDecision>
  /**
   * Takes back one request `consume` counted (never below zero): an LDAP bind that proved its
   * credentials (see limitRequest's callers), so only failed checks use up a source's allowance.
   */
  release(key: string): void | Promise<void>
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly records = new Map<string, RateRecord>()
  private lastSweep = 0

  constructor(private readonly clock: () => number) {}

  consume(key: string, rule: RateRule, now: number): RateDecision {
    const { decision, next } = decide(this, key, this.records.get(key), rule, now)
    if (next) {
      this.records.set(key, next)
      this.sweep()
    }
    return decision
  }

  release(key: string): void {
    const record = this.records.get(key)
    if (record && record.count > 0) record.count -= 1
  }

  /** Forgets clients idle for over ten minutes, so memory stays bounded under address churn. */
  private sweep(): void {
    const now = this.clock()
    if (now - this.lastSweep < 60_000) return
    this.lastSweep = now
    for (const [key, record] of this.records) if (now - record.lastRequest > 600_000) this.records.delete(key)
  }
}

/**
 * Counts in the `rateLimit` table, shared by every process on the database (several instances on
 * PostgreSQL). One statement counts a request, on both engines: an upsert whose update applies only
 * while the client is under its limit (`ON CONFLICT … DO UPDATE … WHERE`), so parallel requests on
 * any number of instances serialise on the row and can never all slip under the limit, without a
 * transaction to retry. A request it did not count was refused: the row is then read for the
 * Retry-After.
 */
export class DatabaseRateLimitStore implements RateLimitStore {
  constructor(private readonly ctx: AuthContext) {}

  async consume(key: string, rule: RateRule, now: number): Promise<RateDecision> {
    const { ctx } = this
    const windowMs = rule.window * 1000
    const elapsed = sql`${now} - ${rateLimit.lastRequest}`
    const counted = await ctx.db
      .insert(rateLimit)
      .values({ key, count: 1, lastRequest: now })
      .onConflictDoUpdate({
        target: rateLimit.key,
        // better-auth's rule (see decide): a gap longer than the window restarts the count.
        set: { count: sql`case when ${elapsed} > ${windowMs} then 1 else ${rateLimit.count} + 1 end`, lastRequest: now },
        setWhere: sql`not (${elapsed} < ${windowMs} and ${rateLimit.count} >= ${rule.max})`,
      })
      .returning({ count: rateLimit.count })
    if (counted.length > 0) return { allowed: true }
    const record = await firstRow(ctx.db.select().from(rateLimit).where(eq(rateLimit.key, key)))
    return decide(this, key, record, rule, now).decision
  }

  async release(key: string): Promise<void> {
    await this.ctx.db
      .update(rateLimit)
      .set({ count: sql`${rateLimit.count} - 1` })
      .where(and(eq(rateLimit.key, key), gt(rateLimit.count, 0)))
  }
}

export type RateLimitStorage = NonNullable<GatehouseConfig['rateLimit']['storage']>

/**
 * Where the counts live when `rateLimit.storage` is not set (issue 31 §5): on PostgreSQL the
 * instances share them, in Redis/Valkey when --redis-url is set (as better-auth defaults to its
 * secondary storage) and else in the database, so N instances never allow N times the limit; on
 * SQLite (one process) in memory.
 */
export function effectiveRateLimitStorage(
  configured: RateLimitStorage | undefined,
  deployment: { dialect: 'sqlite' | 'postgres'; secondaryStorage: boolean },
): RateLimitStorage {
  if (configured) return configured
  if (deployment.dialect !== 'postgres') return 'memory'
  return deployment.secondaryStorage ? 'secondary-storage' : 'database'
}

/**
 * The database's counters, with `fallback` (the memory store) while the database is out
 * (`isOutage`: server/core/outage.ts): a storage outage must not turn every request, `/ok`
 * included, into a 503 at the limiter, and the counts stay per instance until it is over, as
 * Redis's outage falls back.
 */
export class OutageTolerantRateLimitStore implements RateLimitStore {
  constructor(
    private readonly primary: RateLimitStore,
    private readonly fallback: RateLimitStore,
    private readonly isOutage: (error: unknown) => boolean,
  ) {}

  async consume(key: string, rule: RateRule, now: number): Promise<RateDecision> {
    try {
      return await this.primary.consume(key, rule, now)
    } catch (error) {
      if (!this.isOutage(error)) throw error
      return this.fallback.consume(key, rule, now)
    }
  }

  async release(key: string): Promise<void> {
    try {
      await this.primary.release(key)
    } catch (error) {
      if (!this.isOutage(error)) throw error
      await this.fallback.release(key)
    }
  }
}

export interface RateRule {
  window: number
  max: number
}

export function ruleFor(config: GatehouseConfig['rateLimit'], path: string, declared?: RateRule): RateRule {
  let rule: RateRule = { window: config.window, max: config.max }
  if (config.strictPaths.some((prefix) => path.startsWith(prefix))) rule = config.strict
  // A plugin's own rule for its path (declared on the route) replaces the built-in ones, as in better-auth.
  if (declared) rule = declared
  for (const [pattern, custom] of Object.entries(config.customRules)) {
    const hit = pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern
    if (hit) rule = custom
  }
  return rule
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; firstRefusal: boolean }

/**
 * Counts one request against `store` (atomically: see RateLimitStore). A memory store answers
 * synchronously.
 */
export function consume(store: RateLimitStore, key: string, rule: RateRule, now: number): RateDecision | Promise<RateDecision> {
  return store.consume(key, rule, now)
}

/**
 * One request of a source under `rule`, on every face that limits (HTTP: every path; LDAP: simple
 * binds): counted in `store`; a refusal is counted in the metrics and its first per source and
 * burst audited `security.rate-limited` (so a flood cannot turn into a flood of database writes).
 * `key` starts with the source's rateLimitIdentity.
 */
export async function limitRequest(
  ctx: AuthContext,
  store: RateLimitStore,
  key: string,
  rule: RateRule,
  meta: RequestMeta,
  detail: Record<string, unknown>,
): Promise<RateDecision> {
  const decision = await store.consume(key, rule, ctx.clock.now())
  if (!decision.allowed) {
    ctx.events.refused('rate-limit')
    if (decision.firstRefusal) await recordAudit(ctx, { type: 'security.rate-limited', outcome: 'failure', detail, meta })
  }
  return decision
}

function expandIPv6(ip: string): string[] {
  const [head = '', tail = ''] = ip.split('::')
  const h = head ? head.split(':') : []
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : []
  const missing = 8 - h.length - t.length
  return [...h, ...Array(Math.max(0, missing)).fill('0'), ...t]
}

/**
 * The rate-limit identity of an address: IPv6 clients are grouped per /64 (one subscriber), an
 * IPv4-mapped IPv6 address is its IPv4 address. Every
 * per-source count uses it: the HTTP limiter, LDAP binds and connections, the password-hash queue's
 * share per source.
 */
export function rateLimitIdentity(ip: string): string {
  if (isIP(ip) !== 6) return ip
  // An IPv4 client of a dual-stack listener (LDAP on [::]): its IPv4 address, not the /64 of every IPv4 client.
  const mapped = ip.toLowerCase().startsWith('::ffff:') ? ip.slice(7) : ''
  if (isIP(mapped) === 4) return mapped
  return `${expandIPv6(ip.toLowerCase())
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}

/** The limiter's rule on one client's record: the decision and the record to store (none when refused). */
function decide(
  store: RateLimitStore,
  key: string,
  record: RateRecord | undefined,
  rule: RateRule,
  now: number,
): { decision: RateDecision; next: RateRecord | null } {
  const windowMs = rule.window * 1000
  if (!record) return { decision: { allowed: true }, next: { count: 1, lastRequest: now } }
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
    return {
      decision: { allowed: false, retryAfterSeconds: Math.ceil((record.lastRequest + windowMs - now) / 1000), firstRefusal },
      next: null,
    }
  }
  return { decision: { allowed: true }, next: { count: elapsed > windowMs ? 1 : record.count + 1, lastRequest: now } }
}
