import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { and, eq } from 'drizzle-orm'
import { auditEvent, member, oidcClient, oidcModel, organization, team, teamMember, user } from '../../../server/db/schema.js'
import { changeClient, createClient } from '../../../server/features/oidc-provider/clients.js'
import { rotateSigningKey } from '../../../server/features/jwt/keys.js'
import { ConsumedMeanwhile, WriteBatch } from '../../../server/features/oidc-provider/batch.js'
import { commitWithOthers } from '../../../server/features/oidc-provider/commit.js'
import { findModel, upsertModel } from '../../../server/features/oidc-provider/store.js'
import { connectedApps, rememberedConsent, revokeConsent } from '../../../server/features/oidc-provider/consent.js'
import { CookieJar, type SignedUp, signUp } from '../../helpers/http.js'
import { joinTeamsNamed, markVerified, noSeparator, SEPARATOR_TEAM_NAMES, verifiedSignUp } from '../../helpers/members.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { browse, CALLBACK, discover, insecure, PASSWORD, RP, signedInJar } from './rp.js'

/**
 * Gatehouse as an OpenID provider, against panva's openid-client as the relying party, on the
 * real server over loopback. The browser's part (authorize → sign-in → consent → callback) is
 * played here by a cookie jar following redirects; tests/features/oidc-provider/oidc-browser.panel.test.ts plays it in
 * Chromium.
 */

let server: TestServer
let issuer: string

async function newClient(options: Partial<Parameters<typeof createClient>[1]> = {}) {
  return createClient(
    server.gatehouse.ctx,
    { name: 'Test RP', redirectUris: [CALLBACK], postLogoutRedirectUris: [`${RP}/signed-out`], ...options },
    { via: 'cli' },
  )
}

