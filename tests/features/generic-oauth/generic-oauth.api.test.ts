import { createAuthClient } from 'better-auth/client'
import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account, user, verification } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { FakeOidc } from '../../helpers/fake-oidc.js'
import { CookieJar, jarFetch, uniqueEmail } from '../../helpers/http.js'
import { Browser, basicCredentials, FakeProvider } from '../../helpers/oauth-fakes.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'

/**
 * Generic OAuth (issue 27, better-auth 1.7's genericOAuth plugin): any OpenID Connect provider found
 * by discovery, and a plain OAuth 2.0 one given by its endpoints, signed in with through
 * /sign-in/social and /callback/<providerId> on the social engine. The provider is a fake on
 * loopback with a real RSA key (tests/helpers/fake-oidc.ts).
 */
const CLIENT_ID = 'gatehouse-client'
const CLIENT_SECRET = 'gatehouse-client-secret'

let server: TestServer
const op = new FakeOidc(CLIENT_ID, CLIENT_SECRET)
/** A plain OAuth 2.0 provider: no discovery, no ID token, a userinfo with `id`. */
const plain = new FakeProvider()
let plainUser: Record<string, unknown> = { id: 4242, email: 'plain@example.com', name: 'Plain User', email_verified: 'true' }

beforeAll(async () => {
  await op.start()
  await plain.start()
  plain
    .on('GET', '/authorize', (req) => {
      const back = new URL(req.query.get('redirect_uri') ?? '')
      back.searchParams.set('code', 'plain-code')
      back.searchParams.set('state', req.query.get('state') ?? '')
      return { status: 302, headers: { location: back.toString() } }
    })
    .on('POST', '/token', (req) =>
      basicCredentials(req)?.id === 'plain-id' && basicCredentials(req)?.secret === 'plain-secret' && req.form.get('code') === 'plain-code'
        ? { json: { access_token: 'plain-access', token_type: 'bearer' } }
        : { status: 400, json: { error: 'invalid_grant' } },
    )
    .on('GET', '/me', (req) => (req.headers.authorization === 'Bearer plain-access' ? { json: plainUser } : { status: 401, json: {} }))
  // The fake signs with the real time: Gatehouse's clock starts there.
  server = await startTestServer({ clock: new TestClock(Date.now()) })
  server.gatehouse.config.update({
    genericOAuth: {
      config: [
        {
          providerId: 'acme',
          name: 'Acme SSO',
          discoveryUrl: op.discoveryUrl,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          scopes: ['email', 'profile'],
        },
        {
          providerId: 'plain',
          authorizationUrl: `${plain.url}/authorize`,
          tokenUrl: `${plain.url}/token`,
          userInfoUrl: `${plain.url}/me`,
          clientId: 'plain-id',
          clientSecret: 'plain-secret',
          authentication: 'basic',
          pkce: false,
        },
        { providerId: 'down', discoveryUrl: 'http://127.0.0.1:9/.well-known/openid-configuration', clientId: 'x' },
      ],
    },
  })
})
afterAll(async () => {
  await server?.close()
  await op.close()
  await plain.close()
})

const db = () => server.gatehouse.ctx.db

async function start(browser: Browser, body: Record<string, unknown> = {}) {
  const res = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'acme', callbackURL: '/done', ...body }, server.origin)
  expect(res.status).toBe(200)
  const json = (await res.json()) as { url: string; redirect: boolean }
  const url = new URL(json.url)
  return { res, url, state: url.searchParams.get('state') as string }
}

/** Runs a whole browser sign-in: start, the provider's redirect back, the callback. */
async function signInThroughProvider(browser = new Browser(), body: Record<string, unknown> = {}) {
  const { url } = await start(browser, body)
  const back = await op.authorizeRedirect(url.toString())
  const callback = await browser.request(back.toString())
  return { browser, callback, location: callback.headers.get('location') ?? '' }
}

