import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp, uniqueEmail, statusAndBody, ERRORS } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { signedCookie, TEST_SECRET } from '../helpers/signatures.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

describe('sign-up and sign-in by email', () => {
  it('signs up, sets the signed session cookie and returns the user', async () => {
    const client = new HttpClient(server.base)
    const email = uniqueEmail()
    const res = await client.post<{ token: string; user: Record<string, unknown> }>('/sign-up/email', {
      name: 'Ada',
      email: email.toUpperCase(),
      password: 'password123',
    })
    expect(res.status).toBe(200)
    expect(res.body.token).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(res.body.user).toMatchObject({ name: 'Ada', email, emailVerified: false, image: null })
    expect(res.body.user.id).toMatch(/^[A-Za-z0-9]{32}$/)
    // The signature recomputed here with node:crypto and the test secret, not by the server's code.
    const cookie = res.cookies.find((c) => c.startsWith('better-auth.session_token='))
    expect(cookie).toBe(
      `better-auth.session_token=${signedCookie(TEST_SECRET, res.body.token)}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax`,
    )
  })

  it('refuses a duplicate email with 422 USER_ALREADY_EXISTS, case-insensitively', async () => {
    const { email } = await signUp(server.base)
    const res = await new HttpClient(server.base).post('/sign-up/email', { name: 'X', email: email.toUpperCase(), password: 'password123' })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ code: 'USER_ALREADY_EXISTS', message: 'User already exists' })
  })

  it('enforces the password length and email format', async () => {
    const client = new HttpClient(server.base)
    const short = await client.post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'short' })
    expect(short.status).toBe(400)
    expect(short.body).toEqual({ code: 'PASSWORD_TOO_SHORT', message: 'Password too short' })
    const long = await client.post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'x'.repeat(129) })
    expect(long.status).toBe(400)
    expect(long.body).toEqual({ code: 'PASSWORD_TOO_LONG', message: 'Password too long' })
    const bad = await client.post('/sign-up/email', { name: 'X', email: 'not-an-email', password: 'password123' })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({ code: 'INVALID_EMAIL', message: 'Invalid email' })
  })

  it('refuses role and ban fields with FIELD_NOT_ALLOWED and ignores emailVerified', async () => {
    const client = new HttpClient(server.base)
    const role = await client.post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'password123', role: 'admin' })
    expect(role.status).toBe(400)
    expect(role.body).toEqual({ code: 'FIELD_NOT_ALLOWED', message: 'role is not allowed to be set' })
    const banned = await client.post('/sign-up/email', { name: 'X', email: uniqueEmail(), password: 'password123', banned: true })
    expect(banned.status).toBe(400)
    expect(banned.body).toEqual({ code: 'FIELD_NOT_ALLOWED', message: 'banned is not allowed to be set' })
    const verified = await client.post<{ user: { emailVerified: boolean } }>('/sign-up/email', {
      name: 'X',
      email: uniqueEmail(),
      password: 'password123',
      emailVerified: true,
    })
    expect(verified.status).toBe(200)
    expect(verified.body.user.emailVerified).toBe(false)
  })

  it('signs in with the right password and refuses a wrong one or an unknown email alike', async () => {
    const { email, password } = await signUp(server.base)
    const client = new HttpClient(server.base)
    const ok = await client.post<{ redirect: boolean; token: string; user: { email: string } }>('/sign-in/email', { email, password })
    expect(ok.status).toBe(200)
    expect(ok.body.redirect).toBe(false)
    expect(ok.body).not.toHaveProperty('url')
    expect(ok.body.user.email).toBe(email)
    const wrong = await client.post('/sign-in/email', { email, password: 'wrong password' })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toEqual({ code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' })
    const unknown = await client.post('/sign-in/email', { email: uniqueEmail(), password })
    expect(unknown.status).toBe(401)
    expect(unknown.body).toEqual(wrong.body)
  })

  it('answers a sign-in with callbackURL with redirect, url and a Location header', async () => {
    const { email, password } = await signUp(server.base)
    const res = await new HttpClient(server.base).post('/sign-in/email', { email, password, callbackURL: '/dashboard' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ redirect: true, url: '/dashboard' })
    expect(res.headers.get('location')).toBe('/dashboard')
  })
})

