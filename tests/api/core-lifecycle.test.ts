import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, rawRequest, signUp, uniqueEmail } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

const DAY = 86_400

describe('session lifetime with an injected clock', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(() => server.close())

  it('refreshes the expiry once the update age has passed, and re-sets the cookie with the remaining lifetime', async () => {
    const { client } = await signUp(server.base)
    const before = await client.get<{ session: { expiresAt: string; updatedAt: string } }>('/get-session')
    expect(before.cookies).toEqual([])

    server.clock.advanceSeconds(DAY - 1)
    const early = await client.get<{ session: { expiresAt: string } }>('/get-session')
    expect(early.body.session.expiresAt).toBe(before.body.session.expiresAt)
    expect(early.cookies).toEqual([])

    server.clock.advanceSeconds(1)
    const refreshed = await client.get<{ session: { expiresAt: string; updatedAt: string } }>('/get-session')
    expect(new Date(refreshed.body.session.expiresAt).getTime()).toBe(server.clock.now() + 7 * DAY * 1000)
    expect(new Date(refreshed.body.session.updatedAt).getTime()).toBe(server.clock.now())
    const cookie = refreshed.cookies.find((c) => c.startsWith('better-auth.session_token='))
    expect(cookie).toContain(`Max-Age=${7 * DAY}`)

    const noRefresh = await client.get<{ session: { expiresAt: string } }>('/get-session?disableRefresh=true')
    expect(noRefresh.body.session.expiresAt).toBe(refreshed.body.session.expiresAt)
  })

  it('deletes an expired session and clears its cookies', async () => {
    const { client, token } = await signUp(server.base)
    server.clock.advanceSeconds(7 * DAY + 1)
    const res = await client.get('/get-session')
    expect(res.body).toBeNull()
    expect(res.cookies).toContain('better-auth.session_token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax')
    const row = server.gatehouse.database.sqlite.prepare('select count(*) as n from session where token = ?').get(token) as { n: number }
    expect(row.n).toBe(0)
  })

  it('never refreshes a rememberMe=false session, which lasts one day', async () => {
    const { email, password } = await signUp(server.base)
    const client = new HttpClient(server.base)
    const signIn = await client.post('/sign-in/email', { email, password, rememberMe: false })
    const cookie = signIn.cookies.find((c) => c.startsWith('better-auth.session_token=')) ?? ''
    expect(cookie).not.toContain('Max-Age')
    expect(signIn.cookies.some((c) => c.startsWith('better-auth.dont_remember=true.'))).toBe(true)
    server.clock.advanceSeconds(DAY - 10)
    const later = await client.get<{ session: { expiresAt: string } }>('/get-session')
    expect(later.cookies).toEqual([])
    server.clock.advanceSeconds(20)
    expect((await client.get('/get-session')).body).toBeNull()
  })

  it('answers protected endpoints with 401 once the session expired', async () => {
    const { client } = await signUp(server.base)
    server.clock.advanceSeconds(7 * DAY + 5)
    const res = await client.get('/list-sessions')
    expect(res.status).toBe(401)
  })

  it('rejects a tampered session cookie', async () => {
    const { client } = await signUp(server.base)
    const signed = client.jar.get('better-auth.session_token') as string
    const flipped = signed[31] === 'X' ? 'Y' : 'X'
    const tampered = `${signed.slice(0, 31)}${flipped}${signed.slice(32)}`
    const res = await new HttpClient(server.base).get('/get-session', { cookie: `better-auth.session_token=${tampered}` })
    expect(res.body).toBeNull()
  })
})

describe('cookie cache', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { session: { cookieCache: { enabled: true } } } })
  })
  afterAll(() => server.close())

  it('serves get-session from the signed session_data cookie for 300 s', async () => {
    const { client, user, token } = await signUp(server.base)
    const data = client.jar.get('better-auth.session_data')
    expect(data).toMatch(/^[A-Za-z0-9_-]+$/)
    // Revoke behind the cache's back: the cache still answers until it expires (better-auth's trade-off).
    server.gatehouse.database.sqlite.prepare('delete from session where token = ?').run(token)
    const cached = await client.get<{ user: { id: string } }>('/get-session')
    expect(cached.body.user.id).toBe(user.id)
    const bypass = await client.get('/get-session?disableCookieCache=true')
    expect(bypass.body).toBeNull()
  })

  it('stops trusting the cache after maxAge, and ignores a forged one', async () => {
    const { client, token } = await signUp(server.base)
    server.clock.advanceSeconds(301)
    server.gatehouse.database.sqlite.prepare('delete from session where token = ?').run(token)
    expect((await client.get('/get-session')).body).toBeNull()

    const other = await signUp(server.base)
    const forged = Buffer.from(JSON.stringify({ session: { user: { id: 'x' } }, expiresAt: server.clock.now() + 1e6, signature: 'AAAA' })).toString('base64url')
    other.client.jar.cookies.set('better-auth.session_data', forged)
    const res = await other.client.get<{ user: { id: string } }>('/get-session')
    expect(res.body.user.id).toBe(other.user.id)
    expect(res.cookies.some((c) => c.startsWith('better-auth.session_data=ey'))).toBe(true)
  })
})