describe('generic OAuth: an OpenID provider by discovery', () => {
  it('signs in through the official client: signIn.social with the provider id, PKCE, nonce, ID token checked against the JWKS', async () => {
    op.user = {
      sub: 'acme-user-1',
      email: uniqueEmail('acme'),
      email_verified: true,
      name: 'Acme One',
      picture: 'https://img.example/1.png',
    }
    const jar = new CookieJar()
    const client = createAuthClient({ baseURL: server.origin, fetchOptions: { customFetchImpl: jarFetch(server.origin, jar) } })
    const started = await client.signIn.social({ provider: 'acme', callbackURL: '/dashboard', disableRedirect: true })
    expect(started.error).toBeNull()
    expect(started.data).toMatchObject({ redirect: false })
    const url = new URL((started.data as { url: string }).url)
    expect(url.origin + url.pathname).toBe(`${op.issuer}/authorize`)
    expect(url.searchParams.get('client_id')).toBe(CLIENT_ID)
    expect(url.searchParams.get('redirect_uri')).toBe(`${server.base}/callback/acme`)
    // An OpenID provider: openid first, then the configured scopes.
    expect(url.searchParams.get('scope')).toBe('openid email profile')
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    const nonce = url.searchParams.get('nonce') as string
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const state = url.searchParams.get('state') as string
    const stored = await firstRow(
      db()
        .select()
        .from(verification)
        .where(eq(verification.identifier, `auth-state:${state}`)),
    )
    expect(JSON.parse(stored?.value ?? '{}')).toMatchObject({ providerId: 'acme', idTokenNonce: nonce })

    const back = await op.authorizeRedirect(url.toString())
    const callback = await jarFetch(server.origin, jar, { redirect: 'manual' })(back.toString())
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe('/dashboard')
    expect(callback.headers.getSetCookie()).toContainEqual(expect.stringMatching(/^better-auth\.session_token=/))
    // The token request carried the PKCE verifier the challenge was made from (the fake checks it).
    const session = await client.getSession()
    expect(session.data?.user).toMatchObject({
      email: op.user.email,
      name: 'Acme One',
      emailVerified: true,
      image: 'https://img.example/1.png',
    })
    const linked = await firstRow(
      db()
        .select()
        .from(account)
        .where(and(eq(account.providerId, 'acme'), eq(account.accountId, 'acme-user-1'))),
    )
    expect(linked?.userId).toBe(session.data?.user.id)
    const accounts = await client.listAccounts()
    expect(accounts.data?.map((a) => a.providerId)).toContain('acme')
  })

  it('signs the same provider account in again without a new user, and follows newUserCallbackURL only the first time', async () => {
    op.user = { sub: `acme-${Date.now()}`, email: uniqueEmail('acme-again'), email_verified: true, name: 'Again' }
    const first = await signInThroughProvider(new Browser(), { newUserCallbackURL: '/welcome' })
    expect(first.location).toBe('/welcome')
    const second = await signInThroughProvider(new Browser(), { newUserCallbackURL: '/welcome' })
    expect(second.location).toBe('/done')
    expect(
      await db()
        .select()
        .from(user)
        .where(eq(user.email, op.user.email as string)),
    ).toHaveLength(1)
  })

  it('links to an existing user with the same verified address (the social linking rules)', async () => {
    const email = uniqueEmail('acme-link')
    const res = await new Browser().postJson(
      `${server.base}/sign-up/email`,
      { email, password: 'correct horse battery', name: 'Pw' },
      server.origin,
    )
    expect(res.status).toBe(200)
    op.user = { sub: `acme-link-${Date.now()}`, email, email_verified: true, name: 'Linked' }
    expect((await signInThroughProvider()).location).toBe('/done')
    const owner = await firstRow(db().select().from(user).where(eq(user.email, email)))
    const rows = await db()
      .select()
      .from(account)
      .where(eq(account.userId, owner?.id as string))
    expect(rows.map((r) => r.providerId).sort()).toEqual(['acme', 'credential'])
    // An unverified address at the provider does not link.
    const other = uniqueEmail('acme-nolink')
    await new Browser().postJson(
      `${server.base}/sign-up/email`,
      { email: other, password: 'correct horse battery', name: 'Pw' },
      server.origin,
    )
    op.user = { sub: `acme-nolink-${Date.now()}`, email: other, email_verified: false, name: 'Not linked' }
    expect((await signInThroughProvider()).location).toBe(`${server.base}/error?error=account_not_linked`)
  })

  it("refuses a callback whose state is not the browser's", async () => {
    const a = new Browser()
    const { url } = await start(a)
    const back = await op.authorizeRedirect(url.toString())
    // Another browser (no state cookie) brings the code back.
    const res = await new Browser().request(back.toString())
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${server.base}/error?error=state_mismatch`)
    // A made-up state with the right cookie is unknown.
    const res2 = await a.request(`${server.base}/callback/acme?code=x&state=${'A'.repeat(32)}`)
    expect(res2.headers.get('location')).toBe(`${server.base}/error?error=state_mismatch`)
  })

  it.each([
    ['signed by a key the provider does not publish', () => ({ key: op.strangerKey })],
    ['for another audience', () => ({ aud: 'someone-else' })],
    ['echoing another nonce', () => ({ nonce: 'a-nonce-from-another-request' })],
    ['from another issuer', () => ({ iss: 'https://evil.example' })],
  ])('refuses an ID token %s: unable_to_get_user_info, nobody signed in', async (_what, tamper) => {
    op.user = { sub: `acme-bad-${Math.random()}`, email: uniqueEmail('acme-bad'), email_verified: true, name: 'Bad' }
    op.tamper = tamper()
    try {
      const { callback, location } = await signInThroughProvider()
      expect(callback.status).toBe(302)
      expect(location).toBe(`${server.base}/error?error=unable_to_get_user_info`)
      expect(callback.headers.getSetCookie().some((c) => c.includes('session_token=') && !c.includes('Max-Age=0'))).toBe(false)
      expect(
        await firstRow(
          db()
            .select()
            .from(user)
            .where(eq(user.email, op.user.email as string)),
        ),
      ).toBeUndefined()
    } finally {
      op.tamper = {}
    }
  })

  it("passes the provider's own error on, with its description", async () => {
    op.authorizeError = 'access_denied'
    try {
      const { location } = await signInThroughProvider(new Browser(), { errorCallbackURL: '/oops' })
      expect(location).toBe('/oops?error=access_denied&error_description=The%20user%20said%20no')
    } finally {
      op.authorizeError = null
    }
  })

  it('refuses a code whose PKCE verifier does not match (the provider says invalid_grant): invalid_code', async () => {
    const browser = new Browser()
    const { url } = await start(browser)
    const challenged = new URL(url)
    challenged.searchParams.set('code_challenge', 'x'.repeat(43))
    const back = await op.authorizeRedirect(challenged.toString())
    const res = await browser.request(back.toString())
    expect(res.headers.get('location')).toBe(`${server.base}/error?error=invalid_code`)
  })

  it('answers 404 PROVIDER_NOT_FOUND for an unknown provider and for one whose discovery cannot be fetched', async () => {
    for (const provider of ['nobody', 'down']) {
      const res = await new Browser().postJson(`${server.base}/sign-in/social`, { provider }, server.origin)
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ code: 'PROVIDER_NOT_FOUND' })
    }
  })

  it('starts at the pre-1.7 POST /sign-in/oauth2 {providerId} too, and finishes at /callback/<id>', async () => {
    op.user = { sub: `acme-legacy-${Date.now()}`, email: uniqueEmail('acme-legacy'), email_verified: true, name: 'Legacy' }
    const browser = new Browser()
    const res = await browser.postJson(`${server.base}/sign-in/oauth2`, { providerId: 'acme', callbackURL: '/legacy' }, server.origin)
    expect(res.status).toBe(200)
    const json = (await res.json()) as { url: string; redirect: boolean }
    expect(json.redirect).toBe(true)
    const callback = await browser.request((await op.authorizeRedirect(json.url)).toString())
    expect(callback.headers.get('location')).toBe('/legacy')
    const missing = await new Browser().postJson(`${server.base}/sign-in/oauth2`, { providerId: 'nobody' }, server.origin)
    expect(missing.status).toBe(404)
  })

  it('sends a callback at the pre-1.7 path /oauth2/callback/<id> on to /callback/<id>', async () => {
    const res = await new Browser().request(`${server.base}/oauth2/callback/acme?code=c&state=s`)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${server.base}/callback/acme?code=c&state=s`)
  })
})