async function consent(jar: CookieJar, at: URL, action: 'consent' | 'abort' = 'consent'): Promise<URL> {
  expect(at.pathname).toBe('/api/auth/ui/consent')
  const uid = at.searchParams.get('interaction') as string
  const details = await fetch(`${server.base}/oidc/interaction/${uid}`, { headers: { accept: 'application/json', cookie: jar.header() } })
  expect(details.status).toBe(200)
  const body = (await details.json()) as { uid: string; prompt: string; client: { name: string }; scopes: string[] }
  expect(body.uid).toBe(uid)
  expect(body.prompt).toBe('consent')
  const res = await fetch(`${server.base}/oidc/interaction/${uid}/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.origin, cookie: jar.header() },
    body: '{}',
  })
  expect(res.status).toBe(200)
  jar.store(res)
  const { redirectTo } = (await res.json()) as { redirectTo: string }
  return browse(server, jar, redirectTo)
}

interface Flow {
  config: oidc.Configuration
  verifier: string
  state: string
  nonce: string
  url: URL
}

async function startFlow(
  config: oidc.Configuration,
  scope = 'openid email profile groups offline_access',
  extra: Record<string, string> = {},
): Promise<Flow> {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope,
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    prompt: 'consent',
    ...extra,
  })
  return { config, verifier, state, nonce, url }
}

/** authorize → SSO from the jar's session → consent → the callback URL with the code. */
async function authorize(jar: CookieJar, flow: Flow): Promise<URL> {
  let at = await browse(server, jar, flow.url.href)
  if (at.pathname === '/api/auth/ui/consent') at = await consent(jar, at)
  return at
}

const exchange = (flow: Flow, callback: URL) =>
  oidc.authorizationCodeGrant(flow.config, callback, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  })

async function auditTypes(): Promise<{ type: string; outcome: string; target: string | null; detail: unknown }[]> {
  return server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.type, auditEvent.type))
}

let alice: SignedUp
let orgId: string
let teamId: string

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
  issuer = server.base
  alice = await verifiedSignUp(server, { name: 'Alice Doe', password: PASSWORD, username: undefined })
  const db = server.gatehouse.ctx.db
  const now = new Date(server.clock.now())
  orgId = 'org_acme'
  teamId = 'team_devs'
  await db.insert(organization).values({ id: orgId, name: 'Acme', slug: 'acme', createdAt: now })
  await db.insert(team).values({ id: teamId, name: 'Developers', organizationId: orgId, createdAt: now })
  await db.insert(member).values({ id: 'm1', organizationId: orgId, userId: alice.user.id, role: 'admin', createdAt: now })
  await db.insert(teamMember).values({ id: 'tm1', teamId, userId: alice.user.id, createdAt: now })
})

afterAll(async () => {
  await server?.close()
})

describe('discovery', () => {
  it('answers at the base path with the issuer, endpoints, PKCE S256 and RS256', async () => {
    const { client } = await newClient()
    const config = await discover(server, client.clientId, 'x')
    const meta = config.serverMetadata()
    expect(meta.issuer).toBe(server.base)
    expect(meta.authorization_endpoint).toBe(`${server.base}/oauth2/authorize`)
    expect(meta.token_endpoint).toBe(`${server.base}/oauth2/token`)
    expect(meta.userinfo_endpoint).toBe(`${server.base}/oauth2/userinfo`)
    expect(meta.jwks_uri).toBe(`${server.base}/oauth2/jwks`)
    expect(meta.revocation_endpoint).toBe(`${server.base}/oauth2/revoke`)
    expect(meta.introspection_endpoint).toBe(`${server.base}/oauth2/introspect`)
    expect(meta.end_session_endpoint).toBe(`${server.base}/oauth2/endsession`)
    expect(meta.code_challenge_methods_supported).toEqual(['S256'])
    expect(meta.id_token_signing_alg_values_supported).toContain('RS256')
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']))
    expect(meta.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post', 'none']),
    )
    expect(meta.claims_supported).toEqual(
      expect.arrayContaining(['sub', 'email', 'email_verified', 'name', 'picture', 'preferred_username', 'groups']),
    )
    const asMeta = await fetch(`${server.base}/.well-known/oauth-authorization-server`)
    expect(asMeta.status).toBe(200)
    expect(((await asMeta.json()) as { issuer: string }).issuer).toBe(server.base)
    const jwks = (await (await fetch(`${server.base}/oauth2/jwks`)).json()) as { keys: { alg: string; kid: string; d?: string }[] }
    expect(jwks.keys.some((k) => k.alg === 'RS256')).toBe(true)
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true)
  })

  it('is not there while oidcProvider.enabled is off', async () => {
    const off = await startTestServer()
    try {
      const res = await fetch(`${off.base}/.well-known/openid-configuration`)
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ code: 'NOT_FOUND', message: 'Not Found' })
    } finally {
      await off.close()
    }
  })
})

describe('authorization code + PKCE', () => {
  it('signs in through the Gatehouse session, asks consent, issues verified tokens, userinfo, refresh with rotation, revocation', async () => {
    const { client, clientSecret } = await newClient()
    const config = await discover(server, client.clientId, clientSecret as string)
    oidc.enableNonRepudiationChecks(config)

    // No Gatehouse session: the interaction sends the browser to the hosted sign-in page.
    const anonymous = new CookieJar()
    const flow0 = await startFlow(config)
    const signIn = await browse(server, anonymous, flow0.url.href)
    expect(signIn.pathname).toBe('/api/auth/ui/sign-in')
    const returnTo = signIn.searchParams.get('returnTo') as string
    expect(returnTo).toMatch(new RegExp(`^${server.base}/oidc/interaction/[A-Za-z0-9_-]+$`))

    const jar = await signedInJar(server, alice)
    const flow = await startFlow(config)
    const callback = await authorize(jar, flow)
    expect(callback.origin + callback.pathname).toBe(CALLBACK)
    expect(callback.searchParams.get('code')).toBeTruthy()

    const tokens = await exchange(flow, callback)
    expect(tokens.token_type.toLowerCase()).toBe('bearer')
    expect(tokens.refresh_token).toBeTruthy()
    const claims = tokens.claims() as Record<string, unknown>
    expect(claims.iss).toBe(server.base)
    expect(claims.aud).toBe(client.clientId)
    expect(claims.sub).toBe(alice.user.id)
    expect(claims.email).toBe(alice.email)
    expect(claims.email_verified).toBe(true) // only verified people get tokens (identity.requireVerifiedEmail)
    expect(claims.name).toBe('Alice Doe')
    expect(claims.preferred_username).toBe(alice.email)
    expect(claims.groups).toEqual(['user', 'acme', 'acme:admin', 'acme/developers'])
    // The ID token verifies against the published JWKS, signed RS256.
    const idToken = tokens.id_token as string
    expect(decodeProtectedHeader(idToken).alg).toBe('RS256')
    const verified = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${server.base}/oauth2/jwks`)), {
      issuer: server.base,
      audience: client.clientId,
    })
    expect(verified.payload.sub).toBe(alice.user.id)

    const info = await oidc.fetchUserInfo(config, tokens.access_token, alice.user.id)
    expect(info).toMatchObject({
      sub: alice.user.id,
      email: alice.email,
      name: 'Alice Doe',
      groups: ['user', 'acme', 'acme:admin', 'acme/developers'],
    })

    // A second sign-in is SSO and consent is remembered: authorize goes straight to the callback.
    const flow2 = await startFlow(config, 'openid email', { prompt: '' })
    flow2.url.searchParams.delete('prompt')
    const again = await browse(server, jar, flow2.url.href)
    expect(again.origin + again.pathname).toBe(CALLBACK)
    const tokens2 = await exchange(flow2, again)
    const introspect = async (token: string) => (await oidc.tokenIntrospection(config, token)).active
    expect(await introspect(tokens2.access_token)).toBe(true)

    // Refresh rotates the refresh token; the old one, used again, is refused and kills the grant.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string)
    expect(refreshed.refresh_token).toBeTruthy()
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    const reuse = await oidc.refreshTokenGrant(config, tokens.refresh_token as string).catch((e: unknown) => e)
    expect(reuse).toBeInstanceOf(oidc.ResponseBodyError)
    expect((reuse as oidc.ResponseBodyError).error).toBe('invalid_grant')
    expect((reuse as oidc.ResponseBodyError).status).toBe(400)
    const afterReuse = await oidc.refreshTokenGrant(config, refreshed.refresh_token as string).catch((e: unknown) => e)
    expect((afterReuse as oidc.ResponseBodyError).error).toBe('invalid_grant')
    // …and every token of that grant: the access token from the SSO sign-in is dead too.
    expect(await introspect(tokens2.access_token)).toBe(false)

    // Revocation (RFC 7009) of an access token.
    const flow3 = await startFlow(config, 'openid')
    const tokens3 = await exchange(flow3, await authorize(jar, flow3))
    expect(await introspect(tokens3.access_token)).toBe(true)
    await oidc.tokenRevocation(config, tokens3.access_token)
    expect(await introspect(tokens3.access_token)).toBe(false)

    const audit = await auditTypes()
    expect(audit.filter((a) => a.type === 'oidc.token-issued' && a.target === client.clientId).length).toBeGreaterThanOrEqual(3)
    expect(audit.some((a) => a.type === 'oidc.token-refused' && a.outcome === 'failure')).toBe(true)
    expect(audit.some((a) => a.type === 'oidc.consent-granted' && a.target === client.clientId)).toBe(true)
  })
})