describe('origin and callback URL checks', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { trustedOrigins: ['https://app.example.com', '*.trusted.test', 'myapp://'] } })
  })
  afterAll(() => server.close())

  it('refuses a cookie-carrying POST from an untrusted or missing Origin', async () => {
    const { client } = await signUp(server.base)
    const evil = await client.post('/revoke-other-sessions', undefined, { origin: 'https://evil.example' })
    expect(evil.status).toBe(403)
    expect(evil.body).toEqual({ code: 'INVALID_ORIGIN', message: 'Invalid origin' })
    const missing = await new HttpClient(server.base, { origin: null, headers: { cookie: client.jar.header() } }).post('/revoke-other-sessions')
    expect(missing.status).toBe(403)
    expect(missing.body).toEqual({ code: 'MISSING_OR_NULL_ORIGIN', message: 'Missing or null Origin' })
    const referer = await new HttpClient(server.base, { origin: null, headers: { cookie: client.jar.header(), referer: 'https://app.example.com/page' } }).post(
      '/revoke-other-sessions',
    )
    expect(referer.status).toBe(200)
    const trusted = await client.post('/revoke-other-sessions', undefined, { origin: 'https://app.example.com' })
    expect(trusted.status).toBe(200)
  })

  it('checks sign-in origins and blocks cross-site navigations even without cookies', async () => {
    const anonymous = new HttpClient(server.base, { origin: 'https://evil.example' })
    const res = await anonymous.post('/sign-in/email', { email: uniqueEmail(), password: 'password123' })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'INVALID_ORIGIN' })
    const nav = await rawRequest(`${server.base}/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
      body: new URLSearchParams({ email: uniqueEmail(), password: 'password123' }).toString(),
    })
    expect(nav.status).toBe(403)
    expect(JSON.parse(nav.text)).toMatchObject({ code: 'CROSS_SITE_NAVIGATION_LOGIN_BLOCKED' })
  })

  it('accepts trusted and safe relative callback URLs and refuses the rest', async () => {
    const { email, password } = await signUp(server.base)
    const accepted = ['/dashboard', '/a/b?x=1&y=%2F', 'https://app.example.com/welcome', 'https://x.trusted.test/cb', 'myapp://callback']
    for (const callbackURL of accepted) {
      const res = await new HttpClient(server.base).post('/sign-in/email', { email, password, callbackURL })
      expect(res.status, callbackURL).toBe(200)
    }
    const refused = [
      '//evil.example',
      '/\\evil.example',
      '/%2fevil.example',
      'javascript:alert(1)',
      'https://app.example.com@evil.example/',
      'https://evil.example/https://app.example.com',
      'https://app.example.com.evil.example',
      'http://app.example.com',
      '/a b',
    ]
    for (const callbackURL of refused) {
      const res = await new HttpClient(server.base).post('/sign-in/email', { email, password, callbackURL })
      expect(res.status, callbackURL).toBe(403)
      expect(res.body, callbackURL).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
    }
  })

  it('validates redirectTo, errorCallbackURL and newUserCallbackURL with their own codes', async () => {
    const client = new HttpClient(server.base)
    const cases = [
      ['redirectTo', 'INVALID_REDIRECT_URL', 'Invalid redirectURL'],
      ['errorCallbackURL', 'INVALID_ERROR_CALLBACK_URL', 'Invalid errorCallbackURL'],
      ['newUserCallbackURL', 'INVALID_NEW_USER_CALLBACK_URL', 'Invalid newUserCallbackURL'],
    ] as const
    for (const [field, code, message] of cases) {
      const res = await client.post('/sign-in/email', { email: uniqueEmail(), password: 'password123', [field]: 'https://evil.example' })
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ code, message })
    }
  })
})

describe('malformed input never becomes a 500', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { disabledPaths: ['/revoke-sessions'] } })
  })
  afterAll(() => server.close())

  it('answers broken bodies with 4xx and a JSON error', async () => {
    const client = new HttpClient(server.base)
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['{"email":', { 'content-type': 'application/json' }, 400, 'BAD_REQUEST'],
      ['null', { 'content-type': 'application/json' }, 400, 'VALIDATION_ERROR'],
      ['[]', { 'content-type': 'application/json' }, 400, 'VALIDATION_ERROR'],
      ['{"email":1,"password":2}', { 'content-type': 'application/json' }, 400, 'VALIDATION_ERROR'],
      ['', { 'content-type': 'application/json' }, 400, 'VALIDATION_ERROR'],
      ['<xml/>', { 'content-type': 'application/xml' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ]
    for (const [raw, headers, status, code] of cases) {
      const res = await client.request('POST', '/sign-in/email', { raw, headers })
      expect(res.status, raw).toBe(status)
      expect(res.body, raw).toMatchObject({ code })
      expect(typeof (res.body as { message: unknown }).message).toBe('string')
    }
    const broken = await client.request('POST', '/sign-in/email', { raw: '{"email":', headers: { 'content-type': 'application/json' } })
    expect(broken.body).toEqual({ code: 'BAD_REQUEST', message: 'Invalid JSON in request body' })
    const missing = await client.post('/sign-up/email', { email: uniqueEmail() })
    expect(missing.body).toEqual({ code: 'VALIDATION_ERROR', message: '[body.name] Invalid input: expected string, received undefined' })
  })

  it('refuses bodies over 1 MiB with 413', async () => {
    const res = await new HttpClient(server.base).request('POST', '/sign-in/email', {
      raw: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(413)
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' })
  })

  it('accepts form-encoded sign-in bodies', async () => {
    const { email, password } = await signUp(server.base)
    const res = await new HttpClient(server.base).request('POST', '/sign-in/email', {
      raw: new URLSearchParams({ email, password, rememberMe: 'false' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res.status).toBe(200)
    expect(res.cookies.some((c) => c.startsWith('better-auth.dont_remember='))).toBe(true)
  })

  it('answers unknown and disabled paths with 404 Not Found, a wrong method on a known path with 405', async () => {
    const client = new HttpClient(server.base)
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/revoke-sessions'],
    ] as const) {
      const res = await client.request(method, path)
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ code: 'NOT_FOUND', message: 'Not Found' })
    }
    const wrong = await client.request('GET', '/sign-in/email')
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get('allow')).toBe('POST')
    expect(wrong.body).toEqual({ code: 'METHOD_NOT_ALLOWED', message: 'Method Not Allowed' })
    const postSession = await client.request('POST', '/get-session')
    expect(postSession.status).toBe(405)
    expect(postSession.body).toEqual({
      code: 'METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED',
      message: 'POST method requires deferSessionRefresh to be enabled in session config',
    })
  })

  it('serves /ok and an /error page with the code escaped and security headers', async () => {
    const client = new HttpClient(server.base)
    expect((await client.get('/ok')).body).toEqual({ ok: true })
    const page = await client.get('/error?error=%3Cscript%3Ealert(1)%3C%2Fscript%3E')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(page.text).not.toContain('<script>')
    expect(page.text).toContain('<a href="/">Return to Application</a>')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const unknown = await client.get('/error')
    expect(unknown.text).toContain('<code>Unknown</code>')
  })
})

describe('additional user fields', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({
      config: {
        user: {
          additionalFields: {
            company: { type: 'string', required: true },
            plan: { type: 'string', defaultValue: 'free', input: false },
            age: { type: 'number' },
          },
        },
      },
    })
  })
  afterAll(() => server.close())

  it('requires, types, defaults and protects configured fields', async () => {
    const client = new HttpClient(server.base)
    const missing = await client.post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'password123' })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ code: 'COMPANY_IS_REQUIRED', message: 'company is required' })
    const protectedField = await client.post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'password123', company: 'A', plan: 'pro' })
    expect(protectedField.body).toEqual({ code: 'FIELD_NOT_ALLOWED', message: 'plan is not allowed to be set' })
    const wrongType = await client.post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'password123', company: 'A', age: 'old' })
    expect(wrongType.status).toBe(400)
    const ok = await client.post<{ user: Record<string, unknown> }>('/sign-up/email', {
      name: 'X',
      email: uniqueEmail(),
      password: 'password123',
      company: 'Acme',
      age: 42,
    })
    expect(ok.status).toBe(200)
    expect(ok.body.user).toMatchObject({ company: 'Acme', plan: 'free', age: 42 })
    const session = await client.get<{ user: Record<string, unknown> }>('/get-session')
    expect(session.body.user).toMatchObject({ company: 'Acme', plan: 'free', age: 42 })
    expect(session.body.user).not.toHaveProperty('additionalFields')
  })
})