describe('sessions', () => {
  it('get-session returns the session and user, or null without a cookie', async () => {
    const { client, user, token } = await signUp(server.base)
    const res = await client.get<{ session: Record<string, unknown>; user: { id: string } }>('/get-session')
    expect(res.status).toBe(200)
    expect(res.body.user.id).toBe(user.id)
    expect(res.body.session).toMatchObject({ token, userId: user.id, ipAddress: '127.0.0.1', impersonatedBy: null })
    expect(res.headers.get('cache-control')).toBe('no-store')
    const anonymous = await new HttpClient(server.base).get('/get-session')
    expect(anonymous.status).toBe(200)
    expect(anonymous.body).toBeNull()
  })

  it('accepts the session as a bearer token in raw, encoded and decoded forms', async () => {
    const { client, token, user } = await signUp(server.base)
    const signed = client.jar.get('better-auth.session_token') as string
    for (const bearer of [token, signed, decodeURIComponent(signed)]) {
      const res = await new HttpClient(server.base).get<{ user: { id: string } }>('/get-session', { authorization: `Bearer ${bearer}` })
      expect(res.body?.user.id).toBe(user.id)
    }
    const forged = await new HttpClient(server.base).get('/get-session', { authorization: `Bearer ${token}.${'A'.repeat(43)}=` })
    expect(forged.body).toBeNull()
  })

  it('lists, revokes one, revokes others and revokes all sessions', async () => {
    const first = await signUp(server.base)
    const second = new HttpClient(server.base)
    await second.post('/sign-in/email', { email: first.email, password: first.password })
    const third = new HttpClient(server.base)
    const thirdSignIn = await third.post<{ token: string }>('/sign-in/email', { email: first.email, password: first.password })

    const listed = await first.client.get<Array<{ token: string }>>('/list-sessions')
    expect(listed.status).toBe(200)
    expect(listed.body).toHaveLength(3)

    const revoked = await first.client.post('/revoke-session', { token: thirdSignIn.body.token })
    expect(revoked.body).toEqual({ status: true })
    expect((await third.get('/get-session')).body).toBeNull()

    const missing = await first.client.post('/revoke-session', { token: 'x'.repeat(32) })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ code: 'SESSION_NOT_FOUND', message: 'Session not found' })

    const others = await first.client.post('/revoke-other-sessions')
    expect(others.body).toEqual({ status: true })
    expect((await second.get('/get-session')).body).toBeNull()
    expect((await first.client.get('/get-session')).body).toMatchObject({ session: { token: first.token } })

    const all = await first.client.post('/revoke-sessions')
    expect(all.body).toEqual({ status: true })
    expect((await first.client.get('/get-session')).body).toBeNull()
  })

  it("refuses to revoke another user's session with 401", async () => {
    const alice = await signUp(server.base)
    const bob = await signUp(server.base)
    const res = await alice.client.post('/revoke-session', { token: bob.token })
    expect(statusAndBody(res)).toEqual([401, ERRORS.UNAUTHORIZED])
    expect((await bob.client.get('/get-session')).body).toMatchObject({ session: { token: bob.token } })
  })

  it('requires a session for list-sessions (401 UNAUTHORIZED)', async () => {
    const res = await new HttpClient(server.base).get('/list-sessions')
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ code: 'UNAUTHORIZED', message: 'Unauthorized' })
  })

  it('signs out: deletes the session and clears the three cookies', async () => {
    const { client } = await signUp(server.base)
    const signed = client.jar.get('better-auth.session_token') as string
    const res = await client.post('/sign-out')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true })
    expect(res.cookies).toEqual([
      'better-auth.session_token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
      'better-auth.session_data=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
      'better-auth.dont_remember=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
    ])
    const replay = await new HttpClient(server.base).get('/get-session', { cookie: `better-auth.session_token=${signed}` })
    expect(replay.body).toBeNull()
  })
})