describe('group names (issue 47 §3: names no one can claim)', () => {
  it('the groups claim (ID token and userinfo) names a team by its slug, so no team name can carry a separator (`,` `;` space)', async () => {
    const tess = await verifiedSignUp(server, { name: 'Tess Teams', password: PASSWORD })
    await joinTeamsNamed(tess.client, tess.user.id, { name: 'Commas', slug: 'commas-oidc' }, SEPARATOR_TEAM_NAMES)
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const flow = await startFlow(config, 'openid groups')
    flow.url.searchParams.delete('prompt')
    const tokens = await exchange(flow, await authorize(await signedInJar(server, tess), flow))
    // '!!!' has no letter or digit: no group. Team groups sorted by name (the one group rule, as Remote-Groups).
    const expected = [
      'user',
      'commas-oidc',
      'commas-oidc:owner',
      'commas-oidc/a-admin',
      'commas-oidc/commas',
      'commas-oidc/equipe-ete',
      'commas-oidc/release-ops',
      'commas-oidc/x-admin',
    ]
    const groups = tokens.claims()?.groups as string[]
    expect(groups).toEqual(expected)
    expect(groups.every(noSeparator)).toBe(true)
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tess.user.id)
    expect(info.groups).toEqual(expected)
  })
})

describe('preferred_username (issue 51 §2: one login name on every face)', () => {
  it('is the login name LDAP, SAML and forward auth give (loginNameOf): the username in lower case, else the email', async () => {
    const tag = Date.now().toString(36)
    const pat = await verifiedSignUp(server, { name: 'Pat Name', password: PASSWORD, username: `Pat.${tag}` })
    // A username stored with capitals (a better-auth database imported as it was): lower case, as LDAP's uid.
    await server.gatehouse.ctx.db
      .update(user)
      .set({ username: `Mixed.${tag}` })
      .where(eq(user.id, pat.user.id))
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const flow = await startFlow(config, 'openid profile')
    flow.url.searchParams.delete('prompt')
    const tokens = await exchange(flow, await authorize(await signedInJar(server, pat), flow))
    expect(tokens.claims()?.preferred_username).toBe(`mixed.${tag}`)
    const info = await oidc.fetchUserInfo(config, tokens.access_token, pat.user.id)
    expect(info.preferred_username).toBe(`mixed.${tag}`)
  })
})

