import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getClient } from '../../../server/features/oidc-provider/clients.js'
import { OIDC_ERRORS } from '../../../server/features/oidc-provider/errors.js'
import { createRegistrationToken, registrationTokens } from '../../../server/features/oidc-provider/registration.js'
import { findClient } from '../../../server/features/oidc-provider/store.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { browse, discover, PASSWORD, SECURE_CALLBACK, signedInJar } from './rp.js'

/**
 * Dynamic registration's edges (issue 47 §7): the redirect URIs a self-registered client may name,
 * `registration.maxClientsPerToken`, the per-source rate of `POST /oauth2/register`, and a
 * self-registered public client's PKCE (issue 51).
 */

let server: TestServer
const by = { via: 'cli' as const }

beforeAll(async () => {
  server = await startTestServer({
    config: { oidcProvider: { enabled: true, registration: { enabled: true, maxClientsPerToken: 3 } } },
  })
})

afterAll(async () => {
  await server?.close()
})

const register = (base: string, body: unknown, token?: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify(body),
  })

describe('redirect URIs of a self-registered client', () => {
  it('refuses plain http off loopback and private-use schemes unless reverse-DNS and native, with RFC 7591 errors that say why', async () => {
    const { token } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
    const refused: [Record<string, unknown>, string][] = [
      [
        { redirect_uris: ['http://rp.example.test/callback'] },
        `redirect_uris: ${OIDC_ERRORS.REGISTERED_REDIRECT_HTTP} (http://rp.example.test/callback)`,
      ],
      [
        { redirect_uris: ['http://192.168.1.20/callback'] },
        `redirect_uris: ${OIDC_ERRORS.REGISTERED_REDIRECT_HTTP} (http://192.168.1.20/callback)`,
      ],
      [
        { redirect_uris: ['http://127.0.0.1.nip.io/callback'] },
        `redirect_uris: ${OIDC_ERRORS.REGISTERED_REDIRECT_HTTP} (http://127.0.0.1.nip.io/callback)`,
      ],
      [
        { redirect_uris: ['com.example.app:/callback'] },
        `redirect_uris: ${OIDC_ERRORS.REGISTERED_REDIRECT_SCHEME} (com.example.app:/callback)`,
      ],
      [
        { redirect_uris: ['myapp:/callback'], application_type: 'native' },
        `redirect_uris: ${OIDC_ERRORS.REGISTERED_REDIRECT_SCHEME} (myapp:/callback)`,
      ],
      [
        { redirect_uris: [SECURE_CALLBACK], post_logout_redirect_uris: ['http://rp.example.test/bye'] },
        `post_logout_redirect_uris: ${OIDC_ERRORS.REGISTERED_REDIRECT_HTTP} (http://rp.example.test/bye)`,
      ],
    ]
    refused.push([
      { redirect_uris: ['http://127.0.0.1:8765/callback', 'http://localhost/cb'] },
      'redirect_uris name several hosts: a pairwise client (the default) needs a sector_identifier_uri, or register subject_type public',
    ])
    for (const [body, description] of refused) {
      const res = await register(server.base, body, token)
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: 'invalid_redirect_uri', error_description: description })
    }
    const accepted = [
      { redirect_uris: [SECURE_CALLBACK] },
      {
        redirect_uris: ['http://127.0.0.1:8765/callback', 'http://127.3.4.5/cb', 'http://[::1]:8080/cb', 'http://localhost/cb'],
        subject_type: 'public',
      },
      { redirect_uris: ['com.example.app:/callback'], application_type: 'native', token_endpoint_auth_method: 'none' },
    ]
    for (const body of accepted) {
      const { token: fresh } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
      const res = await register(server.base, body, fresh)
      expect(res.status).toBe(201)
      expect(((await res.json()) as { redirect_uris: string[] }).redirect_uris).toEqual(body.redirect_uris)
    }
  })
})

