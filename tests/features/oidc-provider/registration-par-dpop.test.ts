import * as oidc from 'openid-client'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent } from '../../../server/db/schema.js'
import { fastTokenHandOvers } from '../../../server/features/oidc-provider/index.js'
import { allClients, clientMetadata, createClient } from '../../../server/features/oidc-provider/clients.js'
import { createRegistrationToken, registrationTokens } from '../../../server/features/oidc-provider/registration.js'
import { findClient } from '../../../server/features/oidc-provider/store.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { runCli } from '../../helpers/process.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { browse, CALLBACK, consent, discover, insecure, PASSWORD, SECURE_CALLBACK, SECURE_RP, signedInJar, signIn } from './rp.js'

/**
 * Dynamic client registration (RFC 7591 / 7592) with initial access tokens, pushed authorization
 * requests (RFC 9126) and DPoP (RFC 9449), driven by openid-client.
 */

let server: TestServer
let person: { email: string }

const by = { via: 'cli' as const }

beforeAll(async () => {
  server = await startTestServer({
    config: { oidcProvider: { enabled: true, registration: { enabled: true, redirectHosts: ['rp.example.test'] } } },
  })
  person = await verifiedSignUp(server, { password: PASSWORD })
})

afterAll(async () => {
  await server?.close()
})

