import { lastLoginMethodClient, usernameClient } from 'better-auth/client/plugins'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Browser, FakeProvider } from '../../helpers/oauth-fakes.js'
import { CookieJar, HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 27, last login method (better-auth's last-login-method plugin): the cookie better-auth
 * sets after a sign-in by a method it recognises, with the session cookie's attributes, not
 * HttpOnly, for 30 days; nothing after the methods it does not name (username, ...).
 */

const COOKIE = 'better-auth.last_used_login_method'
let server: TestServer
const fake = new FakeProvider()
let ghId = 1

beforeAll(async () => {
  await fake.start()
  fake.on('POST', '/gh/token', () => ({ json: { access_token: 'access-1', token_type: 'bearer', scope: 'read:user,user:email' } }))
  fake.on('GET', '/gh/user', () => ({ json: { login: `u${ghId}`, id: ghId, name: 'GH', email: null, avatar_url: null } }))
  fake.on('GET', '/gh/emails', () => ({ json: [{ email: `gh${ghId}@example.com`, verified: true, primary: true }] }))
  server = await startTestServer({
    config: {
      lastLoginMethod: { enabled: true },
      socialProviders: {
        github: {
          clientId: 'gh',
          clientSecret: 'gh-secret',
          endpoints: {
            authorization: `${fake.url}/gh/authorize`,
            token: `${fake.url}/gh/token`,
            userInfo: `${fake.url}/gh/user`,
            emails: `${fake.url}/gh/emails`,
          },
        },
      },
    },
  })
})
afterAll(async () => {
  await server.close()
  await fake.close()
})
afterEach(() => {
  Reflect.deleteProperty(globalThis, 'document')
})

const lastLogin = (cookies: string[]) => cookies.filter((c) => c.startsWith(`${COOKIE}=`))

/** The official client; its lastLoginMethodClient reads document.cookie, which the jar stands in for (a browser's cookie store). */
function officialClient(jar: CookieJar) {
  Object.defineProperty(globalThis, 'document', { configurable: true, get: () => ({ cookie: jar.header() }) })
  return official(server, { jar, plugins: [lastLoginMethodClient(), usernameClient()] }).client
}

describe('the last-login-method cookie', () => {
  it('after an email sign-up and sign-in: "email", as better-auth spells the cookie', async () => {
    const email = uniqueEmail('llm')
    const up = await new HttpClient(server.base).post('/sign-up/email', { email, password: 'correct horse battery', name: 'L' })
    expect(up.status).toBe(200)
    expect(lastLogin(up.cookies)).toEqual([`${COOKIE}=email; Max-Age=2592000; Path=/; SameSite=Lax`])

    const jar = new CookieJar()
    const client = officialClient(jar)
    expect(client.getLastUsedLoginMethod()).toBeNull()
    const res = await client.signIn.email({ email, password: 'correct horse battery' })
    expect(res.error).toBeNull()
    expect(client.getLastUsedLoginMethod()).toBe('email')
    expect(client.isLastUsedLoginMethod('email')).toBe(true)
  })

  it('after a social callback: the provider id', async () => {
    ghId = Math.floor(Math.random() * 1e9)
    const browser = new Browser()
    const started = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'github' }, server.origin)
    const state = new URL(((await started.json()) as { url: string }).url).searchParams.get('state')
    const callback = await browser.request(`${server.base}/callback/github?code=c&state=${state}`)
    expect(callback.status).toBe(302)
    expect(lastLogin(callback.headers.getSetCookie())).toEqual([`${COOKIE}=github; Max-Age=2592000; Path=/; SameSite=Lax`])
  })

  it('no cookie after methods better-auth does not name (username), nor after a refused sign-in', async () => {
    const username = `llm${Date.now().toString(36)}`
    const signed = await signUp(server.base, { username })
    const viaUsername = await new HttpClient(server.base).post('/sign-in/username', { username, password: signed.password })
    expect(viaUsername.status).toBe(200)
    expect(lastLogin(viaUsername.cookies)).toEqual([])
    const wrong = await new HttpClient(server.base).post('/sign-in/email', { email: signed.email, password: 'wrong password!' })
    expect(wrong.status).toBe(401)
    expect(lastLogin(wrong.cookies)).toEqual([])
  })

  it('cookieName, maxAge and Secure on https; off → no cookie', async () => {
    const custom = await startTestServer({
      baseURL: 'https://auth.example.test',
      config: { lastLoginMethod: { enabled: true, cookieName: 'last_method', maxAge: 600 }, trustedOrigins: ['https://auth.example.test'] },
    })
    const off = await startTestServer()
    try {
      const up = await new HttpClient(custom.base, { origin: 'https://auth.example.test' }).post('/sign-up/email', {
        email: uniqueEmail('llm'),
        password: 'correct horse battery',
        name: 'L',
      })
      expect(up.status).toBe(200)
      expect(up.cookies.filter((c) => c.startsWith('last_method='))).toEqual([
        'last_method=email; Max-Age=600; Path=/; Secure; SameSite=Lax',
      ])
      const plain = await signUp(off.base)
      const again = await new HttpClient(off.base).post('/sign-in/email', { email: plain.email, password: plain.password })
      expect(again.status).toBe(200)
      expect(lastLogin(again.cookies)).toEqual([])
    } finally {
      await custom.close()
      await off.close()
    }
  })

  it('storeInDatabase: user.lastLoginMethod follows the last recognised sign-in; absent from users without one', async () => {
    const stored = await startTestServer({ config: { lastLoginMethod: { enabled: true, storeInDatabase: true } } })
    const plain = await startTestServer({ config: { lastLoginMethod: { enabled: true } } })
    try {
      const username = `st${Date.now().toString(36)}`
      const signed = await signUp(stored.base, { username })
      const client = new HttpClient(stored.base)
      expect((await client.post('/sign-in/username', { username, password: signed.password })).status).toBe(200)
      // Signed up by email (recorded), then by username (not a method better-auth names: unchanged).
      const session = await client.get<{ user: Record<string, unknown> }>('/get-session')
      expect(session.body.user.lastLoginMethod).toBe('email')
      const again = new HttpClient(stored.base)
      const signIn = await again.post<{ user: Record<string, unknown> }>('/sign-in/email', {
        email: signed.email,
        password: signed.password,
      })
      expect(signIn.status).toBe(200)
      expect((await again.get<{ user: Record<string, unknown> }>('/get-session')).body.user.lastLoginMethod).toBe('email')

      const notStored = await signUp(plain.base)
      const plainSession = await notStored.client.get<{ user: Record<string, unknown> }>('/get-session')
      expect(plainSession.body.user).not.toHaveProperty('lastLoginMethod')
    } finally {
      await stored.close()
      await plain.close()
    }
  })
})
