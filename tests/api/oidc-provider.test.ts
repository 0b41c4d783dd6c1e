import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eq } from 'drizzle-orm'
import { auditEvent, member, organization, team, teamMember, user } from '../../server/db/schema.js'
import { createClient } from '../../server/features/oidc-provider/clients.js'
import { CookieJar, signUp, type SignedUp } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

/**
 * Gatehouse as an OpenID provider, against panva's openid-client as the relying party, on the
 * real server over loopback. The browser's part (authorize → sign-in → consent → callback) is
 * played here by a cookie jar following redirects; tests/panel/oidc-browser.test.ts plays it in
 * Chromium.
 */

const RP = 'http://rp.example.test'
const CALLBACK = `${RP}/callback`
const PASSWORD = 'correct horse battery'

let server: TestServer
let issuer: string

const insecure = { execute: [oidc.allowInsecureRequests] }

async function discover(clientId: string, secret?: string, auth?: oidc.ClientAuth) {
  return oidc.discovery(new URL(issuer), clientId, secret, auth ?? (secret ? oidc.ClientSecretBasic(secret) : oidc.None()), insecure)
}

async function newClient(options: Partial<Parameters<typeof createClient>[1]> = {}) {
  return createClient(
    server.gatehouse.ctx,
    { name: 'Test RP', redirectUris: [CALLBACK], postLogoutRedirectUris: [`${RP}/signed-out`], ...options },
    { via: 'cli' },
  )
}

/** Follows redirects inside Gatehouse with the jar; stops at a hosted page (/ui/…) or a URL outside it. */
async function browse(jar: CookieJar, start: string, init: RequestInit = {}): Promise<URL> {
  let url = start
  let request = init
  for (let hop = 0; hop < 20; hop++) {
    const headers = new Headers(request.headers)
    const cookie = jar.header()
    if (cookie) headers.set('cookie', cookie)
    const res = await fetch(url, { ...request, headers, redirect: 'manual' })
    jar.store(res)
    await res.arrayBuffer()
    const location = res.headers.get('location')
    if (res.status < 300 || res.status >= 400 || !location) throw new Error(`no redirect from ${url}: ${res.status}`)
    const next = new URL(location, url)
    if (next.origin !== server.origin || next.pathname.startsWith('/api/auth/ui/')) return next
    url = next.href
    request = {}
  }
  throw new Error('too many redirects')
}

async function signedInJar(person: SignedUp): Promise<CookieJar> {
  const jar = new CookieJar()
  const res = await fetch(`${server.base}/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.origin },
    body: JSON.stringify({ email: person.email, password: PASSWORD }),
  })
  expect(res.status).toBe(200)
  jar.store(res)
  return jar
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
  return browse(jar, redirectTo)
}

interface Flow {
  config: oidc.Configuration
  verifier: string
  state: string
  nonce: string
  url: URL
}

async function startFlow(config: oidc.Configuration, scope = 'openid email profile groups offline_access', extra: Record<string, string> = {}): Promise<Flow> {
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
  let at = await browse(jar, flow.url.href)
  if (at.pathname === '/api/auth/ui/consent') at = await consent(jar, at)
  return at
}

const exchange = (flow: Flow, callback: URL) =>
  oidc.authorizationCodeGrant(flow.config, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce })

async function auditTypes(): Promise<{ type: string; outcome: string; target: string | null; detail: unknown }[]> {
  return server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.type, auditEvent.type))
}

let alice: SignedUp
let orgId: string
let teamId: string

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
  issuer = server.base
  alice = await signUp(server.base, { name: 'Alice Doe', password: PASSWORD, username: undefined })
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
    const config = await discover(client.clientId, 'x')
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
    expect(meta.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(['client_secret_basic', 'client_secret_post', 'none']))
    expect(meta.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified', 'name', 'picture', 'preferred_username', 'groups']))
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
    const config = await discover(client.clientId, clientSecret as string)
    oidc.enableNonRepudiationChecks(config)

    // No Gatehouse session: the interaction sends the browser to the hosted sign-in page.
    const anonymous = new CookieJar()
    const flow0 = await startFlow(config)
    const signIn = await browse(anonymous, flow0.url.href)
    expect(signIn.pathname).toBe('/api/auth/ui/sign-in')
    const returnTo = signIn.searchParams.get('returnTo') as string
    expect(returnTo).toMatch(new RegExp(`^${server.base}/oidc/interaction/[A-Za-z0-9_-]+$`))

    const jar = await signedInJar(alice)
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
    expect(claims.email_verified).toBe(false)
    expect(claims.name).toBe('Alice Doe')
    expect(claims.preferred_username).toBe(alice.email)
    expect(claims.groups).toEqual(['acme', 'acme:admin', 'acme/Developers'])
    // The ID token verifies against the published JWKS, signed RS256.
    const idToken = tokens.id_token as string
    expect(decodeProtectedHeader(idToken).alg).toBe('RS256')
    const verified = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${server.base}/oauth2/jwks`)), { issuer: server.base, audience: client.clientId })
    expect(verified.payload.sub).toBe(alice.user.id)

    const info = await oidc.fetchUserInfo(config, tokens.access_token, alice.user.id)
    expect(info).toMatchObject({ sub: alice.user.id, email: alice.email, name: 'Alice Doe', groups: ['acme', 'acme:admin', 'acme/Developers'] })

    // A second sign-in is SSO and consent is remembered: authorize goes straight to the callback.
    const flow2 = await startFlow(config, 'openid email', { prompt: '' })
    flow2.url.searchParams.delete('prompt')
    const again = await browse(jar, flow2.url.href)
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