describe('generic OAuth: linking and provider tokens', () => {
  it('links the provider to the signed-in user through /link-social, then reads and refreshes its tokens', async () => {
    const email = uniqueEmail('acme-linker')
    const browser = new Browser()
    const signedUp = await browser.postJson(
      `${server.base}/sign-up/email`,
      { email, password: 'correct horse battery', name: 'Linker' },
      server.origin,
    )
    expect(signedUp.status).toBe(200)
    op.user = { sub: `acme-linker-${Date.now()}`, email, email_verified: true, name: 'Linker at Acme' }
    const link = await browser.postJson(`${server.base}/link-social`, { provider: 'acme', callbackURL: '/linked' }, server.origin)
    expect(link.status).toBe(200)
    const { url } = (await link.json()) as { url: string }
    expect(new URL(url).searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const back = await op.authorizeRedirect(url)
    const callback = await browser.request(back.toString())
    expect(callback.headers.get('location')).toBe('/linked')
    const accounts = (await (await browser.request(`${server.base}/list-accounts`)).json()) as Array<{ providerId: string }>
    expect(accounts.map((a) => a.providerId).sort()).toEqual(['acme', 'credential'])

    const token = await browser.postJson(`${server.base}/get-access-token`, { providerId: 'acme' }, server.origin)
    expect(token.status).toBe(200)
    const body = (await token.json()) as { accessToken: string; idToken: string; scopes: string[] }
    expect(body.accessToken).toMatch(/^[0-9a-f]{32}$/)
    expect(body.idToken.split('.')).toHaveLength(3)
    const refreshed = await browser.postJson(`${server.base}/refresh-token`, { providerId: 'acme' }, server.origin)
    expect(refreshed.status).toBe(200)
    const after = (await refreshed.json()) as { accessToken: string; providerId: string }
    expect(after.providerId).toBe('acme')
    expect(after.accessToken).not.toBe(body.accessToken)
    expect(op.http.calls('POST', '/token').at(-1)?.form.get('grant_type')).toBe('refresh_token')
  })

  it('refuses a provider configured without discovery or endpoints, and a duplicate id', () => {
    expect(() => server.gatehouse.config.update({ genericOAuth: { config: [{ providerId: 'x', clientId: 'y' }] } })).toThrow(/discoveryUrl/)
    const dup = { providerId: 'x', clientId: 'y', authorizationUrl: 'https://a.example/a', tokenUrl: 'https://a.example/t' }
    expect(() => server.gatehouse.config.update({ genericOAuth: { config: [dup, dup] } })).toThrow(/unique/)
    expect(() => server.gatehouse.config.update({ genericOAuth: { config: [{ ...dup, getUserInfo: 'function' }] } })).toThrow(/getUserInfo/)
    // Nothing changed: the configured providers still sign in.
    expect(server.gatehouse.ctx.config().genericOAuth.config.map((c) => c.providerId)).toEqual(['acme', 'plain', 'down'])
  })
})

describe('generic OAuth: an ID token the app obtained itself', () => {
  const idTokenSignIn = async (provider: string, token: string) => {
    const res = await new Browser().postJson(`${server.base}/sign-in/social`, { provider, idToken: { token } }, server.origin)
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const claims = () => ({
    iss: op.issuer,
    aud: CLIENT_ID,
    sub: `acme-idt-${Math.random()}`,
    email: uniqueEmail('acme-idt'),
    email_verified: true,
    name: 'Idt',
  })
  const now = () => ({ issuedAt: Math.floor(server.clock.now() / 1000) })

  it('signs in with an ID token verified against the provider JWKS', async () => {
    const c = claims()
    const { status, body } = await idTokenSignIn('acme', await op.key.sign(c, now()))
    expect(status).toBe(200)
    expect(body).toMatchObject({ redirect: false, token: expect.any(String), user: { email: c.email, emailVerified: true } })
    const row = await firstRow(db().select().from(account).where(eq(account.accountId, c.sub)))
    expect(row?.providerId).toBe('acme')
  })

  it('refuses one signed by another key, for another audience or from another issuer (401 INVALID_TOKEN)', async () => {
    for (const token of [
      await op.strangerKey.sign(claims(), now()),
      await op.key.sign({ ...claims(), aud: 'someone-else' }, now()),
      await op.key.sign({ ...claims(), iss: 'https://evil.example' }, now()),
    ]) {
      expect(await idTokenSignIn('acme', token)).toEqual({ status: 401, body: { code: 'INVALID_TOKEN', message: 'invalid token' } })
    }
  })

  it('answers 404 ID_TOKEN_NOT_SUPPORTED for a provider without a key set', async () => {
    const res = await idTokenSignIn('plain', await op.key.sign(claims(), now()))
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ code: 'ID_TOKEN_NOT_SUPPORTED' })
  })
})

