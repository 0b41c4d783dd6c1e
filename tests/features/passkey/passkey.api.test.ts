import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/** The passkey wire without a browser: options, challenge cookie, refusals (the ceremonies themselves run in tests/features/passkey/passkey.panel.test.ts). */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ config: { passkey: { enabled: true } } })
})
afterAll(() => server.close())

describe('passkey options and refusals', () => {
  it('authentication options: rpId from the base URL host, the signed challenge cookie for 5 minutes, no allowCredentials when signed out', async () => {
    const client = new HttpClient(server.base)
    const res = await client.get<{ challenge: string; rpId: string; allowCredentials?: unknown[]; userVerification: string }>(
      '/passkey/generate-authenticate-options',
    )
    expect(res.status).toBe(200)
    expect(res.body.rpId).toBe('127.0.0.1')
    expect(res.body.userVerification).toBe('preferred')
    expect(res.body.allowCredentials ?? []).toEqual([])
    expect(res.body.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    const cookie = res.cookies.find((c) => c.startsWith('better-auth.better-auth-passkey='))
    expect(cookie).toMatch(
      /^better-auth\.better-auth-passkey=[A-Za-z0-9]{32}\.[A-Za-z0-9%]+%3D; Max-Age=300; Path=\/; HttpOnly; SameSite=Lax$/,
    )
  })

  it('uses the configured relying-party id and name (a LAN host name)', async () => {
    server.gatehouse.config.update({ passkey: { rpID: 'gatehouse.lan', rpName: 'Home auth' } })
    try {
      const { client } = await signUp(server.base)
      const reg = await client.get<{
        rp: { id: string; name: string }
        attestation: string
        authenticatorSelection: Record<string, string>
        user: { name: string }
      }>('/passkey/generate-register-options?name=Laptop')
      expect(reg.status).toBe(200)
      expect(reg.body.rp).toEqual({ id: 'gatehouse.lan', name: 'Home auth' })
      expect(reg.body.attestation).toBe('none')
      expect(reg.body.authenticatorSelection).toMatchObject({ residentKey: 'preferred', userVerification: 'preferred' })
      expect(reg.body.user.name).toBe('Laptop')
      const auth = await client.get<{ rpId: string }>('/passkey/generate-authenticate-options')
      expect(auth.body.rpId).toBe('gatehouse.lan')
    } finally {
      server.gatehouse.config.update({ passkey: { rpID: null, rpName: null } })
    }
  })

  it('registration needs a fresh session; verification needs the challenge', async () => {
    const anonymous = new HttpClient(server.base)
    expect((await anonymous.get('/passkey/generate-register-options')).status).toBe(401)
    const { client } = await signUp(server.base)
    server.clock.advanceSeconds(86_401)
    const stale = await client.get('/passkey/generate-register-options')
    expect(stale.status).toBe(403)
    expect(stale.body).toMatchObject({ code: 'SESSION_NOT_FRESH' })

    const noChallenge = await new HttpClient(server.base).post('/passkey/verify-authentication', { response: { id: 'abc', response: {} } })
    expect(noChallenge.status).toBe(400)
    expect(noChallenge.body).toEqual({ code: 'CHALLENGE_NOT_FOUND', message: 'Challenge not found' })

    const fresh = await signUp(server.base)
    await fresh.client.get('/passkey/generate-register-options')
    const bogus = await fresh.client.post('/passkey/verify-registration', {
      response: { id: 'abc', rawId: 'abc', type: 'public-key', response: {} },
    })
    expect(bogus.status).toBe(500)
    expect(bogus.body).toEqual({ code: 'FAILED_TO_VERIFY_REGISTRATION', message: 'Failed to verify registration' })
    // The challenge was spent by that attempt.
    const again = await fresh.client.post('/passkey/verify-registration', {
      response: { id: 'abc', rawId: 'abc', type: 'public-key', response: {} },
    })
    expect(again.body).toEqual({ code: 'CHALLENGE_NOT_FOUND', message: 'Challenge not found' })

    const unknown = new HttpClient(server.base)
    await unknown.get('/passkey/generate-authenticate-options')
    const notFound = await unknown.post('/passkey/verify-authentication', { response: { id: 'no-such-credential', response: {} } })
    expect(notFound.status).toBe(401)
    expect(notFound.body).toEqual({ code: 'PASSKEY_NOT_FOUND', message: 'Passkey not found' })
  })

  it('lists nothing for a new user and 404s an unknown passkey', async () => {
    const { client } = await signUp(server.base)
    expect((await client.get('/passkey/list-user-passkeys')).body).toEqual([])
    const del = await client.post('/passkey/delete-passkey', { id: 'nope' })
    expect(del.status).toBe(404)
    expect(del.body).toEqual({ code: 'PASSKEY_NOT_FOUND', message: 'Passkey not found' })
  })

  it('is off by default', async () => {
    const off = await startTestServer()
    try {
      expect((await new HttpClient(off.base).get('/passkey/generate-authenticate-options')).status).toBe(404)
    } finally {
      await off.close()
    }
  })
})