describe('a self-registered public client', () => {
  it('is stored with PKCE required; its authorization request without code_challenge is sent back with invalid_request', async () => {
    const { token } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
    const res = await register(server.base, { redirect_uris: [SECURE_CALLBACK], token_endpoint_auth_method: 'none' }, token)
    expect(res.status).toBe(201)
    const registered = (await res.json()) as Record<string, unknown>
    expect(registered).toMatchObject({ token_endpoint_auth_method: 'none' })
    expect(registered).not.toHaveProperty('client_secret')
    const clientId = registered.client_id as string
    const row = await findClient(server.gatehouse.ctx, clientId)
    expect(row).toMatchObject({ public: true, pkceRequired: true, secretHash: null, registeredByToken: expect.any(String) })
    expect(await getClient(server.gatehouse.ctx, clientId)).toMatchObject({ public: true, pkceRequired: true })

    const config = await discover(server, clientId)
    const person = await verifiedSignUp(server, { password: PASSWORD })
    const jar = await signedInJar(server, person)
    const plain = oidc.buildAuthorizationUrl(config, { redirect_uri: SECURE_CALLBACK, scope: 'openid', state: 'no-pkce' })
    const back = await browse(server, jar, plain.href)
    expect(back.origin + back.pathname).toBe(SECURE_CALLBACK)
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'invalid_request',
      error_description: 'Authorization Server policy requires PKCE to be used for this request',
      state: 'no-pkce',
      iss: server.base,
    })

    // The same request with a code_challenge goes on (to the consent a self-registered client always asks).
    const withPkce = oidc.buildAuthorizationUrl(config, {
      redirect_uri: SECURE_CALLBACK,
      scope: 'openid',
      state: 'pkce',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    expect((await browse(server, jar, withPkce.href)).pathname).toBe('/api/auth/ui/consent')
  })
})

describe('registration.maxClientsPerToken', () => {
  it('an initial access token registers at most that many clients; a refused registration does not count; another token still works', async () => {
    const { token, registrationToken } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
    for (let i = 0; i < 3; i++) {
      expect((await register(server.base, { redirect_uris: [SECURE_CALLBACK] }, token)).status).toBe(201)
      if (i === 0) expect((await register(server.base, { redirect_uris: ['javascript:alert(1)'] }, token)).status).toBe(400)
    }
    const over = await register(server.base, { redirect_uris: [SECURE_CALLBACK] }, token)
    expect(over.status).toBe(401)
    expect(await over.json()).toEqual({ error: 'invalid_token', error_description: OIDC_ERRORS.REGISTRATION_CLIENT_LIMIT })
    expect(over.headers.get('www-authenticate')).toContain('error="invalid_token"')
    expect((await registrationTokens(server.gatehouse.ctx)).find((t) => t.id === registrationToken.id)).toMatchObject({ used: 3 })
    const { token: other } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
    expect((await register(server.base, { redirect_uris: [SECURE_CALLBACK] }, other)).status).toBe(201)
    // An unknown token is still just invalid.
    const unknown = await register(server.base, { redirect_uris: [SECURE_CALLBACK] }, 'ghrt_unknown')
    expect(await unknown.json()).toEqual({ error: 'invalid_token', error_description: 'invalid initial access token' })
  })
})

describe('per-source rate of POST /oauth2/register', () => {
  it('counts each IPv4 address and IPv6 /64 apart, by the HTTP limiter, without touching other OIDC paths; the window restarts', async () => {
    const limited = await startTestServer({
      config: {
        rateLimit: { enabled: true },
        oidcProvider: { enabled: true, registration: { enabled: true, rateLimit: { window: 60, max: 2 } } },
      },
    })
    try {
      const { token } = await createRegistrationToken(limited.gatehouse.ctx, {}, by)
      const from = (ip: string) => register(limited.base, { redirect_uris: [SECURE_CALLBACK] }, token, { 'x-forwarded-for': ip })
      expect((await from('203.0.113.5')).status).toBe(201)
      expect((await from('203.0.113.5')).status).toBe(201)
      const third = await from('203.0.113.5')
      expect(third.status).toBe(429)
      expect(third.headers.get('retry-after')).toBe('60')
      // Discovery from the same address is not counted against registration.
      const discovery = await fetch(`${limited.base}/.well-known/openid-configuration`, { headers: { 'x-forwarded-for': '203.0.113.5' } })
      expect(discovery.status).toBe(200)
      expect((await from('203.0.113.6')).status).toBe(201)
      expect((await from('2001:db8:1:2::1')).status).toBe(201)
      expect((await from('2001:db8:1:2::ffff')).status).toBe(201)
      expect((await from('2001:db8:1:2:aaaa::1')).status).toBe(429)
      expect((await from('2001:db8:1:3::1')).status).toBe(201)
      limited.clock.advanceSeconds(61)
      expect((await from('203.0.113.5')).status).toBe(201)
    } finally {
      await limited.close()
    }
  })
})
