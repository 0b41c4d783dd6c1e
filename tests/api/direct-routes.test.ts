/**
 * Direct routes (server/http/app.ts): GET /get-session asked for exactly, without a query string,
 * is answered from node:http ahead of h3's router, with the same runner; so is a mount's direct
 * POST (the OIDC token endpoint, Feature.mount.directPosts), at the end of this file. Here every kind of answer
 * get-session gives is asked both ways, the direct target and the same target with an empty query
 * string (`/get-session?`, routed by h3, the same query), on the same state and the same frozen
 * clock: status line, every header (but the date) in order, and body must be identical. An h3
 * middleware counts what h3 routed, so each case also proves which path answered.
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../server/features/oidc-provider/clients.js'
import { HttpClient, signUp } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

interface RawAnswer {
  statusLine: string
  headers: string[]
  body: string
}

/** A GET with the request target sent exactly as given (a URL would drop an empty `?`). */
function get(url: string, headers: Record<string, string>): Promise<RawAnswer> {
  return send('GET', url, headers)
}

function send(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const parsed = new URL(url)
  const target = url.slice(parsed.origin.length)
  return new Promise((resolve, reject) => {
    const req = request({ method, host: parsed.hostname, port: parsed.port, path: target, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const raw = res.rawHeaders
        const kept: string[] = []
        for (let i = 0; i < raw.length; i += 2) {
          if (raw[i]?.toLowerCase() === 'date') continue
          // Each request gets its own id (issue 32): compared by position and shape only.
          if (raw[i] === 'x-request-id' && /^[A-Za-z0-9_-]+-[0-9a-z]+$/.test(raw[i + 1] ?? '')) kept.push('x-request-id: …')
          else kept.push(`${raw[i]}: ${raw[i + 1]}`)
        }
        resolve({
          statusLine: `${res.statusCode} ${JSON.stringify(res.statusMessage)}`,
          headers: kept,
          body: Buffer.concat(chunks).toString('utf8'),
        })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

let server: TestServer
let routed = 0

/** The same request both ways; returns the direct answer after checking the routed one equals it. */
async function bothWays(headers: Record<string, string>, on: TestServer = server): Promise<RawAnswer> {
  const before = routed
  const direct = await get(`${on.base}/get-session`, headers)
  expect(routed, 'the exact target is answered without h3').toBe(before)
  const viaRouter = await get(`${on.base}/get-session?`, headers)
  expect(routed, 'a target with a query string goes through h3').toBe(before + 1)
  expect(direct).toEqual(viaRouter)
  return direct
}

function countRouted(on: TestServer): void {
  on.gatehouse.app.use((_event, next) => {
    routed++
    return next()
  })
}

beforeAll(async () => {
  server = await startTestServer()
  countRouted(server)
})
afterAll(() => server.close())

describe('GET /get-session answered directly and through the router', () => {
  it('answers a signed-in session (a cache miss, then a hit) the same way', async () => {
    const { client } = await signUp(server.base)
    const cookie = client.jar.header() as string
    const first = await bothWays({ cookie })
    expect(first.statusLine).toBe('200 ""')
    expect(first.headers).toEqual([
      'cache-control: no-store',
      'content-type: application/json',
      'x-request-id: …',
      expect.stringMatching(/^content-length: \d+$/),
      'Connection: keep-alive',
      'Keep-Alive: timeout=5',
    ])
    expect(JSON.parse(first.body).session.token).toMatch(/^[A-Za-z0-9]{32}$/)
    await bothWays({ cookie })
  })

  it('answers no cookie, a forged cookie and an unknown token with null', async () => {
    expect((await bothWays({})).body).toBe('null')
    expect((await bothWays({ cookie: 'better-auth.session_token=abc.def' })).body).toBe('null')
    const forged = `better-auth.session_token=${'A'.repeat(32)}.${'B'.repeat(43)}=`
    expect((await bothWays({ cookie: forged })).body).toBe('null')
  })

  it('clears the cookies of an expired session, and re-sets them when a refresh is due', async () => {
    const clock = server.clock
    const expiring = [await signUp(server.base), await signUp(server.base)]
    const refreshing = [await signUp(server.base), await signUp(server.base)]
    clock.advanceSeconds(2 * 86_400) // past updateAge (1 day): a refresh is due
    // Two sessions of two users (a refresh changes the session): equal but for their own values.
    const [r1, r2] = refreshing.map(({ client }) => client.jar.header() as string)
    const before = routed
    const refreshed = [
      await get(`${server.base}/get-session`, { cookie: r1 as string }),
      await get(`${server.base}/get-session?`, { cookie: r2 as string }),
    ]
    expect(routed).toBe(before + 1)
    const masked = refreshed.map((answer) => ({
      statusLine: answer.statusLine,
      headers: answer.headers.map((h) =>
        h
          .replace(/=[^;]*;/, '=…;')
          .replace(/^content-length: \d+$/, 'content-length: …')
          .replace(/^set-auth-token: .*$/, 'set-auth-token: …'),
      ),
      body: Object.keys(JSON.parse(answer.body).session),
    }))
    expect(masked[0]).toEqual(masked[1])
    expect(masked[0]?.headers.filter((h) => h.startsWith('set-cookie: better-auth.session_token=…; Max-Age=604800;'))).toHaveLength(1)
    clock.advanceSeconds(8 * 86_400) // past expiresIn (7 days)
    const [a, b] = expiring.map(({ client }) => client.jar.header() as string)
    const direct = await get(`${server.base}/get-session`, { cookie: a as string })
    const viaRouter = await get(`${server.base}/get-session?`, { cookie: b as string })
    expect(routed).toBe(before + 2)
    expect(direct).toEqual(viaRouter)
    expect(direct.body).toBe('null')
    expect(direct.headers.filter((h) => /^set-cookie: better-auth\.session_token=; Max-Age=0/i.test(h))).toHaveLength(1)
  })
})

describe('GET /get-session with the cookie cache, the rate limit and a disabled path', () => {
  let tuned: TestServer
  beforeAll(async () => {
    tuned = await startTestServer({
      config: {
        session: { cookieCache: { enabled: true, maxAge: 300 } },
        rateLimit: { enabled: true, customRules: { '/get-session': { window: 60, max: 6 } } },
      },
    })
    countRouted(tuned)
  })
  afterAll(() => tuned.close())

  it('sets the cookie cache, answers from it as JSON, 404s when disabled, and refuses past the limit with 429', async () => {
    const { client } = await signUp(tuned.base)
    const tokenOnly = (client.jar.header() as string)
      .split('; ')
      .filter((c) => c.startsWith('better-auth.session_token='))
      .join('; ')
    // From the database: the answer sets the session_data cookie.
    const fresh = await bothWays({ cookie: tokenOnly }, tuned)
    const dataCookie = fresh.headers.find((h) => h.startsWith('set-cookie: better-auth.session_data='))
    expect(dataCookie).toBeDefined()
    // From the cookie cache: an object answered as JSON with h3's content type.
    const cached = await bothWays({ cookie: `${tokenOnly}; ${dataCookie?.slice('set-cookie: '.length).split(';')[0]}` }, tuned)
    expect(cached.headers).toContain('content-type: application/json;charset=UTF-8')
    expect(JSON.parse(cached.body).user.email).toBe(JSON.parse(fresh.body).user.email)
    // Switched off: the JSON 404 either way.
    await tuned.gatehouse.config.update({ disabledPaths: ['/get-session'] })
    try {
      const disabled = await bothWays({ cookie: tokenOnly }, tuned)
      expect(disabled.statusLine).toBe('404 ""')
      expect(JSON.parse(disabled.body)).toMatchObject({ code: 'NOT_FOUND' })
    } finally {
      await tuned.gatehouse.config.update({ disabledPaths: null })
    }
    // Six per minute from this client, counted once per request whichever way it came.
    const refused = await get(`${tuned.base}/get-session`, { cookie: tokenOnly })
    const refusedRouted = await get(`${tuned.base}/get-session?`, { cookie: tokenOnly })
    expect(refused.statusLine).toBe('429 ""')
    expect(refused).toEqual(refusedRouted)
    expect(JSON.parse(refused.body)).toEqual({ code: 'TOO_MANY_REQUESTS', message: 'Too many requests. Please try again later.' })
    expect(refused.headers).toEqual(
      expect.arrayContaining([expect.stringMatching(/^retry-after: \d+$/), expect.stringMatching(/^x-retry-after: \d+$/)]),
    )
  })

  it('lets a query, another method and a trailing slash go through the router as before', async () => {
    const client = new HttpClient(server.base)
    const before = routed
    expect((await client.get('/get-session?disableRefresh=true')).status).toBeLessThan(500)
    expect((await client.post('/get-session', {})).status).toBe(405)
    expect((await client.get('/get-session/')).status).toBeLessThan(500)
    expect(routed).toBe(before + 3)
  })
})

describe('POST /oauth2/token: the mount answered directly and through the router', () => {
  let oidcServer: TestServer
  let basic: string
  let clientId: string
  let publicClientId: string
  beforeAll(async () => {
    oidcServer = await startTestServer({
      config: {
        oidcProvider: { enabled: true },
        rateLimit: { enabled: true, customRules: { '/oauth2/token': { window: 60, max: 9 } } },
      },
    })
    countRouted(oidcServer)
    const ctx = oidcServer.gatehouse.ctx
    const confidential = await createClient(ctx, { name: 'Direct RP', redirectUris: ['http://rp.example.test/cb'] }, { via: 'cli' })
    clientId = confidential.client.clientId
    basic = `Basic ${Buffer.from(`${clientId}:${confidential.clientSecret}`).toString('base64')}`
    const publicOne = await createClient(
      ctx,
      { name: 'Public RP', redirectUris: ['http://rp.example.test/cb'], public: true },
      { via: 'cli' },
    )
    publicClientId = publicOne.client.clientId
  })
  afterAll(() => oidcServer.close())

  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  /** Token values differ per answer; everything else must not. */
  const masked = (answer: RawAnswer) => ({
    ...answer,
    headers: answer.headers.map((h) => h.replace(/^content-length: \d+$/, 'content-length: …')),
    body: answer.body.replace(/"access_token":"[^"]+"/, '"access_token":"…"'),
  })
  async function tokenBothWays(headers: Record<string, string>, body: string): Promise<RawAnswer> {
    const before = routed
    const direct = await send('POST', `${oidcServer.base}/oauth2/token`, headers, body)
    expect(routed, 'the exact target is answered without h3').toBe(before)
    const viaRouter = await send('POST', `${oidcServer.base}/oauth2/token?`, headers, body)
    expect(routed, 'a target with a query string goes through h3').toBe(before + 1)
    expect(masked(direct)).toEqual(masked(viaRouter))
    return direct
  }

  it('answers a client-credentials grant (fast path) and refusals (oidc-provider) alike, with a request id', async () => {
    const granted = await tokenBothWays({ ...form, authorization: basic }, 'grant_type=client_credentials')
    expect(granted.statusLine).toBe('200 "OK"')
    expect(JSON.parse(granted.body)).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number) })
    expect(granted.headers).toContain('x-request-id: …')
    // A wrong secret and an unknown grant type: handed over to oidc-provider, which refuses.
    const wrong = `Basic ${Buffer.from(`${clientId}:not-the-secret`).toString('base64')}`
    const refused = await tokenBothWays({ ...form, authorization: wrong }, 'grant_type=client_credentials')
    expect(refused.statusLine).toMatch(/^401 /)
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_client' })
    const unsupported = await tokenBothWays({ ...form }, `grant_type=password&client_id=${publicClientId}`)
    expect(JSON.parse(unsupported.body)).toMatchObject({
      error: expect.stringMatching(/^(unsupported_grant_type|unauthorized_client|invalid_request)$/),
    })
    expect(unsupported.headers).toContain('x-request-id: …')
  })

  it('counts against the rate limit either way, 404s when disabled, and leaves the path to h3 when the provider is off', async () => {
    oidcServer.clock.advanceSeconds(61) // a fresh rate-limit window
    const ask = (query: '' | '?') =>
      send('POST', `${oidcServer.base}/oauth2/token${query}`, { ...form, authorization: basic }, 'grant_type=client_credentials')
    // Nine per minute from this client, whichever way each came.
    for (let i = 0; i < 9; i++) expect((await ask(i % 2 ? '?' : '')).statusLine).toBe('200 "OK"')
    const refused = await ask('')
    const refusedRouted = await ask('?')
    expect(refused.statusLine).toBe('429 ""')
    expect(masked(refused)).toEqual(masked(refusedRouted))
    expect(JSON.parse(refused.body)).toEqual({ code: 'TOO_MANY_REQUESTS', message: 'Too many requests. Please try again later.' })
    expect(refused.headers).toEqual(expect.arrayContaining([expect.stringMatching(/^retry-after: \d+$/)]))
    oidcServer.clock.advanceSeconds(61)
    // A disabled path: the JSON 404 either way.
    await oidcServer.gatehouse.config.update({ disabledPaths: ['/oauth2/token'] })
    try {
      const disabled = await tokenBothWays({ ...form, authorization: basic }, 'grant_type=client_credentials')
      expect(disabled.statusLine).toBe('404 ""')
      expect(JSON.parse(disabled.body)).toMatchObject({ code: 'NOT_FOUND' })
    } finally {
      await oidcServer.gatehouse.config.update({ disabledPaths: null })
    }
    // A server whose provider is off: the exact target is not taken directly (h3 answers the 404).
    const before = routed
    const off = await send('POST', `${server.base}/oauth2/token`, { ...form, authorization: basic }, 'grant_type=client_credentials')
    expect(off.statusLine).toBe('404 ""')
    expect(JSON.parse(off.body)).toMatchObject({ code: 'NOT_FOUND' })
    expect(routed).toBe(before + 1)
  })
})