describe('refusals (RFC 6749, OIDC Core)', () => {
  it('an unregistered redirect URI is never redirected to: the error page says invalid_redirect_uri', async () => {
    const { client } = await newClient({ public: true })
    const config = await discover(server, client.clientId)
    const flow = await startFlow(config, 'openid', { redirect_uri: 'https://evil.example/callback' })
    const res = await fetch(flow.url, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const at = new URL(res.headers.get('location') as string)
    expect(at.origin + at.pathname).toBe(`${server.base}/ui/error`)
    expect(at.searchParams.get('error')).toBe('invalid_redirect_uri')
    const audit = await auditTypes()
    expect(audit.some((a) => a.type === 'oidc.authorization-refused' && a.target === client.clientId)).toBe(true)
  })

  it('a public client must use PKCE; a confidential one may be allowed without it', async () => {
    const pub = await newClient({ public: true })
    const pubConfig = await discover(server, pub.client.clientId)
    const url = oidc.buildAuthorizationUrl(pubConfig, { redirect_uri: CALLBACK, scope: 'openid', state: 's1' })
    const jar = await signedInJar(server, alice)
    const back = await browse(server, jar, url.href)
    expect(back.origin + back.pathname).toBe(CALLBACK)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('error_description')).toBe('Authorization Server policy requires PKCE to be used for this request')

    const gitea = await newClient({ pkceRequired: false, skipConsent: true })
    const config = await discover(server, gitea.client.clientId, gitea.clientSecret as string)
    const state = oidc.randomState()
    const plain = oidc.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid email', state })
    const callback = await browse(server, jar, plain.href)
    expect(callback.searchParams.get('code')).toBeTruthy()
    const tokens = await oidc.authorizationCodeGrant(config, callback, { expectedState: state })
    expect(tokens.claims()?.sub).toBe(alice.user.id)
  })

  it('a reused code is refused and the tokens issued from it are revoked', async () => {
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const jar = await signedInJar(server, alice)
    const flow = await startFlow(config, 'openid', { prompt: 'login' })
    flow.url.searchParams.delete('prompt')
    const callback = await authorize(jar, flow)
    const tokens = await exchange(flow, callback)
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true)
    const again = await exchange(flow, callback).catch((e: unknown) => e)
    expect(again).toBeInstanceOf(oidc.ResponseBodyError)
    expect((again as oidc.ResponseBodyError).error).toBe('invalid_grant')
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false)
  })

  it('a PKCE verifier that does not match is refused', async () => {
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const jar = await signedInJar(server, alice)
    const flow = await startFlow(config, 'openid')
    flow.url.searchParams.delete('prompt')
    const callback = await authorize(jar, flow)
    const wrong = await oidc
      .authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      })
      .catch((e: unknown) => e)
    expect((wrong as oidc.ResponseBodyError).error).toBe('invalid_grant')
    expect((wrong as oidc.ResponseBodyError).status).toBe(400)
  })

  it('a wrong client secret is refused with invalid_client (401), by Basic and by POST', async () => {
    const { client, clientSecret } = await newClient()
    const token = `${server.base}/oauth2/token`
    const form = 'content-type'
    const wrongBasic = await fetch(token, {
      method: 'POST',
      headers: {
        [form]: 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.clientId}:not-the-secret`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    })
    expect(wrongBasic.status).toBe(401)
    expect(await wrongBasic.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
    const wrongPost = await fetch(token, {
      method: 'POST',
      headers: { [form]: 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: 'not-the-secret',
      }).toString(),
    })
    expect(wrongPost.status).toBe(401)
    expect(await wrongPost.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
    // The stored hash itself is not a secret that works.
    const stored = (await server.gatehouse.ctx.db.select().from(oidcClient).where(eq(oidcClient.clientId, client.clientId)))[0]
    expect(stored?.secretHash).toMatch(/^sha256:/)
    expect(stored?.secretHash).not.toContain(clientSecret as string)
    const withHash = await fetch(token, {
      method: 'POST',
      headers: { [form]: 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: stored?.secretHash as string,
      }).toString(),
    })
    expect(withHash.status).toBe(401)
    // The right one works both ways (client credentials for services).
    for (const auth of [oidc.ClientSecretBasic(clientSecret as string), oidc.ClientSecretPost(clientSecret as string)]) {
      const config = await discover(server, client.clientId, clientSecret as string, auth)
      const tokens = await oidc.clientCredentialsGrant(config, {})
      expect(tokens.access_token).toBeTruthy()
      expect(tokens.token_type.toLowerCase()).toBe('bearer')
      expect(tokens.refresh_token).toBeUndefined()
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true)
    }
    const audit = await auditTypes()
    expect(
      audit.some(
        (a) =>
          a.type === 'oidc.token-refused' && a.target === client.clientId && (a.detail as { error: string }).error === 'invalid_client',
      ),
    ).toBe(true)
    expect(
      audit.some(
        (a) =>
          a.type === 'oidc.token-issued' &&
          a.target === client.clientId &&
          (a.detail as { grantType: string }).grantType === 'client_credentials',
      ),
    ).toBe(true)
  })

  it('a user outside the client’s allowed organizations or teams is sent back with access_denied', async () => {
    const bob = await verifiedSignUp(server, { name: 'Bob', password: PASSWORD })
    const { client, clientSecret } = await newClient({ allowedTeams: [teamId], skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const flow = await startFlow(config, 'openid')
    flow.url.searchParams.delete('prompt')
    const back = await authorize(await signedInJar(server, bob), flow)
    expect(back.origin + back.pathname).toBe(CALLBACK)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('error_description')).toBe('The account is not allowed to use this application')
    // A team member gets in.
    const ok = await startFlow(config, 'openid')
    ok.url.searchParams.delete('prompt')
    const code = await authorize(await signedInJar(server, alice), ok)
    expect(code.searchParams.get('code')).toBeTruthy()
    const audit = await auditTypes()
    expect(audit.some((a) => a.type === 'oidc.access-denied' && a.target === client.clientId)).toBe(true)
  })

  it('a consent POST from another origin, or with no Origin and a Referer that is no URL, is refused (403), never a 500', async () => {
    const bob = await verifiedSignUp(server, { name: 'Bob', password: PASSWORD })
    const { client, clientSecret } = await newClient()
    const config = await discover(server, client.clientId, clientSecret as string)
    const jar = await signedInJar(server, bob)
    const at = await browse(server, jar, (await startFlow(config, 'openid')).url.href)
    expect(at.pathname).toBe('/api/auth/ui/consent')
    const uid = at.searchParams.get('interaction') as string
    const post = (headers: Record<string, string>) =>
      fetch(`${server.base}/oidc/interaction/${uid}/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: jar.header(), ...headers },
        body: '{}',
      })
    const refused: Record<string, string>[] = [
      { referer: 'not a url' },
      { referer: 'https://evil.example/consent' },
      { origin: 'https://evil.example' },
      {},
    ]
    for (const headers of refused) expect((await post(headers)).status, JSON.stringify(headers)).toBe(403)
    // The same request from the hosted page's origin (by Referer alone) is taken.
    expect((await post({ referer: `${server.base}/ui/consent` })).status).toBe(200)
  })

  it('an expired code is refused (the adapter reads expiry from Gatehouse’s clock)', async () => {
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const flow = await startFlow(config, 'openid')
    flow.url.searchParams.delete('prompt')
    const callback = await authorize(await signedInJar(server, alice), flow)
    server.clock.advanceSeconds(61)
    const late = await exchange(flow, callback).catch((e: unknown) => e)
    expect((late as oidc.ResponseBodyError).error).toBe('invalid_grant')
  })

  it('a banned user cannot sign in to a client nor refresh; a deleted one cannot refresh', async () => {
    const carol = await verifiedSignUp(server, { name: 'Carol', password: PASSWORD })
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const jar = await signedInJar(server, carol)
    const flow = await startFlow(config, 'openid offline_access')
    flow.url.searchParams.set('prompt', 'consent')
    const tokens = await exchange(flow, await authorize(jar, flow))
    expect(tokens.refresh_token).toBeTruthy()
    await server.gatehouse.ctx.db.update(user).set({ banned: true }).where(eq(user.id, carol.user.id))
    const refused = await oidc.refreshTokenGrant(config, tokens.refresh_token as string).catch((e: unknown) => e)
    expect((refused as oidc.ResponseBodyError).error).toBe('invalid_grant')
    const flow2 = await startFlow(config, 'openid')
    flow2.url.searchParams.delete('prompt')
    const back = await authorize(jar, flow2)
    expect(back.searchParams.get('error')).toBe('access_denied')

    const dave = await verifiedSignUp(server, { name: 'Dave', password: PASSWORD })
    const daveFlow = await startFlow(config, 'openid offline_access')
    daveFlow.url.searchParams.set('prompt', 'consent')
    const daveTokens = await exchange(daveFlow, await authorize(await signedInJar(server, dave), daveFlow))
    await server.gatehouse.ctx.db.delete(user).where(eq(user.id, dave.user.id))
    const gone = await oidc.refreshTokenGrant(config, daveTokens.refresh_token as string).catch((e: unknown) => e)
    expect((gone as oidc.ResponseBodyError).error).toBe('invalid_grant')
  })
})

