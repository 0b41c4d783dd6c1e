/**
 * Secondary storage on a real Redis (tests/helpers/engines.ts): better-auth's semantics (get, set
 * with TTL, delete, getAndDelete, increment) and the shared, race-safe rate-limit store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SecondaryStorageRateLimitStore } from '../../server/core/secondary-rate-limit.js'
import { redisSecondaryStorage, type SecondaryStorage } from '../../server/secondary-storage/redis.js'
import { type RedisServer, redisUnavailable, startRedis, warnSkipped } from '../helpers/engines.js'

const unavailable = redisUnavailable()
warnSkipped('tests/db/redis.test.ts (Redis secondary storage)', unavailable)

type Storage = Awaited<ReturnType<typeof redisSecondaryStorage>>

describe.skipIf(unavailable)('Redis secondary storage', () => {
  let redis: RedisServer
  let a: Storage
  let b: Storage

  beforeAll(async () => {
    redis = await startRedis()
    a = await redisSecondaryStorage(redis.url)
    b = await redisSecondaryStorage(redis.url)
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await redis?.stop()
  })

  it('get / set / delete, with keys under the gatehouse: prefix', async () => {
    expect(await a.get('k1')).toBeNull()
    await a.set('k1', 'v1')
    expect(await b.get('k1')).toBe('v1')
    expect(await a.client.ttl('k1')).toBe(-1)
    const raw = await a.client.call('EXISTS', 'gatehouse:k1')
    // keyPrefix also applies to call(): look the real key up with the prefix-free client API.
    expect(raw).toBe(0)
    expect(await a.client.keys('*')).toContain('gatehouse:k1')
    await b.delete('k1')
    expect(await a.get('k1')).toBeNull()
    await a.delete('absent')
  })

  it('set with a TTL in seconds expires the key then; without one it stays', async () => {
    await a.set('ttl', 'x', 30)
    const ttl = await a.client.ttl('ttl')
    expect(ttl).toBeGreaterThan(25)
    expect(ttl).toBeLessThanOrEqual(30)
    await a.set('ttl', 'y', 0)
    expect(await a.client.ttl('ttl')).toBe(-1)
    expect(await a.get('ttl')).toBe('y')
  })

  it('getAndDelete: of many concurrent callers on two connections, exactly one gets the value', async () => {
    await a.set('once', 'token')
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).getAndDelete('once')))
    expect(results.filter((r) => r === 'token')).toHaveLength(1)
    expect(results.filter((r) => r === null)).toHaveLength(19)
    expect(await a.get('once')).toBeNull()
  })

  it('increment: atomic across connections; the TTL is set on creation only, never extended', async () => {
    const values = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).increment('counter', 10)))
    expect([...values].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    const ttl = await a.client.ttl('counter')
    expect(ttl).toBeGreaterThan(5)
    expect(ttl).toBeLessThanOrEqual(10)
    await a.client.expire('counter', 1000)
    expect(await b.increment('counter', 10)).toBe(51)
    expect(await a.client.ttl('counter')).toBeGreaterThan(990)
  })
})

describe.skipIf(unavailable)('rate limit on secondary storage (rateLimit.storage secondary-storage)', () => {
  let redis: RedisServer
  const storages: SecondaryStorage[] = []
  let one: SecondaryStorageRateLimitStore
  let two: SecondaryStorageRateLimitStore

  beforeAll(async () => {
    redis = await startRedis()
    const [x, y] = await Promise.all([redisSecondaryStorage(redis.url), redisSecondaryStorage(redis.url)])
    storages.push(x, y)
    one = new SecondaryStorageRateLimitStore(x)
    two = new SecondaryStorageRateLimitStore(y)
  })
  afterAll(async () => {
    for (const s of storages) await s.close()
    await redis?.stop()
  })

  const rule = { window: 10, max: 3 }
  const t0 = Date.UTC(2026, 0, 1, 12)

  it('3 per 10 s from one client across two instances; refusal says when to retry; the first refusal is marked once', async () => {
    expect(await one.consume('ip|/sign-in/email', rule, t0)).toEqual({ allowed: true })
    expect(await two.consume('ip|/sign-in/email', rule, t0 + 1000)).toEqual({ allowed: true })
    expect(await one.consume('ip|/sign-in/email', rule, t0 + 2000)).toEqual({ allowed: true })
    expect(await two.consume('ip|/sign-in/email', rule, t0 + 2500)).toEqual({ allowed: false, retryAfterSeconds: 10, firstRefusal: true })
    expect(await one.consume('ip|/sign-in/email', rule, t0 + 9000)).toEqual({ allowed: false, retryAfterSeconds: 3, firstRefusal: false })
    expect(await one.get('ip|/sign-in/email')).toEqual({ count: 3, lastRequest: t0 + 2000 })
    // A gap longer than the window restarts the count.
    expect(await two.consume('ip|/sign-in/email', rule, t0 + 12_001)).toEqual({ allowed: true })
    expect(await one.get('ip|/sign-in/email')).toEqual({ count: 1, lastRequest: t0 + 12_001 })
  })

  it('exact under parallel load from two instances: 40 concurrent requests, 3 admitted', async () => {
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? one : two).consume('race', rule, t0)))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3)
    expect(decisions.filter((d) => !d.allowed && d.firstRefusal)).toHaveLength(1)
  })

  it('release takes back one counted request (an LDAP bind that succeeded), never below zero', async () => {
    for (let i = 0; i < 3; i++) expect(await one.consume('bind', rule, t0)).toEqual({ allowed: true })
    await two.release('bind')
    expect(await one.get('bind')).toEqual({ count: 2, lastRequest: t0 })
    expect(await two.consume('bind', rule, t0 + 1000)).toEqual({ allowed: true })
    expect(await one.consume('bind', rule, t0 + 1000)).toMatchObject({ allowed: false })
    await one.set('none', { count: 0, lastRequest: t0 })
    await one.release('none')
    await one.release('missing')
    expect(await two.get('none')).toEqual({ count: 0, lastRequest: t0 })
    expect(await two.get('missing')).toBeUndefined()
  })

  it("set then get round-trips a record (the other stores' interface)", async () => {
    await one.set('manual', { count: 7, lastRequest: t0 })
    expect(await two.get('manual')).toEqual({ count: 7, lastRequest: t0 })
    expect(await two.get('nobody')).toBeUndefined()
  })
})
