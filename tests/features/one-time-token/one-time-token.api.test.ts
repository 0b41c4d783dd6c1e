import { oneTimeTokenClient } from 'better-auth/client/plugins'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { banUser, systemActor } from '../../../server/features/admin/index.js'
import { CookieJar, HttpClient, signUp } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 27, one-time tokens (better-auth's one-time-token plugin): a signed-in client asks for a
 * token, another party exchanges it once for the same session (better-auth's verify answers the
 * existing session, it creates none).
 */

let server: TestServer
let twoInstances: TestServer | null = null

beforeAll(async () => {
  server = await startTestServer({ config: { oneTimeToken: { enabled: true, expiresIn: 5 } } })
})
afterAll(async () => {
  await twoInstances?.close()
  await server.close()
})

function officialClient(jar = new CookieJar()) {
  return official(server, { jar, plugins: [oneTimeTokenClient()] }).client
}

describe('one-time tokens through the official oneTimeTokenClient', () => {
  it('generate → verify on another client answers the same session and sets its cookie', async () => {
    const owner = await signUp(server.base)
    const ownerJar = new CookieJar()
    for (const [k, v] of owner.client.jar.cookies) ownerJar.cookies.set(k, v)
    const generated = await officialClient(ownerJar).oneTimeToken.generate()
    expect(generated.error).toBeNull()
    const token = generated.data?.token as string
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/)

    const otherJar = new CookieJar()
    const verified = await officialClient(otherJar).oneTimeToken.verify({ token })
    expect(verified.error).toBeNull()
    expect(verified.data?.session.token).toBe(owner.token)
    expect(verified.data?.user.id).toBe(owner.user.id)
    // The other client now holds the owner's session.
    const session = await officialClient(otherJar).getSession()
    expect(session.data?.user.id).toBe(owner.user.id)
    expect(session.data?.session.token).toBe(owner.token)
  })

  it('a token is spent once: the second verify is refused with better-auth\'s "Invalid token"', async () => {
    const owner = await signUp(server.base)
    const { body } = await owner.client.get<{ token: string }>('/one-time-token/generate')
    const anon = new HttpClient(server.base)
    expect((await anon.post('/one-time-token/verify', { token: body.token })).status).toBe(200)
    const again = await new HttpClient(server.base).post('/one-time-token/verify', { token: body.token })
    expect([again.status, again.body]).toEqual([400, { message: 'Invalid token' }])
    expect(again.cookies).toEqual([])
  })

  it('parallel verifies of one token: exactly one succeeds', async () => {
    const owner = await signUp(server.base)
    const { body } = await owner.client.get<{ token: string }>('/one-time-token/generate')
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => new HttpClient(server.base).post('/one-time-token/verify', { token: body.token })),
    )
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
    expect(answers.filter((a) => a.status === 400)).toHaveLength(7)
  })

  it('expires after `expiresIn` minutes (TestClock)', async () => {
    const owner = await signUp(server.base)
    const { body } = await owner.client.get<{ token: string }>('/one-time-token/generate')
    server.clock.advanceSeconds(5 * 60 + 1)
    const late = await new HttpClient(server.base).post('/one-time-token/verify', { token: body.token })
    expect([late.status, late.body]).toEqual([400, { message: 'Invalid token' }])
  })

  it('a wrong token, no session to generate, a missing body field', async () => {
    const anon = new HttpClient(server.base)
    const wrong = await anon.post('/one-time-token/verify', { token: 'x'.repeat(32) })
    expect([wrong.status, wrong.body]).toEqual([400, { message: 'Invalid token' }])
    const unauth = await anon.get('/one-time-token/generate')
    expect([unauth.status, unauth.body]).toEqual([401, { code: 'UNAUTHORIZED', message: 'Unauthorized' }])
    expect((await anon.post('/one-time-token/verify', {})).status).toBe(400)
  })

  it('a banned user: the ban ended the session, so the token finds none ("Session not found")', async () => {
    const owner = await signUp(server.base)
    const { body } = await owner.client.get<{ token: string }>('/one-time-token/generate')
    await banUser(server.gatehouse.ctx, systemActor('panel'), { userId: owner.user.id, banReason: 'test' }, null)
    const res = await new HttpClient(server.base).post('/one-time-token/verify', { token: body.token })
    expect([res.status, res.body]).toEqual([400, { message: 'Session not found' }])
  })

  it('a signed-out session: "Session not found"', async () => {
    const owner = await signUp(server.base)
    const { body } = await owner.client.get<{ token: string }>('/one-time-token/generate')
    expect((await owner.client.post('/sign-out', {})).status).toBe(200)
    const res = await new HttpClient(server.base).post('/one-time-token/verify', { token: body.token })
    expect([res.status, res.body]).toEqual([400, { message: 'Session not found' }])
  })

  it('an expired session: the cookie is set, then "Session expired" (better-auth\'s order)', async () => {
    const clocked = await startTestServer({ config: { oneTimeToken: { enabled: true, expiresIn: 60 * 24 * 8 } } })
    try {
      const owner = await signUp(clocked.base)
      const { body } = await owner.client.get<{ token: string }>('/one-time-token/generate')
      clocked.clock.advanceSeconds(7 * 86400 + 1)
      const res = await new HttpClient(clocked.base).post('/one-time-token/verify', { token: body.token })
      expect([res.status, res.body]).toEqual([400, { message: 'Session expired' }])
      expect(res.cookies.some((c) => c.startsWith('better-auth.session_token='))).toBe(true)
    } finally {
      await clocked.close()
    }
  })

  it('stored hashed when storeToken is "hashed"; off → 404', async () => {
    twoInstances = await startTestServer({
      config: { oneTimeToken: { enabled: true, storeToken: 'hashed', disableSetSessionCookie: true } },
    })
    const owner = await signUp(twoInstances.base)
    const { body } = await owner.client.get<{ token: string }>('/one-time-token/generate')
    const res = await new HttpClient(twoInstances.base).post('/one-time-token/verify', { token: body.token })
    expect(res.status).toBe(200)
    expect(res.cookies).toEqual([])
    const off = await startTestServer()
    try {
      const signed = await signUp(off.base)
      expect((await signed.client.get('/one-time-token/generate')).status).toBe(404)
      expect((await new HttpClient(off.base).post('/one-time-token/verify', { token: 'x' })).status).toBe(404)
    } finally {
      await off.close()
    }
  })

  it('disableClientRequest refuses generate', async () => {
    const strict = await startTestServer({ config: { oneTimeToken: { enabled: true, disableClientRequest: true } } })
    try {
      const owner = await signUp(strict.base)
      const res = await owner.client.get('/one-time-token/generate')
      expect([res.status, res.body]).toEqual([400, { message: 'Client requests are disabled' }])
    } finally {
      await strict.close()
    }
  })
})