describe('the admission rule of every face (core/admission.ts, identity.requireVerifiedEmail)', () => {
  it('an unverified person is sent to the hosted verify-email page before consent and gets no tokens; verified, the flow goes on', async () => {
    const una = await signUp(server.base, { name: 'Una', password: PASSWORD })
    const { client, clientSecret } = await newClient()
    const config = await discover(server, client.clientId, clientSecret as string)
    const jar = await signedInJar(server, una)
    const flow = await startFlow(config, 'openid email')
    const at = await browse(server, jar, flow.url.href)
    expect(at.pathname).toBe('/api/auth/ui/verify-email')
    const back = new URL(at.searchParams.get('returnTo') as string)
    expect(back.pathname).toMatch(/^\/api\/auth\/oidc\/interaction\/[^/]+$/)
    // Coming back unverified: the same page again, never the consent page.
    expect((await browse(server, jar, back.href)).pathname).toBe('/api/auth/ui/verify-email')
    expect((await auditTypes()).some((a) => a.type === 'oidc.consent-granted' && a.target === client.clientId)).toBe(false)

    await markVerified(server, una.user.id)
    let next = await browse(server, jar, back.href)
    expect(next.pathname).toBe('/api/auth/ui/consent')
    next = await consent(jar, next)
    const tokens = await exchange(flow, next)
    expect(tokens.claims()?.sub).toBe(una.user.id)
    expect(tokens.claims()?.email_verified).toBe(true)
  })

  it('tokens issued before the person lost admission stop refreshing (the same rule at the token endpoint)', async () => {
    const vera = await verifiedSignUp(server, { name: 'Vera', password: PASSWORD })
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const flow = await startFlow(config, 'openid offline_access')
    flow.url.searchParams.set('prompt', 'consent')
    const tokens = await exchange(flow, await authorize(await signedInJar(server, vera), flow))
    await server.gatehouse.ctx.db.update(user).set({ emailVerified: false }).where(eq(user.id, vera.user.id))
    const refused = await oidc.refreshTokenGrant(config, tokens.refresh_token as string).catch((e: unknown) => e)
    expect((refused as oidc.ResponseBodyError).error).toBe('invalid_grant')
  })
})

describe('introspection (RFC 7662)', () => {
  it('a client introspects only its own tokens; a foreign token is active:false unless the caller is a resource server', async () => {
    const app = await newClient()
    const appConfig = await discover(server, app.client.clientId, app.clientSecret as string)
    const token = (await oidc.clientCredentialsGrant(appConfig, {})).access_token
    expect((await oidc.tokenIntrospection(appConfig, token)).active).toBe(true)

    const nosy = await newClient()
    const nosyConfig = await discover(server, nosy.client.clientId, nosy.clientSecret as string)
    expect(await oidc.tokenIntrospection(nosyConfig, token)).toEqual({ active: false })

    const api = await newClient({ resourceServer: true })
    const apiConfig = await discover(server, api.client.clientId, api.clientSecret as string)
    const seen = await oidc.tokenIntrospection(apiConfig, token)
    expect(seen.active).toBe(true)
    expect(seen.client_id).toBe(app.client.clientId)

    // A user's token too, and the switch is live (changed in the panel or CLI, read at each request).
    const jar = await signedInJar(server, alice)
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const flow = await startFlow(config, 'openid')
    flow.url.searchParams.delete('prompt')
    const tokens = await exchange(flow, await authorize(jar, flow))
    expect(await oidc.tokenIntrospection(nosyConfig, tokens.access_token)).toEqual({ active: false })
    expect((await oidc.tokenIntrospection(apiConfig, tokens.access_token)).sub).toBe(alice.user.id)
    await changeClient(server.gatehouse.ctx, api.client.clientId, { resourceServer: false }, { via: 'cli' })
    expect(await oidc.tokenIntrospection(apiConfig, tokens.access_token)).toEqual({ active: false })
  })
})

