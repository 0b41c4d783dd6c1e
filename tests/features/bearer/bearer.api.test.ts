import { createAuthClient } from 'better-auth/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 27, bearer tokens (better-auth's bearer plugin, `bearer.enabled`, on by default): every
 * answer that sets the session cookie carries its signed value in `set-auth-token`, and
 * `Authorization: Bearer <token>` is accepted wherever the session cookie is.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ config: { oneTimeToken: { enabled: true } } })
})
afterAll(() => server.close())

/** A client without cookies: requests carry the Origin header and, when given, the bearer token. */
const cookieless = (token?: string) => new HttpClient(server.base, token ? { headers: { authorization: `Bearer ${token}` } } : {})

async function bearerOf(): Promise<{ token: string; userId: string; raw: string }> {
  const signed = await signUp(server.base)
  const res = await cookieless().post<{ token: string }>('/sign-in/email', { email: signed.email, password: signed.password })
  expect(res.status).toBe(200)
  expect(res.headers.get('access-control-expose-headers')).toBe('set-auth-token')
  const token = res.headers.get('set-auth-token') as string
  expect(decodeURIComponent(token).split('.')[0]).toBe(res.body.token)
  return { token, userId: signed.user.id, raw: res.body.token }
}

describe('bearer tokens through the official client', () => {
  it('signs in without cookies, keeps the set-auth-token value, and uses it as `auth: Bearer`', async () => {
    let stored = ''
    const client = createAuthClient({
      baseURL: server.origin,
      fetchOptions: {
        // No cookie jar: a native app or a CLI.
        customFetchImpl: (input, init) => {
          const headers = new Headers(init?.headers)
          headers.set('origin', server.origin)
          return fetch(input, { ...init, headers })
        },
        auth: { type: 'Bearer', token: () => stored },
        onSuccess: (ctx) => {
          const token = ctx.response.headers.get('set-auth-token')
          if (token) stored = token
        },
      },
    })
    const email = uniqueEmail('bearer')
    const up = await client.signUp.email({ email, password: 'correct horse battery', name: 'B' })
    expect(up.error).toBeNull()
    expect(stored).not.toBe('')
    const session = await client.getSession()
    expect(session.data?.user.email).toBe(email)
    const sessions = await client.listSessions()
    expect(sessions.data).toHaveLength(1)
    const updated = await client.updateUser({ name: 'Renamed' })
    expect(updated.error).toBeNull()
    expect((await client.getSession()).data?.user.name).toBe('Renamed')
    expect((await client.signOut()).error).toBeNull()
    expect((await client.getSession()).data).toBeNull()
  })
})

describe('accepted wherever the session cookie is', () => {
  it('get-session, list-sessions, a feature route (one-time-token/generate), a fresh-session route; the raw token too', async () => {
    const { token, userId, raw } = await bearerOf()
    for (const form of [token, decodeURIComponent(token), raw]) {
      const session = await cookieless(form).get<{ user: { id: string } }>('/get-session')
      expect(session.body.user.id).toBe(userId)
    }
    expect((await cookieless(token).get('/list-sessions')).status).toBe(200)
    const ott = await cookieless(token).get<{ token: string }>('/one-time-token/generate')
    expect(ott.status).toBe(200)
    const change = await cookieless(token).post('/change-password', { currentPassword: 'wrong one!', newPassword: 'another horse battery' })
    expect(change.status).toBe(400)
    // The scheme is case-insensitive, as better-auth reads it.
    const lower = await new HttpClient(server.base, { headers: { authorization: `bearer ${token}` } }).get<{ user: { id: string } }>(
      '/get-session',
    )
    expect(lower.body.user.id).toBe(userId)
  })

  it('a valid bearer wins over a session cookie of someone else (better-auth replaces the cookie)', async () => {
    const { token, userId } = await bearerOf()
    const other = await signUp(server.base)
    const res = await other.client.get<{ user: { id: string } }>('/get-session', { authorization: `Bearer ${token}` })
    expect(res.body.user.id).toBe(userId)
  })
})

describe('refusals', () => {
  it('a token whose signature was changed is no session: get-session null, protected routes 401', async () => {
    const { token } = await bearerOf()
    const [value, signature = ''] = decodeURIComponent(token).split('.')
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`
    for (const forged of [`${value}.${flipped}`, encodeURIComponent(`${value}.${flipped}`), `${value}.`, `${value}x.${signature}`]) {
      const session = await cookieless(forged).get('/get-session')
      expect([session.status, session.body]).toEqual([200, null])
      const list = await cookieless(forged).get('/list-sessions')
      expect([list.status, list.body]).toEqual([401, { code: 'UNAUTHORIZED', message: 'Unauthorized' }])
    }
  })

  it('a signed-out token, a malformed header, another scheme', async () => {
    const { token } = await bearerOf()
    expect((await cookieless(token).post('/sign-out', {})).status).toBe(200)
    expect((await cookieless(token).get('/get-session')).body).toBeNull()
    for (const header of ['Bearer', 'Bearer   ', `Basic ${token}`, `Token ${token}`, 'Bearer short']) {
      const res = await new HttpClient(server.base, { headers: { authorization: header } }).get('/list-sessions')
      expect(res.status).toBe(401)
    }
  })

  it('requireSignature refuses the raw token; bearer.enabled false: no set-auth-token, the header is ignored', async () => {
    const strict = await startTestServer({ config: { bearer: { requireSignature: true } } })
    const off = await startTestServer({ config: { bearer: { enabled: false } } })
    try {
      const s = await signUp(strict.base)
      const signIn = await new HttpClient(strict.base).post<{ token: string }>('/sign-in/email', { email: s.email, password: s.password })
      const signedToken = signIn.headers.get('set-auth-token') as string
      const raw = signIn.body.token
      const withRaw = await new HttpClient(strict.base, { headers: { authorization: `Bearer ${raw}` } }).get('/get-session')
      expect(withRaw.body).toBeNull()
      const withSigned = await new HttpClient(strict.base, { headers: { authorization: `Bearer ${signedToken}` } }).get<{
        user: { id: string }
      }>('/get-session')
      expect(withSigned.body.user.id).toBe(s.user.id)

      const o = await signUp(off.base)
      const offSignIn = await new HttpClient(off.base).post<{ token: string }>('/sign-in/email', { email: o.email, password: o.password })
      expect(offSignIn.status).toBe(200)
      expect(offSignIn.headers.get('set-auth-token')).toBeNull()
      expect(offSignIn.cookies.some((c) => c.startsWith('better-auth.session_token='))).toBe(true)
      const bearerOff = await new HttpClient(off.base, { headers: { authorization: `Bearer ${offSignIn.body.token}` } }).get('/get-session')
      expect(bearerOff.body).toBeNull()
    } finally {
      await strict.close()
      await off.close()
    }
  })
})