describe('generic OAuth: a plain OAuth 2.0 provider by its endpoints', () => {
  it('signs in with client_secret_basic, no PKCE, the profile from userinfo (account id from `id`)', async () => {
    plainUser = { ...plainUser, id: 4242, email: uniqueEmail('plain') }
    const browser = new Browser()
    const res = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'plain', callbackURL: '/p' }, server.origin)
    const { url } = (await res.json()) as { url: string }
    const authorize = new URL(url)
    expect(authorize.searchParams.has('code_challenge')).toBe(false)
    expect(authorize.searchParams.has('nonce')).toBe(false)
    expect(authorize.searchParams.has('scope')).toBe(false)
    const redirect = await fetch(url, { redirect: 'manual' })
    const callback = await browser.request(redirect.headers.get('location') as string)
    expect(callback.headers.get('location')).toBe('/p')
    const created = await firstRow(
      db()
        .select()
        .from(user)
        .where(eq(user.email, plainUser.email as string)),
    )
    expect(created).toMatchObject({ name: 'Plain User', emailVerified: true })
    const row = await firstRow(
      db()
        .select()
        .from(account)
        .where(eq(account.userId, created?.id as string)),
    )
    expect(row).toMatchObject({ providerId: 'plain', accountId: '4242' })
  })
})