describe('ID token signing algorithm per client', () => {
  it.each(['RS256', 'ES256', 'EdDSA'] as const)('%s: the ID token verifies with jose against the JWKS', async (alg) => {
    const { client, clientSecret } = await newClient({ skipConsent: true, idTokenSignedResponseAlg: alg })
    const config = await oidc.discovery(
      new URL(issuer),
      client.clientId,
      { client_secret: clientSecret as string, id_token_signed_response_alg: alg },
      oidc.ClientSecretBasic(clientSecret as string),
      insecure,
    )
    expect(config.serverMetadata().id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['RS256', 'ES256', 'EdDSA']))
    const flow = await startFlow(config, 'openid email')
    flow.url.searchParams.delete('prompt')
    const tokens = await exchange(flow, await authorize(await signedInJar(server, alice), flow))
    const idToken = tokens.id_token as string
    expect(decodeProtectedHeader(idToken).alg).toBe(alg)
    const { payload, protectedHeader } = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${server.base}/oauth2/jwks`)), {
      issuer: server.base,
      audience: client.clientId,
      algorithms: [alg],
    })
    expect(protectedHeader.alg).toBe(alg)
    expect(payload.sub).toBe(alice.user.id)
    expect(payload.email).toBe(alice.email)
  })
})

describe('remembered consent', () => {
  it('is asked once per user and client across sessions and browsers, again for more scopes and after revoke; remembered offline_access yields an offline refresh token', async () => {
    const erin = await verifiedSignUp(server, { name: 'Erin', password: PASSWORD })
    const { client, clientSecret } = await newClient()
    const config = await discover(server, client.clientId, clientSecret as string)
    const plain = async (jar: CookieJar, scope: string) => {
      const flow = await startFlow(config, scope)
      flow.url.searchParams.delete('prompt')
      return { flow, at: await browse(server, jar, flow.url.href) }
    }
    const atCallback = (at: URL) => expect(at.origin + at.pathname).toBe(CALLBACK)

    // First time: the consent page.
    const first = await plain(await signedInJar(server, erin), 'openid email')
    expect(first.at.pathname).toBe('/api/auth/ui/consent')
    const jar1 = await signedInJar(server, erin)
    const f1 = await plain(jar1, 'openid email')
    atCallback(await consent(jar1, f1.at))

    // Another browser (a new Gatehouse session, no OIDC session cookie): not asked again.
    const jar2 = await signedInJar(server, erin)
    const f2 = await plain(jar2, 'openid email')
    atCallback(f2.at)
    expect((await exchange(f2.flow, f2.at)).claims()?.email).toBe(erin.email)

    // Asking for more (profile): asked again, then remembered too.
    const f3 = await plain(await signedInJar(server, erin), 'openid email profile')
    expect(f3.at.pathname).toBe('/api/auth/ui/consent')
    const jar3 = await signedInJar(server, erin)
    const f3b = await plain(jar3, 'openid email profile')
    atCallback(await consent(jar3, f3b.at))
    atCallback((await plain(await signedInJar(server, erin), 'openid profile')).at)

    // offline_access granted once (with prompt=consent, as OIDC Core asks)…
    const jar4 = await signedInJar(server, erin)
    const f4 = await startFlow(config, 'openid offline_access')
    atCallback(await authorize(jar4, f4))
    // …is remembered: a later request without prompt=consent gets a refresh token that outlives the session.
    const jar5 = await signedInJar(server, erin)
    const f5 = await plain(jar5, 'openid email offline_access')
    atCallback(f5.at)
    const offline = await exchange(f5.flow, f5.at)
    expect(offline.refresh_token).toBeTruthy()
    expect(offline.scope?.split(' ')).toContain('offline_access')
    const out = await fetch(`${server.base}/sign-out`, {
      method: 'POST',
      headers: { origin: server.origin, cookie: jar5.header(), 'content-type': 'application/json' },
      body: '{}',
    })
    expect(out.status).toBe(200)
    const refreshed = await oidc.refreshTokenGrant(config, offline.refresh_token as string)
    expect(refreshed.access_token).toBeTruthy()

    const apps = await connectedApps(server.gatehouse.ctx, erin.user.id)
    expect(apps).toHaveLength(1)
    expect(apps[0]).toMatchObject({ clientId: client.clientId, name: 'Test RP' })
    expect([...(apps[0]?.scopes ?? [])].sort()).toEqual(['email', 'offline_access', 'openid', 'profile'])

    // Revoked: the grant's tokens stop at once, and the next sign-in asks again.
    await revokeConsent(server.gatehouse.ctx, erin.user.id, client.clientId, { via: 'panel', actorUserId: null })
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false)
    const dead = await oidc.refreshTokenGrant(config, refreshed.refresh_token as string).catch((e: unknown) => e)
    expect((dead as oidc.ResponseBodyError).error).toBe('invalid_grant')
    expect(await connectedApps(server.gatehouse.ctx, erin.user.id)).toEqual([])
    expect((await plain(jar2, 'openid email')).at.pathname).toBe('/api/auth/ui/consent')
    expect((await auditTypes()).some((a) => a.type === 'oidc.consent-revoked' && a.target === client.clientId)).toBe(true)
  })

  it('a remembered consent never widens silently (also when its grant is gone) and is never used for another client', async () => {
    const fay = await verifiedSignUp(server, { name: 'Fay', password: PASSWORD })
    const ctx = server.gatehouse.ctx
    const first = await newClient()
    const other = await newClient()
    const configFirst = await discover(server, first.client.clientId, first.clientSecret as string)
    const configOther = await discover(server, other.client.clientId, other.clientSecret as string)
    const plain = async (config: oidc.Configuration, scope: string) => {
      const jar = await signedInJar(server, fay)
      const flow = await startFlow(config, scope)
      flow.url.searchParams.delete('prompt')
      return { jar, at: await browse(server, jar, flow.url.href) }
    }
    const granted = await plain(configFirst, 'openid email')
    expect(granted.at.pathname).toBe('/api/auth/ui/consent')
    expect((await consent(granted.jar, granted.at)).pathname).toBe(new URL(CALLBACK).pathname)
    // The consent itself: this client, exactly what was granted; none for the other client.
    const remembered = await rememberedConsent(ctx, fay.user.id, first.client.clientId)
    expect([...(remembered?.scopes ?? [])].sort()).toEqual(['email', 'openid'])
    expect(await rememberedConsent(ctx, fay.user.id, other.client.clientId)).toBeUndefined()

    // Another client asking for the very same scopes is asked, and nothing is remembered for it.
    expect((await plain(configOther, 'openid email')).at.pathname).toBe('/api/auth/ui/consent')
    expect(await rememberedConsent(ctx, fay.user.id, other.client.clientId)).toBeUndefined()

    // The grant behind the remembered consent is gone (expired or removed): a request within the
    // consent is not asked, one beyond it is, and the recreated grant holds no more than the consent.
    await ctx.db.delete(oidcModel).where(and(eq(oidcModel.kind, 'Grant'), eq(oidcModel.id, remembered?.grantId as string)))
    expect((await plain(configFirst, 'openid profile')).at.pathname).toBe('/api/auth/ui/consent')
    const within = await plain(configFirst, 'openid email')
    expect(within.at.origin + within.at.pathname).toBe(CALLBACK)
    const after = await rememberedConsent(ctx, fay.user.id, first.client.clientId)
    expect([...(after?.scopes ?? [])].sort()).toEqual(['email', 'openid'])
    const recreated = await ctx.db
      .select()
      .from(oidcModel)
      .where(and(eq(oidcModel.kind, 'Grant'), eq(oidcModel.id, after?.grantId as string)))
    expect(
      JSON.parse(recreated[0]?.payload as string)
        .openid.scope.split(' ')
        .sort(),
    ).toEqual(['email', 'openid'])
  })
})

describe('sessions', () => {
  it('signing out of Gatehouse ends the OIDC session; end-session goes through the hosted sign-out page', async () => {
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const jar = await signedInJar(server, alice)
    const flow = await startFlow(config, 'openid')
    flow.url.searchParams.delete('prompt')
    const tokens = await exchange(flow, await authorize(jar, flow))

    // RP-initiated logout: the confirmation is the hosted sign-out page, which signs out of
    // Gatehouse and then posts the form oidc-provider asked for.
    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: `${RP}/signed-out`,
      state: 'bye',
    })
    const page = await browse(server, jar, endSession.href)
    expect(page.pathname).toBe('/api/auth/ui/sign-out')
    const action = page.searchParams.get('action') as string
    const xsrf = page.searchParams.get('xsrf') as string
    expect(action).toBe(`${server.base}/oauth2/endsession/confirm`)
    const signOut = await fetch(`${server.base}/sign-out`, {
      method: 'POST',
      headers: { origin: server.origin, cookie: jar.header(), 'content-type': 'application/json' },
      body: '{}',
    })
    expect(signOut.status).toBe(200)
    jar.store(signOut)
    const done = await browse(server, jar, action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.origin },
      body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
    })
    expect(done.href).toBe(`${RP}/signed-out?state=bye`)
    expect((await auditTypes()).some((a) => a.type === 'oidc.signed-out' && a.target === client.clientId)).toBe(true)

    // Signed out of Gatehouse only (no end-session call): the next authorize asks to sign in.
    const jar2 = await signedInJar(server, alice)
    const f2 = await startFlow(config, 'openid')
    f2.url.searchParams.delete('prompt')
    const sessionTokens = await exchange(f2, await authorize(jar2, f2))
    // Without offline_access the refresh token lives as long as the session.
    const stillIn = await oidc.refreshTokenGrant(config, sessionTokens.refresh_token as string)
    expect(stillIn.refresh_token).toBeTruthy()
    const out = await fetch(`${server.base}/sign-out`, {
      method: 'POST',
      headers: { origin: server.origin, cookie: jar2.header(), 'content-type': 'application/json' },
      body: '{}',
    })
    expect(out.status).toBe(200)
    jar2.store(out)
    const f3 = await startFlow(config, 'openid')
    f3.url.searchParams.delete('prompt')
    const at = await authorize(jar2, f3)
    expect(at.pathname).toBe('/api/auth/ui/sign-in')
    // …and the tokens bound to that session can no longer be refreshed.
    const after = await oidc.refreshTokenGrant(config, stillIn.refresh_token as string).catch((e: unknown) => e)
    expect((after as oidc.ResponseBodyError).error).toBe('invalid_grant')
  })

  it('after a key rotation, an ID token signed by the retired key still works as id_token_hint until the key leaves the JWKS', async () => {
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const jar = await signedInJar(server, alice)
    const flow = await startFlow(config, 'openid')
    flow.url.searchParams.delete('prompt')
    const tokens = await exchange(flow, await authorize(jar, flow))
    const oldKid = decodeProtectedHeader(tokens.id_token as string).kid as string
    const rotated = await rotateSigningKey(server.gatehouse.ctx, { via: 'cli' })
    expect(rotated.retired).toContain(oldKid)
    // The retired key is still published, and it verifies the hint: logout reaches the sign-out page.
    const jwks = (await (await fetch(`${server.base}/oauth2/jwks`)).json()) as { keys: { kid: string }[] }
    expect(jwks.keys.map((k) => k.kid)).toContain(oldKid)
    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: `${RP}/signed-out`,
      state: 'rotated',
    })
    const page = await browse(server, jar, endSession.href)
    expect(page.pathname).toBe('/api/auth/ui/sign-out')
    const action = page.searchParams.get('action') as string
    const xsrf = page.searchParams.get('xsrf') as string
    const done = await browse(server, jar, action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.origin },
      body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
    })
    expect(done.href).toBe(`${RP}/signed-out?state=rotated`)
    // New ID tokens are signed by a live key, never by the retired one.
    const flow2 = await startFlow(config, 'openid')
    flow2.url.searchParams.delete('prompt')
    const tokens2 = await exchange(flow2, await authorize(await signedInJar(server, alice), flow2))
    const newKid = decodeProtectedHeader(tokens2.id_token as string).kid
    expect(newKid).not.toBe(oldKid)
    // Once the grace period is over the key leaves the JWKS, and a hint it signed is refused.
    server.clock.advanceSeconds(server.gatehouse.ctx.config().jwt.jwks.gracePeriod + 60)
    const after = (await (await fetch(`${server.base}/oauth2/jwks`)).json()) as { keys: { kid: string }[] }
    expect(after.keys.map((k) => k.kid)).not.toContain(oldKid)
    const stale = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: `${RP}/signed-out`,
    })
    const refused = await fetch(stale.href, { redirect: 'manual' })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({ error: 'invalid_request', error_description: 'could not validate id_token_hint' })
  })

  it('groups follow groups.*, live', async () => {
    server.gatehouse.config.update({ groups: { memberRoles: false, teams: false } })
    try {
      const { client, clientSecret } = await newClient({ skipConsent: true })
      const config = await discover(server, client.clientId, clientSecret as string)
      const flow = await startFlow(config, 'openid groups')
      flow.url.searchParams.delete('prompt')
      const tokens = await exchange(flow, await authorize(await signedInJar(server, alice), flow))
      expect(tokens.claims()?.groups).toEqual(['user', 'acme'])
      expect(tokens.claims()?.email).toBeUndefined()
    } finally {
      server.gatehouse.config.update({ groups: null })
    }
  })

  it('the deprecated oidcProvider.groups still applies, as groups.* (userRole → roles, roles → memberRoles)', async () => {
    server.gatehouse.config.update({ oidcProvider: { groups: { roles: false, teams: false, userRole: false } } })
    try {
      const { client, clientSecret } = await newClient({ skipConsent: true })
      const config = await discover(server, client.clientId, clientSecret as string)
      const flow = await startFlow(config, 'openid groups')
      flow.url.searchParams.delete('prompt')
      const tokens = await exchange(flow, await authorize(await signedInJar(server, alice), flow))
      expect(tokens.claims()?.groups).toEqual(['acme'])
    } finally {
      server.gatehouse.config.update({ oidcProvider: { groups: null } })
    }
  })
})

describe('token requests: rotation, reuse and audit under concurrency', () => {
  const tokenRequest = (basic: string, body: string) =>
    fetch(`${server.base}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    })

  async function offlineGrant() {
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const config = await discover(server, client.clientId, clientSecret as string)
    const flow = await startFlow(config, 'openid offline_access')
    const tokens = await exchange(flow, await authorize(await signedInJar(server, alice), flow))
    const basic = `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`
    return { clientId: client.clientId, basic, config, refreshToken: tokens.refresh_token as string }
  }

  const issuedTo = async (clientId: string, grantType: string) =>
    (await auditTypes()).filter(
      (a) => a.type === 'oidc.token-issued' && a.target === clientId && (a.detail as { grantType?: string }).grantType === grantType,
    ).length

  it('each rotating refresh has its audit entry; the same refresh token sent five times at once is honoured once, then the grant is revoked', async () => {
    const grant = await offlineGrant()
    let token = grant.refreshToken
    for (let i = 0; i < 3; i++) {
      const res = await tokenRequest(grant.basic, `grant_type=refresh_token&refresh_token=${token}`)
      expect(res.status).toBe(200)
      const body = (await res.json()) as { refresh_token: string; access_token: string; id_token: string }
      expect(body.refresh_token).not.toBe(token)
      expect(body.id_token).toBeTruthy()
      token = body.refresh_token
    }
    expect(await issuedTo(grant.clientId, 'refresh_token')).toBe(3)

    // Five requests with one token, sent together: exactly one may rotate it.
    const answers = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const res = await tokenRequest(grant.basic, `grant_type=refresh_token&refresh_token=${token}`)
        return { status: res.status, body: (await res.json()) as { refresh_token?: string; access_token?: string; error?: string } }
      }),
    )
    const honoured = answers.filter((a) => a.status === 200)
    expect(honoured).toHaveLength(1)
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status).toBe(400)
      expect(refused.body.error).toBe('invalid_grant')
    }
    // The refresh token was presented again: the whole grant is revoked, the answered one included.
    const after = await tokenRequest(grant.basic, `grant_type=refresh_token&refresh_token=${honoured[0]?.body.refresh_token}`)
    expect(after.status).toBe(400)
    expect(((await after.json()) as { error: string }).error).toBe('invalid_grant')
    expect((await oidc.tokenIntrospection(grant.config, honoured[0]?.body.access_token as string)).active).toBe(false)
    // One audit entry per token issued, one refusal per refused request.
    expect(await issuedTo(grant.clientId, 'refresh_token')).toBe(4)
    const refusals = (await auditTypes()).filter((a) => a.type === 'oidc.token-refused' && a.target === grant.clientId)
    expect(refusals.length).toBe(5)
  })

  it('client credentials: every token issued has its audit entry', async () => {
    const { client, clientSecret } = await newClient({ skipConsent: true })
    const basic = `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`
    const answers = await Promise.all(Array.from({ length: 6 }, () => tokenRequest(basic, 'grant_type=client_credentials')))
    const ok = answers.filter((r) => r.status === 200).length
    expect(ok).toBe(6)
    expect(await issuedTo(client.clientId, 'client_credentials')).toBe(6)
  })
})

