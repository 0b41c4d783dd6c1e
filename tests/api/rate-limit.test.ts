import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERRORS, HttpClient, uniqueEmail, statusAndBody } from '../helpers/http.js'
import { serverLog, startTestServer, type TestServer, testEngine } from '../helpers/server.js'

for (const storage of ['memory', 'database'] as const) {
  describe(`rate limiter with ${storage} storage`, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startTestServer({ config: { rateLimit: { enabled: true, storage } } })
      // An explicit "memory" on PostgreSQL counts per instance: the server says so at start (issue 31 §5).
      const warned = serverLog.takeUnexpected().map((e) => e.message)
      expect(warned).toEqual(
        storage === 'memory' && testEngine === 'postgres' ? [expect.stringMatching(/^rateLimit\.storage is "memory" on PostgreSQL/)] : [],
      )
    })
    afterAll(() => server.close())

    const from = (ip: string) => new HttpClient(server.base, { headers: { 'x-forwarded-for': ip } })

    it('allows 3 sign-in attempts per 10 s per client, then answers 429 with X-Retry-After', async () => {
      const client = from('203.0.113.7')
      const body = { email: uniqueEmail(), password: 'wrong-password' }
      for (let i = 0; i < 3; i++)
        expect(statusAndBody(await client.post('/sign-in/email', body))).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])
      const limited = await client.post('/sign-in/email', body)
      expect(limited.status).toBe(429)
      expect(limited.body).toEqual({ code: 'TOO_MANY_REQUESTS', message: 'Too many requests. Please try again later.' })
      expect(limited.headers.get('x-retry-after')).toBe('10')

      // Another client and another path are counted separately.
      expect(statusAndBody(await from('203.0.113.8').post('/sign-in/email', body))).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])
      expect((await client.get('/ok')).status).toBe(200)

      server.clock.advanceSeconds(4)
      expect((await client.post('/sign-in/email', body)).headers.get('x-retry-after')).toBe('6')
      server.clock.advanceSeconds(7)
      expect(statusAndBody(await client.post('/sign-in/email', body))).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])
    })

    it('allows 100 requests per 10 s on ordinary paths, unknown ones included', async () => {
      const client = from('198.51.100.20')
      for (let i = 0; i < 100; i++) expect(statusAndBody(await client.get(`/nope-${i}`))).toEqual([404, ERRORS.NOT_FOUND])
      expect(statusAndBody(await client.get('/nope'))).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
      expect((await client.get('/ok')).status).toBe(200)
    })

    it('groups IPv6 clients by /64', async () => {
      const body = { email: uniqueEmail(), password: 'wrong-password' }
      for (let i = 1; i <= 3; i++)
        expect(statusAndBody(await from(`2001:db8:1:2::${i}`).post('/sign-up/email', body))).toEqual([
          400,
          { code: 'VALIDATION_ERROR', message: '[body.name] Invalid input: expected string, received undefined' },
        ])
      expect(statusAndBody(await from('2001:db8:1:2:ffff::9').post('/sign-up/email', body))).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
      expect(statusAndBody(await from('2001:db8:1:3::1').post('/sign-up/email', body))).toEqual([
        400,
        { code: 'VALIDATION_ERROR', message: '[body.name] Invalid input: expected string, received undefined' },
      ])
    })
  })
}

describe('rate limit switch and live config', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { rateLimit: { enabled: true } } })
  })
  afterAll(() => server.close())

  it('applies a changed rule without restart', async () => {
    const client = new HttpClient(server.base, { headers: { 'x-forwarded-for': '192.0.2.50' } })
    server.gatehouse.config.update({ rateLimit: { customRules: { '/ok': { window: 60, max: 2 } } } })
    expect((await client.get('/ok')).status).toBe(200)
    expect((await client.get('/ok')).status).toBe(200)
    const limited = await client.get('/ok')
    expect(statusAndBody(limited)).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
    expect(limited.headers.get('x-retry-after')).toBe('60')
    server.gatehouse.config.update({ rateLimit: { customRules: { '/ok': { window: 60, max: 5 } } } })
    expect((await client.get('/ok')).status).toBe(200)
  })

  it('keeps start-up overrides (flags, environment) above edits of the stored config', async () => {
    // The server was started with rateLimit.enabled=true as an override, like `--rate-limit on`.
    server.gatehouse.config.update({ rateLimit: { enabled: false } })
    expect(server.gatehouse.config.get().rateLimit.enabled).toBe(true)
    expect(server.gatehouse.config.storedLayer()).toMatchObject({ rateLimit: { enabled: false } })
  })
})
