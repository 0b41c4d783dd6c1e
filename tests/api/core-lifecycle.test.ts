import { packageVersion } from '../../server/version.js'
import { count, desc, eq, type SQL } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HttpClient, rawRequest, signUp, uniqueEmail } from '../helpers/http.js'
import { passwordHashQueue } from '../../server/crypto/hash-queue.js'
import { auditEvent, session, user as userTable } from '../../server/db/schema.js'
import { firstRow } from '../../server/db/storage.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { openSessionData, signedCookie, TEST_SECRET } from '../helpers/signatures.js'

const DAY = 86_400

/** How many rows of a table match, read through the server's own database handle (either engine). */
const countRows = async (server: TestServer, table: typeof session | typeof userTable, where: SQL) =>
  (await firstRow(server.gatehouse.ctx.db.select({ n: count() }).from(table).where(where)))?.n

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
    expect(await countRows(server, session, eq(session.token, token))).toBe(0)
  })

  it('never refreshes a rememberMe=false session, which lasts one day', async () => {
    const { email, password } = await signUp(server.base)
    const client = new HttpClient(server.base)
    const signIn = await client.post<{ token: string }>('/sign-in/email', { email, password, rememberMe: false })
    expect(signIn.status).toBe(200)
    // Session cookies (no Max-Age), signatures recomputed with node:crypto and the test secret.
    expect(signIn.cookies).toEqual([
      `better-auth.session_token=${signedCookie(TEST_SECRET, signIn.body.token)}; Path=/; HttpOnly; SameSite=Lax`,
      `better-auth.dont_remember=${signedCookie(TEST_SECRET, 'true')}; Path=/; HttpOnly; SameSite=Lax`,
    ])
    const signedInAt = server.clock.now()
    server.clock.advanceSeconds(DAY - 10)
    const later = await client.get<{ session: { expiresAt: string } }>('/get-session')
    expect(later.status).toBe(200)
    expect(new Date(later.body.session.expiresAt).getTime()).toBe(signedInAt + DAY * 1000)
    expect(later.cookies).toEqual([])
    server.clock.advanceSeconds(20)
    expect((await client.get('/get-session')).body).toBeNull()
  })

  it('answers protected endpoints with 401 once the session expired', async () => {
    const { client } = await signUp(server.base)
    server.clock.advanceSeconds(7 * DAY + 5)
    const res = await client.get('/list-sessions')
    expect([res.status, res.body]).toEqual([401, { code: 'UNAUTHORIZED', message: 'Unauthorized' }])
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
    const data = client.jar.get('better-auth.session_data') as string
    // Opened and its HMAC checked by the test's own code (reference §2.3), not the server's.
    const opened = openSessionData(TEST_SECRET, data)
    expect(opened?.expiresAt).toBe(server.clock.now() + 300_000)
    expect(opened?.session).toMatchObject({ user: { id: user.id }, session: { token } })
    expect(openSessionData('another-secret-0123456789-abcdefgh', data)).toBeNull()
    // Revoke behind the cache's back: the cache still answers until it expires (better-auth's trade-off).
    await server.gatehouse.ctx.db.delete(session).where(eq(session.token, token))
    const cached = await client.get<{ user: { id: string } }>('/get-session')
    expect(cached.body.user.id).toBe(user.id)
    const bypass = await client.get('/get-session?disableCookieCache=true')
    expect(bypass.body).toBeNull()
  })

  it('stops trusting the cache after maxAge, and ignores a forged one', async () => {
    const { client, token } = await signUp(server.base)
    server.clock.advanceSeconds(301)
    await server.gatehouse.ctx.db.delete(session).where(eq(session.token, token))
    expect((await client.get('/get-session')).body).toBeNull()

    const other = await signUp(server.base)
    const forged = Buffer.from(
      JSON.stringify({ session: { user: { id: 'x' } }, expiresAt: server.clock.now() + 1e6, signature: 'AAAA' }),
    ).toString('base64url')
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
    const missing = await new HttpClient(server.base, { origin: null, headers: { cookie: client.jar.header() } }).post(
      '/revoke-other-sessions',
    )
    expect(missing.status).toBe(403)
    expect(missing.body).toEqual({ code: 'MISSING_OR_NULL_ORIGIN', message: 'Missing or null Origin' })
    const referer = await new HttpClient(server.base, {
      origin: null,
      headers: { cookie: client.jar.header(), referer: 'https://app.example.com/page' },
    }).post('/revoke-other-sessions')
    expect(referer.status).toBe(200)
    const trusted = await client.post('/revoke-other-sessions', undefined, { origin: 'https://app.example.com' })
    expect(trusted.status).toBe(200)
  })

  it("audits a refusal with the origin the check read: the Origin, else the Referer's origin (never its path or query)", async () => {
    const { client } = await signUp(server.base)
    const fromReferer = await new HttpClient(server.base, {
      origin: null,
      headers: { cookie: client.jar.header(), referer: 'https://evil.example/steal?token=secret-in-query' },
    }).post('/revoke-other-sessions')
    expect(fromReferer.status).toBe(403)
    expect(fromReferer.body).toEqual({ code: 'INVALID_ORIGIN', message: 'Invalid origin' })
    const fromOrigin = await client.post('/revoke-other-sessions', undefined, {
      origin: 'https://other.example',
      referer: 'https://app.example.com/page',
    })
    expect(fromOrigin.status).toBe(403)
    const refused = await server.gatehouse.ctx.db
      .select({ detail: auditEvent.detail })
      .from(auditEvent)
      .where(eq(auditEvent.type, 'security.csrf-refused'))
      .orderBy(desc(auditEvent.id))
      .limit(2)
    expect(refused.map((row) => row.detail)).toEqual([
      { path: '/revoke-other-sessions', code: 'INVALID_ORIGIN', origin: 'https://other.example' },
      { path: '/revoke-other-sessions', code: 'INVALID_ORIGIN', origin: 'https://evil.example' },
    ])
  })

  it('refuses look-alike origins: a trusted host (or the server host) as the prefix of another host', async () => {
    const { client } = await signUp(server.base)
    const own = new URL(server.base)
    const lookAlikes = [
      'https://app.example.com.evil.example',
      'https://app.example.comevil.example',
      `${own.protocol}//${own.hostname}.evil.example:${own.port}`,
      'https://x.trusted.test.evil.example',
      'https://eviltrusted.test',
    ]
    for (const origin of lookAlikes) {
      const res = await client.post('/revoke-other-sessions', undefined, { origin })
      expect([origin, res.status, res.body]).toEqual([origin, 403, { code: 'INVALID_ORIGIN', message: 'Invalid origin' }])
      const signIn = await new HttpClient(server.base, { origin }).post('/sign-in/email', { email: uniqueEmail(), password: 'password123' })
      expect([origin, signIn.status]).toEqual([origin, 403])
    }
    expect((await client.post('/revoke-other-sessions', undefined, { origin: 'https://x.trusted.test' })).status).toBe(200)
  })

  it('checks sign-in origins and blocks cross-site navigations even without cookies', async () => {
    const anonymous = new HttpClient(server.base, { origin: 'https://evil.example' })
    const res = await anonymous.post('/sign-in/email', { email: uniqueEmail(), password: 'password123' })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ code: 'INVALID_ORIGIN', message: 'Invalid origin' })
    const nav = await rawRequest(`${server.base}/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
      body: new URLSearchParams({ email: uniqueEmail(), password: 'password123' }).toString(),
    })
    expect(nav.status).toBe(403)
    expect(JSON.parse(nav.text)).toEqual({
      code: 'CROSS_SITE_NAVIGATION_LOGIN_BLOCKED',
      message: 'Cross-site navigation login blocked. This request appears to be a CSRF attack.',
    })
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
    expect(res.body).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body is larger than 1 MiB' })
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
    expect((await client.get('/ok')).body).toEqual({ ok: true, version: packageVersion() })
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
    const protectedField = await client.post('/sign-up/email', {
      name: 'X',
      email: uniqueEmail(),
      password: 'password123',
      company: 'A',
      plan: 'pro',
    })
    expect(protectedField.body).toEqual({ code: 'FIELD_NOT_ALLOWED', message: 'plan is not allowed to be set' })
    const wrongType = await client.post('/sign-up/email', {
      name: 'X',
      email: uniqueEmail(),
      password: 'password123',
      company: 'A',
      age: 'old',
    })
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

describe('the cookie cache size limit', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { session: { cookieCache: { enabled: true } } } })
  })
  afterAll(() => server.close())

  it('issues session_data up to the limit and answers 500 SESSION_DATA_TOO_LARGE beyond 4093 characters', async () => {
    const { client, user } = await signUp(server.base, { name: 'n' })
    const jsonLength = (cookie: string) => Buffer.from(cookie, 'base64url').toString('utf8').length
    const first = jsonLength(client.jar.get('better-auth.session_data') as string)
    // Every ASCII character added to the name adds one to the JSON and 4/3 to its base64url form:
    // 3069 JSON characters encode to 4092 (the longest length at or under 4093), 3070 to 4094.
    const setName = (length: number) =>
      server.gatehouse.ctx.db
        .update(userTable)
        .set({ name: 'n'.repeat(length) })
        .where(eq(userTable.id, user.id))
    await setName(1 + 3069 - first)
    const fits = await client.get<{ user: { name: string } }>('/get-session?disableCookieCache=true')
    expect(fits.status).toBe(200)
    // disableCookieCache clears the old cookie first, then issues the new one.
    const cache =
      fits.cookies
        .findLast((c) => c.startsWith('better-auth.session_data=ey'))
        ?.split(';')[0]
        ?.split('=')[1] ?? 'missing'
    expect(cache.length).toBe(4092)
    expect(openSessionData(TEST_SECRET, cache)?.session).toMatchObject({ user: { name: 'n'.repeat(1 + 3069 - first) } })

    await setName(1 + 3070 - first)
    const tooLarge = await client.get('/get-session?disableCookieCache=true')
    expect([tooLarge.status, tooLarge.body]).toEqual([
      500,
      { code: 'SESSION_DATA_TOO_LARGE', message: 'Session data exceeds cookie size limit' },
    ])
  })
})

describe('password work for unknown identities', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(() => server.close())

  it('runs exactly one password hash per sign-in attempt, whether or not the account exists', async () => {
    const { email, password } = await signUp(server.base)
    // The server runs in this process: every scrypt run passes through the hash queue.
    const spy = vi.spyOn(passwordHashQueue, 'run')
    try {
      const hashesFor = async (body: Record<string, unknown>) => {
        spy.mockClear()
        const res = await new HttpClient(server.base).post('/sign-in/email', body)
        return [res.status, (res.body as { code?: string } | null)?.code ?? null, spy.mock.calls.length]
      }
      expect(await hashesFor({ email: uniqueEmail('ghost'), password })).toEqual([401, 'INVALID_EMAIL_OR_PASSWORD', 1])
      expect(await hashesFor({ email, password: 'wrong password' })).toEqual([401, 'INVALID_EMAIL_OR_PASSWORD', 1])
      expect(await hashesFor({ email, password })).toEqual([200, null, 1])
      // A user without a password (social only): the same work again.
      const social = uniqueEmail('social')
      await server.gatehouse.ctx.db.insert(userTable).values({
        id: 'socialonly0000000000000000000001',
        name: 'S',
        email: social,
        emailVerified: true,
        createdAt: new Date(0),
        updatedAt: new Date(0),
      })
      expect(await hashesFor({ email: social, password })).toEqual([401, 'INVALID_EMAIL_OR_PASSWORD', 1])
    } finally {
      spy.mockRestore()
    }
  })
})

describe('email and password switches', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(() => server.close())

  it('emailAndPassword.enabled=false refuses sign-up and sign-in with their own errors', async () => {
    const { email, password } = await signUp(server.base)
    server.gatehouse.config.update({ emailAndPassword: { enabled: false } })
    try {
      const up = await new HttpClient(server.base).post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'password123' })
      expect([up.status, up.body]).toEqual([
        400,
        { code: 'EMAIL_PASSWORD_SIGN_UP_DISABLED', message: 'Email and password sign up is not enabled' },
      ])
      const inn = await new HttpClient(server.base).post('/sign-in/email', { email, password })
      expect([inn.status, inn.body]).toEqual([400, { code: 'EMAIL_PASSWORD_DISABLED', message: 'Email and password is not enabled' }])
      expect(inn.cookies).toEqual([])
    } finally {
      server.gatehouse.config.update({ emailAndPassword: { enabled: null } })
    }
    expect((await new HttpClient(server.base).post('/sign-in/email', { email, password })).status).toBe(200)
  })

  it('disableSignUp refuses new accounts but still signs existing ones in', async () => {
    const { email, password } = await signUp(server.base)
    server.gatehouse.config.update({ emailAndPassword: { disableSignUp: true } })
    try {
      const fresh = uniqueEmail('refused')
      const up = await new HttpClient(server.base).post('/sign-up/email', { name: 'X', email: fresh, password: 'password123' })
      expect([up.status, up.body]).toEqual([
        400,
        { code: 'EMAIL_PASSWORD_SIGN_UP_DISABLED', message: 'Email and password sign up is not enabled' },
      ])
      expect(await countRows(server, userTable, eq(userTable.email, fresh))).toBe(0)
      const inn = await new HttpClient(server.base).post<{ user: { email: string } }>('/sign-in/email', { email, password })
      expect([inn.status, inn.body.user?.email]).toEqual([200, email])
    } finally {
      server.gatehouse.config.update({ emailAndPassword: { disableSignUp: null } })
    }
  })

  it('autoSignIn=false creates the user without a session or cookie', async () => {
    server.gatehouse.config.update({ emailAndPassword: { autoSignIn: false } })
    try {
      const email = uniqueEmail('manual')
      const up = await new HttpClient(server.base).post<{ token: string | null; user: { id: string; email: string } }>('/sign-up/email', {
        name: 'M',
        email,
        password: 'password123',
      })
      expect(up.status).toBe(200)
      expect(up.body.token).toBeNull()
      expect(up.body.user).toMatchObject({ email, name: 'M', emailVerified: false })
      expect(up.cookies).toEqual([])
      expect(await countRows(server, session, eq(session.userId, up.body.user.id))).toBe(0)
      const inn = await new HttpClient(server.base).post('/sign-in/email', { email, password: 'password123' })
      expect(inn.status).toBe(200)
    } finally {
      server.gatehouse.config.update({ emailAndPassword: { autoSignIn: null } })
    }
  })
})

describe('session.disableSessionRefresh', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { session: { disableSessionRefresh: true } } })
  })
  afterAll(() => server.close())

  it('never extends a session: the expiry stays where sign-in put it, and it ends there', async () => {
    const { client } = await signUp(server.base)
    const first = await client.get<{ session: { expiresAt: string; updatedAt: string } }>('/get-session')
    const expiresAt = first.body.session.expiresAt
    expect(new Date(expiresAt).getTime()).toBe(server.clock.now() + 7 * DAY * 1000)
    server.clock.advanceSeconds(DAY + 1)
    const later = await client.get<{ session: { expiresAt: string; updatedAt: string } }>('/get-session')
    expect([later.status, later.body.session.expiresAt, later.body.session.updatedAt]).toEqual([
      200,
      expiresAt,
      first.body.session.updatedAt,
    ])
    expect(later.cookies).toEqual([])
    server.clock.advanceSeconds(6 * DAY)
    expect((await client.get('/get-session')).body).toBeNull()
  })
})

describe('cookies on an https base URL', () => {
  let server: TestServer
  const PUBLIC = 'https://auth.example.test'
  beforeAll(async () => {
    server = await startTestServer({ baseURL: PUBLIC })
  })
  afterAll(() => server.close())

  it('prefixes every cookie with __Secure- and marks it Secure; the unprefixed name is not read', async () => {
    const client = new HttpClient(server.base, { origin: PUBLIC })
    const up = await client.post<{ token: string }>('/sign-up/email', {
      name: 'S',
      email: uniqueEmail('secure'),
      password: 'password123',
      rememberMe: false,
    })
    expect(up.status).toBe(200)
    expect(up.cookies).toEqual([
      `__Secure-better-auth.session_token=${signedCookie(TEST_SECRET, up.body.token)}; Path=/; HttpOnly; Secure; SameSite=Lax`,
      `__Secure-better-auth.dont_remember=${signedCookie(TEST_SECRET, 'true')}; Path=/; HttpOnly; Secure; SameSite=Lax`,
    ])
    const me = await client.get<{ session: { token: string } }>('/get-session')
    expect(me.body.session.token).toBe(up.body.token)
    const unprefixed = await new HttpClient(server.base, { origin: PUBLIC }).get('/get-session', {
      cookie: `better-auth.session_token=${signedCookie(TEST_SECRET, up.body.token)}`,
    })
    expect(unprefixed.body).toBeNull()
  })
})
