/**
 * The database rate-limit store under parallel load: one client's 20 simultaneous sign-in attempts
 * are counted exactly (3 allowed by the strict rule, 17 refused), on SQLite and, in the postgres
 * project, on PostgreSQL, where the same statement serialises on the counter's row. And the
 * per-account lockout under 20 simultaneous wrong passwords: exactly 10 checked, the rest refused,
 * no error (on PostgreSQL the colliding serializable transactions are retried).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DatabaseRateLimitStore, MemoryRateLimitStore, type RateLimitStore } from '../../server/core/rate-limit.js'
import { HttpClient, signUp, uniqueEmail } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

describe('database rate limits under parallel requests', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { rateLimit: { enabled: true, storage: 'database' } } })
  })
  afterAll(() => server.close())

  it('20 parallel sign-ins from one client: exactly 3 pass the strict rule, 17 answer 429', async () => {
    const client = new HttpClient(server.base, { headers: { 'x-forwarded-for': '203.0.113.50' } })
    const body = { email: uniqueEmail(), password: 'wrong-password' }
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => client.post('/sign-in/email', body)))).map((r) => r.status)
    expect(statuses.filter((s) => s === 401)).toHaveLength(3)
    expect(statuses.filter((s) => s === 429)).toHaveLength(17)
    // The window restarts after 10 s without a counted request.
    server.clock.advanceSeconds(11)
    expect((await client.post('/sign-in/email', body)).status).toBe(401)
  })

  it('release (an LDAP bind that proved its credentials) takes back one counted request, never below zero: database and memory stores', async () => {
    const rule = { window: 10, max: 2 }
    const now = server.clock.now()
    const stores: Array<[string, RateLimitStore]> = [
      ['database', new DatabaseRateLimitStore(server.gatehouse.ctx)],
      ['memory', new MemoryRateLimitStore(() => now)],
    ]
    for (const [name, store] of stores) {
      const key = `198.51.100.7ldap:bind:${name}`
      await store.release(key) // nothing counted yet: nothing to take back
      expect(await store.consume(key, rule, now)).toEqual({ allowed: true })
      expect(await store.consume(key, rule, now)).toEqual({ allowed: true })
      await store.release(key)
      expect(await store.consume(key, rule, now)).toEqual({ allowed: true })
      expect(await store.consume(key, rule, now)).toMatchObject({ allowed: false, retryAfterSeconds: 10 })
      await store.release(key)
      await store.release(key)
      await store.release(key)
      // Never below zero: two requests fit again, not more.
      expect(await store.consume(key, rule, now)).toEqual({ allowed: true })
      expect(await store.consume(key, rule, now)).toEqual({ allowed: true })
      expect(await store.consume(key, rule, now)).toMatchObject({ allowed: false })
    }
  })
})

describe('account lockout under parallel wrong passwords', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(() => server.close())

  it('20 parallel wrong passwords for one account: 10 are checked (401), 10 refused (429), then the account is locked', async () => {
    const email = uniqueEmail()
    await signUp(server.base, { email, password: 'correct horse battery', name: 'Locked' })
    const client = new HttpClient(server.base)
    const statuses = (
      await Promise.all(Array.from({ length: 20 }, () => client.post('/sign-in/email', { email, password: 'wrong-password' })))
    ).map((r) => r.status)
    expect(statuses.filter((s) => s === 401)).toHaveLength(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(10)
    // Locked: even the right password is refused until the lock expires.
    expect((await client.post('/sign-in/email', { email, password: 'correct horse battery' })).status).toBe(429)
  })
})
