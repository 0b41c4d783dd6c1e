import { multiSessionClient } from 'better-auth/client/plugins'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CookieJar, HttpClient, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 27, several accounts in one browser (better-auth's multi-session plugin): every sign-in
 * sets a signed `better-auth.session_token_multi-<token>` cookie; the browser lists its accounts,
 * switches the active one, revokes one; sign-out ends them all; `maximumSessions` caps them.
 */

let server: TestServer
const PASSWORD = 'correct horse battery'

beforeAll(async () => {
  server = await startTestServer({ config: { multiSession: { enabled: true, maximumSessions: 3 } } })
})
afterAll(() => server.close())

function officialClient(jar: CookieJar) {
  return official(server, { jar, plugins: [multiSessionClient()] }).client
}

async function account(): Promise<{ email: string; id: string }> {
  const email = uniqueEmail('multi')
  const res = await new HttpClient(server.base).post<{ user: { id: string } }>('/sign-up/email', { email, password: PASSWORD, name: 'M' })
  expect(res.status).toBe(200)
  return { email, id: res.body.user.id }
}

const multiCookies = (jar: CookieJar) => [...jar.cookies.keys()].filter((k) => k.includes('_multi-'))

describe('several accounts in one browser through the official multiSessionClient', () => {
  it('sign in twice → two device sessions; set-active switches; revoke the active one → the other becomes active', async () => {
    const a = await account()
    const b = await account()
    const jar = new CookieJar()
    const client = officialClient(jar)
    const first = await client.signIn.email({ email: a.email, password: PASSWORD })
    expect(first.error).toBeNull()
    const tokenA = first.data?.token as string
    expect(multiCookies(jar)).toEqual([`better-auth.session_token_multi-${tokenA.toLowerCase()}`])
    const second = await client.signIn.email({ email: b.email, password: PASSWORD })
    const tokenB = second.data?.token as string
    expect(multiCookies(jar)).toHaveLength(2)
    expect((await client.getSession()).data?.user.id).toBe(b.id)

    const listed = await client.multiSession.listDeviceSessions()
    expect(listed.error).toBeNull()
    expect(new Set(listed.data?.map((s) => s.user.id))).toEqual(new Set([a.id, b.id]))

    const switched = await client.multiSession.setActive({ sessionToken: tokenA })
    expect(switched.error).toBeNull()
    expect(switched.data?.user.id).toBe(a.id)
    expect((await client.getSession()).data?.user.id).toBe(a.id)

    const revoked = await client.multiSession.revoke({ sessionToken: tokenA })
    expect(revoked.data).toEqual({ status: true })
    expect((await client.getSession()).data?.session.token).toBe(tokenB)
    expect(multiCookies(jar)).toEqual([`better-auth.session_token_multi-${tokenB.toLowerCase()}`])
    expect((await client.multiSession.listDeviceSessions()).data?.map((s) => s.user.id)).toEqual([b.id])
  })

  it('the multi cookie as better-auth sets it: signed token, the session cookie attributes', async () => {
    const a = await account()
    const res = await new HttpClient(server.base).post<{ token: string }>('/sign-in/email', { email: a.email, password: PASSWORD })
    const line = res.cookies.find((c) => c.includes('_multi-')) as string
    const [pair, ...attrs] = line.split('; ')
    expect(pair?.startsWith(`better-auth.session_token_multi-${res.body.token.toLowerCase()}=${res.body.token}.`)).toBe(true)
    expect(attrs).toEqual(['Max-Age=604800', 'Path=/', 'HttpOnly', 'SameSite=Lax'])
  })

  it('signing in again as the same user ends the earlier session of that user in this browser', async () => {
    const a = await account()
    const browser = new HttpClient(server.base)
    const first = await browser.post<{ token: string }>('/sign-in/email', { email: a.email, password: PASSWORD })
    const again = await browser.post<{ token: string }>('/sign-in/email', { email: a.email, password: PASSWORD })
    expect(again.cookies.some((c) => c.startsWith(`better-auth.session_token_multi-${first.body.token.toLowerCase()}=;`))).toBe(true)
    const old = await new HttpClient(server.base, { headers: { authorization: `Bearer ${first.body.token}` } }).get('/get-session')
    expect(old.body).toBeNull()
    const listed = await browser.get<{ session: { token: string } }[]>('/multi-session/list-device-sessions')
    expect(listed.body.map((s) => s.session.token)).toEqual([again.body.token])
  })

  it('maximumSessions: the fourth account signs in but gets no device cookie', async () => {
    const browser = new HttpClient(server.base)
    for (let i = 0; i < 4; i++) {
      const acc = await account()
      const res = await browser.post('/sign-in/email', { email: acc.email, password: PASSWORD })
      expect(res.status).toBe(200)
      expect(res.cookies.some((c) => c.includes('_multi-'))).toBe(i < 3)
    }
    expect(multiCookies(browser.jar)).toHaveLength(3)
  })

  it('sign-out expires every device cookie and ends their sessions', async () => {
    const browser = new HttpClient(server.base)
    const tokens: string[] = []
    for (let i = 0; i < 2; i++) {
      const acc = await account()
      tokens.push((await browser.post<{ token: string }>('/sign-in/email', { email: acc.email, password: PASSWORD })).body.token)
    }
    const out = await browser.post('/sign-out', {})
    expect(out.status).toBe(200)
    expect(out.cookies.filter((c) => c.includes('_multi-') && c.includes('Max-Age=0'))).toHaveLength(2)
    for (const token of tokens) {
      expect((await new HttpClient(server.base, { headers: { authorization: `Bearer ${token}` } }).get('/get-session')).body).toBeNull()
    }
  })
})

describe('refusals', () => {
  it('set-active and revoke of a token the browser has no (valid) cookie for: 401 INVALID_SESSION_TOKEN', async () => {
    const a = await account()
    const browser = new HttpClient(server.base)
    const signedIn = await browser.post<{ token: string }>('/sign-in/email', { email: a.email, password: PASSWORD })
    const stranger = 'A'.repeat(32)
    const refusal = { code: 'INVALID_SESSION_TOKEN', message: 'Invalid session token' }
    const setActive = await browser.post('/multi-session/set-active', { sessionToken: stranger })
    expect([setActive.status, setActive.body]).toEqual([401, refusal])
    const revoke = await browser.post('/multi-session/revoke', { sessionToken: stranger })
    expect([revoke.status, revoke.body]).toEqual([401, refusal])
    // A forged device cookie (a token with a wrong signature) is no better.
    const name = `better-auth.session_token_multi-${signedIn.body.token.toLowerCase()}`
    const forged = await new HttpClient(server.base).post(
      '/multi-session/set-active',
      { sessionToken: signedIn.body.token },
      { cookie: `${name}=${signedIn.body.token}.AAAA` },
    )
    expect([forged.status, forged.body]).toEqual([401, refusal])
    // Revoke needs a session.
    const anon = await new HttpClient(server.base).post('/multi-session/revoke', { sessionToken: signedIn.body.token })
    expect(anon.status).toBe(401)
    // Without cookies the list is empty.
    expect((await new HttpClient(server.base).get('/multi-session/list-device-sessions')).body).toEqual([])
  })

  it('set-active of an expired session: 401 and the device cookie expired (TestClock)', async () => {
    const clocked = await startTestServer({ config: { multiSession: { enabled: true } } })
    try {
      const email = uniqueEmail('multi')
      const browser = new HttpClient(clocked.base)
      const up = await browser.post<{ token: string }>('/sign-up/email', { email, password: PASSWORD, name: 'M' })
      clocked.clock.advanceSeconds(7 * 86400 + 1)
      const res = await browser.post('/multi-session/set-active', { sessionToken: up.body.token })
      expect([res.status, res.body]).toEqual([401, { code: 'INVALID_SESSION_TOKEN', message: 'Invalid session token' }])
      expect(res.cookies.some((c) => c.includes('_multi-') && c.includes('Max-Age=0'))).toBe(true)
    } finally {
      await clocked.close()
    }
  })

  it('off: 404 and no device cookies', async () => {
    const off = await startTestServer()
    try {
      const browser = new HttpClient(off.base)
      const up = await browser.post('/sign-up/email', { email: uniqueEmail('multi'), password: PASSWORD, name: 'M' })
      expect(up.cookies.some((c) => c.includes('_multi-'))).toBe(false)
      expect((await browser.get('/multi-session/list-device-sessions')).status).toBe(404)
    } finally {
      await off.close()
    }
  })
})