const register = (body: unknown, token?: string) =>
  fetch(`${server.base}/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })

describe('dynamic client registration', () => {
  it('needs a valid initial access token: 401 invalid_token without one, with a wrong one, or once its uses are spent', async () => {
    const base = { redirect_uris: [SECURE_CALLBACK] }
    for (const token of [undefined, 'ghrt_nope', 'something-else']) {
      const res = await register(base, token)
      expect(res.status).toBe(401)
      expect(((await res.json()) as { error: string }).error).toBe('invalid_token')
    }
    const { token } = await createRegistrationToken(server.gatehouse.ctx, { uses: 1 }, by)
    expect((await register(base, token)).status).toBe(201)
    const spent = await register(base, token)
    expect(spent.status).toBe(401)
    expect(((await spent.json()) as { error: string }).error).toBe('invalid_token')
  })

  it('a refused registration (bad metadata) does not spend a use of the initial access token', async () => {
    const { token, registrationToken } = await createRegistrationToken(server.gatehouse.ctx, { uses: 1 }, by)
    const refused = await register({ redirect_uris: ['http://elsewhere.example/callback'] }, token)
    expect(refused.status).toBe(400)
    expect((await registrationTokens(server.gatehouse.ctx)).find((t) => t.id === registrationToken.id)).toMatchObject({
      used: 0,
      usesLeft: 1,
    })
    expect((await register({ redirect_uris: [SECURE_CALLBACK] }, token)).status).toBe(201)
    expect((await registrationTokens(server.gatehouse.ctx)).find((t) => t.id === registrationToken.id)).toMatchObject({
      used: 1,
      usesLeft: 0,
      active: false,
    })
    expect((await register({ redirect_uris: [SECURE_CALLBACK] }, token)).status).toBe(401)
  })

  it('registers with openid-client, signs in with consent shown, reads, updates and deletes itself; the secret hash is never answered', async () => {
    const { token, registrationToken } = await createRegistrationToken(server.gatehouse.ctx, { expiresIn: 600 }, by)
    const config = await oidc.dynamicClientRegistration(
      new URL(server.base),
      { redirect_uris: [SECURE_CALLBACK], client_name: 'Self-registered', grant_types: ['authorization_code', 'refresh_token'] },
      undefined,
      { initialAccessToken: token, ...insecure },
    )
    const meta = config.clientMetadata() as Record<string, unknown>
    const clientId = meta.client_id as string
    const secret = meta.client_secret as string
    expect(secret).toMatch(/^[\w-]{20,}$/)
    expect(meta.registration_client_uri).toBe(`${server.base}/oauth2/register/${clientId}`)
    expect(meta.registration_access_token).toEqual(expect.any(String))
    const rat = meta.registration_access_token as string

    // Consent is shown for a self-registered client.
    const jar = await signedInJar(server, person)
    const rp = await discover(server, clientId, secret)
    const url = oidc.buildAuthorizationUrl(rp, {
      redirect_uri: SECURE_CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    const at = await browse(server, jar, url.href)
    expect(at.pathname).toBe('/api/auth/ui/consent')
    expect((await consent(server, jar, at)).origin).toBe(SECURE_RP)

    const read = await fetch(meta.registration_client_uri as string, { headers: { authorization: `Bearer ${rat}` } })
    expect(read.status).toBe(200)
    const readBody = (await read.json()) as Record<string, unknown>
    expect(readBody.client_id).toBe(clientId)
    expect(readBody).not.toHaveProperty('client_secret')
    expect(JSON.stringify(readBody)).not.toContain('sha256:')

    const put = await fetch(meta.registration_client_uri as string, {
      method: 'PUT',
      headers: { authorization: `Bearer ${rat}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: clientId,
        redirect_uris: [SECURE_CALLBACK],
        client_name: 'Renamed',
        grant_types: ['authorization_code', 'refresh_token'],
      }),
    })
    expect(put.status).toBe(200)
    const putBody = (await put.json()) as Record<string, unknown>
    expect(putBody.client_name).toBe('Renamed')
    expect(putBody).not.toHaveProperty('client_secret')
    expect(JSON.stringify(putBody)).not.toContain('sha256:')

    // The issued secret still works after the update: a whole code flow and a refresh.
    const tokens = await signIn(server, await discover(server, clientId, secret), jar, {
      scope: 'openid offline_access',
      redirectUri: SECURE_CALLBACK,
    })
    expect(tokens.access_token).toBeTruthy()

    const view = (await allClients(server.gatehouse.ctx)).find((c) => c.clientId === clientId)
    expect(view).toMatchObject({ name: 'Renamed', registeredByToken: registrationToken.id, skipConsent: false, resourceServer: false })

    const del = await fetch(meta.registration_client_uri as string, { method: 'DELETE', headers: { authorization: `Bearer ${rat}` } })
    expect(del.status).toBe(204)
    expect(await findClient(server.gatehouse.ctx, clientId)).toBeUndefined()

    const audits = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.target, clientId))
    expect(audits.map((a) => a.type)).toEqual(
      expect.arrayContaining(['oidc.client-registered', 'oidc.client-updated', 'oidc.client-deleted']),
    )
    expect(JSON.stringify(audits)).not.toContain(secret)
  })

  it('refuses Gatehouse privileges, redirect URIs outside registration.redirectHosts and bad ones', async () => {
    const { token } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
    for (const privilege of ['gatehouse_skip_consent', 'gatehouse_resource_server', 'gatehouse_pkce_required']) {
      const res = await register({ redirect_uris: [SECURE_CALLBACK], [privilege]: privilege !== 'gatehouse_pkce_required' }, token)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata')
    }
    for (const uri of ['http://elsewhere.example/callback', 'javascript:alert(1)']) {
      const res = await register({ redirect_uris: [uri] }, token)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe('invalid_redirect_uri')
    }
    const res = await register({ redirect_uris: [SECURE_CALLBACK], backchannel_logout_uri: 'http://example.com/logout' }, token)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata')
  })

  it('refuses client_credentials for a public client (RFC 6749 §4.4): its client_id alone would mint access tokens', async () => {
    const { token } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
    const body = {
      redirect_uris: [SECURE_CALLBACK],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'client_credentials'],
    }
    const res = await register(body, token)
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({
      error: 'invalid_client_metadata',
      error_description: expect.stringContaining('client_credentials'),
    })
    // Registered public, then updated to ask for it: refused too.
    const created = await register({ redirect_uris: [SECURE_CALLBACK], token_endpoint_auth_method: 'none' }, token)
    expect(created.status).toBe(201)
    const meta = (await created.json()) as Record<string, string>
    const put = await fetch(meta.registration_client_uri as string, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${meta.registration_access_token}` },
      body: JSON.stringify({ client_id: meta.client_id, ...body }),
    })
    expect(put.status).toBe(400)
    for (const fast of ['', `&client_secret=x`]) {
      const res = await fetch(`${server.base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=client_credentials&client_id=${meta.client_id}${fast}`,
      })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(await res.json()).not.toHaveProperty('access_token')
    }
    // A public client stored with it before this check never gets it either.
    const row = await findClient(server.gatehouse.ctx, meta.client_id as string)
    expect(
      clientMetadata({ ...row!, registeredMetadata: { ...row!.registeredMetadata, grant_types: body.grant_types } }).grant_types,
    ).toEqual(['authorization_code'])
  })

  it('is off by default: no registration endpoint', async () => {
    const off = await startTestServer({ config: { oidcProvider: { enabled: true } } })
    try {
      const meta = (await (await fetch(`${off.base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
      expect(meta).not.toHaveProperty('registration_endpoint')
      const { token } = await createRegistrationToken(off.gatehouse.ctx, {}, by)
      const res = await fetch(`${off.base}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ redirect_uris: [SECURE_CALLBACK] }),
      })
      expect(res.status).toBe(404)
    } finally {
      await off.close()
    }
  })

  it('gatehouse oidc registration-token create, list and revoke (shown once, stored hashed)', async () => {
    const dir = ['--data-dir', server.dataDir]
    const created = await runCli([
      'oidc',
      'registration-token',
      'create',
      '--expires-in',
      '3600',
      '--uses',
      '2',
      '--label',
      'CI agents',
      '--json',
      ...dir,
    ])
    expect(created.code).toBe(0)
    const { id, token } = JSON.parse(created.stdout) as { id: string; token: string }
    expect(token).toMatch(/^ghrt_/)
    const listed = await runCli(['oidc', 'registration-token', 'list', '--json', ...dir])
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toContain(token)
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id, usesLeft: 2, active: true, label: 'CI agents', createdBy: 'cli' })]),
    )
    expect((await register({ redirect_uris: [SECURE_CALLBACK] }, token)).status).toBe(201)
    const revoked = await runCli(['oidc', 'registration-token', 'revoke', '--id', id, ...dir])
    expect(revoked.code).toBe(0)
    expect((await register({ redirect_uris: [SECURE_CALLBACK] }, token)).status).toBe(401)
    expect((await registrationTokens(server.gatehouse.ctx)).find((t) => t.id === id)).toMatchObject({ active: false, used: 1, usesLeft: 1 })
    const bad = await runCli(['oidc', 'registration-token', 'create', '--uses', '0', ...dir])
    expect(bad.code).toBe(2)
  })
})

describe('PAR and DPoP', () => {
  it('a client with require-PAR is refused a plain authorization request and signs in through PAR', async () => {
    const { client, clientSecret } = await createClient(
      server.gatehouse.ctx,
      { name: 'PAR only', redirectUris: [CALLBACK], skipConsent: true, requirePar: true },
      by,
    )
    const config = await discover(server, client.clientId, clientSecret as string)
    expect(config.serverMetadata().pushed_authorization_request_endpoint).toBe(`${server.base}/oauth2/par`)
    const jar = await signedInJar(server, person)
    const plain = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    const refused = await browse(server, jar, plain.href)
    expect(refused.searchParams.get('error')).toBe('invalid_request')
    const tokens = await signIn(server, config, jar, { par: true })
    expect(tokens.id_token).toBeTruthy()
  })

  it('DPoP: a public client’s tokens are bound; its refresh goes to oidc-provider and needs the same key', async () => {
    const { client } = await createClient(
      server.gatehouse.ctx,
      { name: 'DPoP app', redirectUris: [CALLBACK], public: true, skipConsent: true },
      by,
    )
    const config = await discover(server, client.clientId)
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair())
    const jar = await signedInJar(server, person)
    const tokens = await signIn(server, config, jar, { scope: 'openid offline_access', par: true, dpop })
    expect(tokens.token_type.toLowerCase()).toBe('dpop')
    expect(tokens.refresh_token).toBeTruthy()
    fastTokenHandOvers.length = 0
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, undefined, { DPoP: dpop })
    expect(refreshed.token_type.toLowerCase()).toBe('dpop')
    expect(fastTokenHandOvers).toContain('request form')
    // Without a proof, or with another key, the (rotated) refresh token is refused.
    const unbound = await fetch(`${server.base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshed.refresh_token as string,
        client_id: client.clientId,
      }),
    })
    expect(unbound.status).toBe(400)
    expect(fastTokenHandOvers).toContain('refresh token with jkt')
    const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair())
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token as string, undefined, { DPoP: other })).rejects.toThrow()
    const again = await oidc.refreshTokenGrant(config, refreshed.refresh_token as string, undefined, { DPoP: dpop })
    expect(again.access_token).toBeTruthy()
  })
})