describe('group commit of token requests', () => {
  it('batches handed over in one turn share a commit; one whose consume lost the race fails alone, the others are kept', async () => {
    const ctx = server.gatehouse.ctx
    const now = new Date(server.clock.now())
    const model = (id: string, grantId: string) => ({
      kind: 'RefreshToken',
      id,
      payload: JSON.stringify({ jti: id, grantId }),
      grantId,
      uid: null,
      userCode: null,
      gatehouseSessionId: null,
      consumedAt: null,
      expiresAt: new Date(now.getTime() + 60_000),
    })
    await upsertModel(ctx, model('group-rt-1', 'group-grant'))
    // Two requests read the same unconsumed refresh token and consume it; a third stores a new one.
    const first = new WriteBatch()
    first.read('RefreshToken', await findModel(ctx, 'RefreshToken', 'group-rt-1'))
    first.consume('RefreshToken', 'group-rt-1', now)
    first.upsert(model('group-rt-2', 'group-grant'))
    const second = new WriteBatch()
    second.read('RefreshToken', await findModel(ctx, 'RefreshToken', 'group-rt-1'))
    second.consume('RefreshToken', 'group-rt-1', now)
    second.upsert(model('group-rt-3', 'group-grant'))
    const third = new WriteBatch()
    third.upsert(model('group-rt-4', 'other-grant'))
    third.audits.push({ type: 'oidc.token-issued', target: 'group-test', detail: { grantType: 'client_credentials' } })

    const results = await Promise.allSettled([commitWithOthers(ctx, first), commitWithOthers(ctx, second), commitWithOthers(ctx, third)])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const failure = (results[1] as PromiseRejectedResult).reason
    expect(failure).toBeInstanceOf(ConsumedMeanwhile)
    expect((failure as ConsumedMeanwhile).grantId).toBe('group-grant')

    expect((await findModel(ctx, 'RefreshToken', 'group-rt-1'))?.consumedAt?.getTime()).toBe(now.getTime())
    expect(JSON.parse((await findModel(ctx, 'RefreshToken', 'group-rt-1'))?.payload ?? '{}').consumed).toBe(
      Math.floor(now.getTime() / 1000),
    )
    expect(await findModel(ctx, 'RefreshToken', 'group-rt-2')).toBeDefined()
    // Nothing of the request that lost is kept.
    expect(await findModel(ctx, 'RefreshToken', 'group-rt-3')).toBeUndefined()
    expect(await findModel(ctx, 'RefreshToken', 'group-rt-4')).toBeDefined()
    expect((await auditTypes()).filter((a) => a.target === 'group-test')).toHaveLength(1)
  })
})
