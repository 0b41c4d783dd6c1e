import { eq, like } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account, verification } from '../../../server/db/schema.js'
import {
  authorizeAtOidcProvider,
  Browser,
  locationOf,
  type OidcProviderHandle,
  s256,
  startOidcProvider,
} from '../../helpers/oauth-fakes.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { firstRow } from '../../../server/db/storage.js'

/**
 * The engine against a real OpenID provider (panva's oidc-provider) configured as Google would
 * be: PKCE required, state echoed with an `iss` parameter, ID tokens signed with its keys.
 */
const CLIENT_ID = 'gatehouse-web-client'
const CLIENT_SECRET = 'a-client-secret-that-is-long-enough-for-hs256-0123456789'
const APP_CALLBACK = 'http://127.0.0.1:9/app-callback'
const ALICE = {
  sub: 'alice-0001',
  email: 'alice.oidc@example.com',
  email_verified: true,
  name: 'Alice Liddell',
  picture: 'https://img.example.com/alice.png',
}
const BOB = { sub: 'bob-0002', email: 'bob.oidc@example.com', email_verified: true, name: 'Bob Builder' }

let server: TestServer
let op: OidcProviderHandle

beforeAll(async () => {
  // oidc-provider signs with the real time; Gatehouse's clock starts there and is moved by hand.
  server = await startTestServer({ clock: new TestClock(Date.now()) })
  op = await startOidcProvider({
    issuer: 'https://accounts.google.com',
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [`${server.base}/callback/google`, APP_CALLBACK],
    accounts: [ALICE, BOB],
  })
  // Live configuration, as the control panel would change it: no restart.
  server.gatehouse.config.update({
    socialProviders: {
      google: {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        endpoints: { authorization: `${op.url}/auth`, token: `${op.url}/token`, jwks: `${op.url}/jwks` },
      },
    },
  })
})
afterAll(async () => {
  await op?.close()
  await server?.close()
})

const db = () => server.gatehouse.ctx.db

async function startSignIn(browser: Browser, body: Record<string, unknown> = {}) {
  const res = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'google', ...body }, server.origin)
  expect(res.status).toBe(200)
  const json = (await res.json()) as { url: string; redirect: boolean }
  return { res, json, url: new URL(json.url) }
}

describe('social sign-in against a real OpenID provider', () => {
  it('runs the browser flow: authorization with PKCE and state, consent, callback, session', async () => {
    const browser = new Browser()
    const { res, json, url } = await startSignIn(browser, { callbackURL: '/dashboard', newUserCallbackURL: '/welcome' })
    expect(json.redirect).toBe(true)
    expect(url.origin + url.pathname).toBe(`${op.url}/auth`)
    expect([...url.searchParams.keys()]).toEqual([
      'response_type',
      'client_id',
      'state',
      'scope',
      'redirect_uri',
      'include_granted_scopes',
      'code_challenge_method',
      'code_challenge',
    ])
    expect(url.searchParams.get('response_type')).toBe('code')
    expect(url.searchParams.get('client_id')).toBe(CLIENT_ID)
    expect(url.searchParams.get('scope')).toBe('email profile openid')
    expect(url.searchParams.get('redirect_uri')).toBe(`${server.base}/callback/google`)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    const state = url.searchParams.get('state') as string
    expect(state).toMatch(/^[A-Za-z0-9_-]{32}$/)
    // The state is a verification record valid for 10 minutes, and the browser holds it signed.
    const row = await firstRow(
      db()
        .select()
        .from(verification)
        .where(eq(verification.identifier, `auth-state:${state}`)),
    )
    expect(row?.expiresAt.getTime()).toBe(server.clock.now() + 600_000)
    const stored = JSON.parse(row?.value ?? '{}') as { codeVerifier: string; callbackURL: string }
    expect(stored.codeVerifier).toMatch(/^[A-Za-z0-9_-]{128}$/)
    expect(url.searchParams.get('code_challenge')).toBe(s256(stored.codeVerifier))
    expect(res.headers.getSetCookie()).toContainEqual(
      expect.stringMatching(new RegExp(`^better-auth\\.state=${state}\\.[A-Za-z0-9%]+; Max-Age=600; Path=/; HttpOnly; SameSite=Lax$`)),
    )

    const back = await authorizeAtOidcProvider(browser, json.url, ALICE.sub)
    expect(back.origin + back.pathname).toBe(`${server.base}/callback/google`)
    expect(back.searchParams.get('state')).toBe(state)
    expect(back.searchParams.get('iss')).toBe('https://accounts.google.com')

    const callback = await browser.request(back.toString())
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe('/welcome')
    const cookies = callback.headers.getSetCookie()
    expect(cookies).toContainEqual(
      expect.stringMatching(/^better-auth\.session_token=[A-Za-z0-9]{32}\..+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/),
    )
    expect(cookies).toContain('better-auth.state=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax')
    // The state is single use: its record is gone.
    expect(
      await firstRow(
        db()
          .select()
          .from(verification)
          .where(eq(verification.identifier, `auth-state:${state}`)),
      ),
    ).toBeUndefined()

    const session = await browser.request(`${server.base}/get-session`)
    const body = (await session.json()) as { user: Record<string, unknown> }
    expect(body.user).toMatchObject({ email: ALICE.email, name: ALICE.name, image: ALICE.picture, emailVerified: true })

    const acc = await firstRow(db().select().from(account).where(eq(account.accountId, ALICE.sub)))
    expect(acc).toMatchObject({ providerId: 'google', userId: body.user.id, scope: 'email,profile,openid' })
    // Provider tokens are encrypted at rest.
    expect(acc?.accessToken).toMatch(/^enc:v1:/)
    expect(acc?.idToken).toMatch(/^enc:v1:/)
    expect(acc?.accessTokenExpiresAt?.getTime()).toBeGreaterThan(server.clock.now())
  })

  it('signs a returning user in to callbackURL (not newUserCallbackURL), the provider skipping login and consent', async () => {
    const browser = new Browser()
    const first = await startSignIn(browser, { callbackURL: '/dashboard', newUserCallbackURL: '/welcome' })
    const back1 = await authorizeAtOidcProvider(browser, first.json.url, BOB.sub)
    expect((await browser.request(back1.toString())).headers.get('location')).toBe('/welcome')
    const again = await startSignIn(browser, { callbackURL: '/dashboard', newUserCallbackURL: '/welcome' })
    const back2 = await authorizeAtOidcProvider(browser, again.json.url, BOB.sub)
    const res = await browser.request(back2.toString())
    expect(res.headers.get('location')).toBe('/dashboard')
    const accounts = await db().select().from(account).where(eq(account.accountId, BOB.sub))
    expect(accounts).toHaveLength(1)
  })

  it('refuses a replayed callback: the state is spent (please_restart_the_process) and unbound browsers get state_mismatch', async () => {
    const browser = new Browser()
    const { json } = await startSignIn(browser, { callbackURL: '/dashboard' })
    const back = await authorizeAtOidcProvider(browser, json.url, ALICE.sub)
    const stateCookie = browser.jar(server.origin).get('better-auth.state') as string
    expect((await browser.request(back.toString())).status).toBe(302)

    // Same URL, same (copied) state cookie: the record was consumed.
    const replay = await fetch(back, { redirect: 'manual', headers: { cookie: `better-auth.state=${stateCookie}` } })
    expect(replay.status).toBe(302)
    expect(replay.headers.get('location')).toBe(`${server.base}/error?error=please_restart_the_process`)
    // Another browser (no state cookie) cannot complete someone else's flow.
    const foreign = await fetch(back, { redirect: 'manual' })
    expect(foreign.headers.get('location')).toBe(`${server.base}/error?error=state_mismatch`)
  })

  it('has the provider verify PKCE: a wrong code verifier makes the code exchange fail (invalid_code)', async () => {
    const browser = new Browser()
    const { url, json } = await startSignIn(browser, { callbackURL: '/dashboard', errorCallbackURL: '/oops' })
    const state = url.searchParams.get('state') as string
    const identifier = `auth-state:${state}`
    const row = await firstRow(db().select().from(verification).where(eq(verification.identifier, identifier)))
    const data = JSON.parse(row?.value ?? '{}') as Record<string, unknown>
    await db()
      .update(verification)
      .set({ value: JSON.stringify({ ...data, codeVerifier: 'x'.repeat(128) }) })
      .where(eq(verification.identifier, identifier))
    const back = await authorizeAtOidcProvider(browser, json.url, ALICE.sub)
    const res = await browser.request(back.toString())
    expect(res.headers.get('location')).toBe('/oops?error=invalid_code')
  })

  it('reports an error the provider sends back (access denied at consent) to errorCallbackURL', async () => {
    const browser = new Browser()
    const { json } = await startSignIn(browser, { errorCallbackURL: '/oops?from=google' })
    // Walk to the login prompt, then abort the interaction as a user clicking "cancel".
    let url = new URL(json.url)
    let res = await browser.request(url.toString())
    while (res.status >= 300 && res.status < 400 && new URL(res.headers.get('location') as string, url).origin === op.url) {
      url = locationOf(res, url.toString())
      if (url.pathname.startsWith('/interaction/')) break
      res = await browser.request(url.toString())
    }
    const aborted = await browser.request(`${url.toString()}/abort`)
    let back = locationOf(aborted, url.toString())
    while (back.origin === op.url) back = locationOf(await browser.request(back.toString()), back.toString())
    expect(back.searchParams.get('error')).toBe('access_denied')
    const cb = await browser.request(back.toString())
    expect(cb.headers.get('location')).toBe('/oops?from=google&error=access_denied&error_description=End-User%20aborted%20interaction')
  })

  it('expires the state after 10 minutes (TestClock) and purges the record', async () => {
    const browser = new Browser()
    const { json, url } = await startSignIn(browser, { callbackURL: '/dashboard' })
    const back = await authorizeAtOidcProvider(browser, json.url, ALICE.sub)
    server.clock.advance(600_001)
    try {
      const res = await browser.request(back.toString())
      expect(res.headers.get('location')).toBe(`${server.base}/error?error=please_restart_the_process`)
      const state = url.searchParams.get('state') as string
      expect(
        await firstRow(
          db()
            .select()
            .from(verification)
            .where(eq(verification.identifier, `auth-state:${state}`)),
        ),
      ).toBeUndefined()
      expect(
        (await db().select().from(verification).where(like(verification.identifier, 'auth-state:%'))).filter(
          (r) => r.expiresAt.getTime() <= server.clock.now(),
        ),
      ).toHaveLength(0)
    } finally {
      server.clock.advance(-600_001)
    }
  })
})

describe('ID-token sign-in with tokens signed by the provider', () => {
  /** An app's own authorization at the provider (its redirect URI), yielding a signed ID token. */
  async function appIdToken(sub: string, nonce: string): Promise<string> {
    const browser = new Browser()
    const verifier = 'v'.repeat(64)
    const auth = new URL(`${op.url}/auth`)
    auth.search = new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: APP_CALLBACK,
      scope: 'openid email profile',
      state: 'app-state',
      nonce,
      code_challenge_method: 'S256',
      code_challenge: s256(verifier),
    }).toString()
    const back = await authorizeAtOidcProvider(browser, auth.toString(), sub)
    const tokenRes = await fetch(`${op.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') as string,
        redirect_uri: APP_CALLBACK,
        code_verifier: verifier,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      }),
    })
    const tokens = (await tokenRes.json()) as { id_token: string }
    return tokens.id_token
  }

  it('verifies signature (key set fetched from the provider), issuer, audience and nonce', async () => {
    const idToken = await appIdToken(ALICE.sub, 'nonce-123')
    const browser = new Browser()
    const res = await browser.postJson(
      `${server.base}/sign-in/social`,
      { provider: 'google', idToken: { token: idToken, nonce: 'nonce-123' } },
      server.origin,
    )
    expect(res.status).toBe(200)
    const body = (await res.json()) as { redirect: boolean; token: string; user: Record<string, unknown> }
    expect(body.redirect).toBe(false)
    expect(body.token).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(body.user).toMatchObject({ email: ALICE.email, name: ALICE.name, emailVerified: true })
    expect(res.headers.getSetCookie()).toContainEqual(expect.stringMatching(new RegExp(`^better-auth\\.session_token=${body.token}\\.`)))

    const wrongNonce = await browser.postJson(
      `${server.base}/sign-in/social`,
      { provider: 'google', idToken: { token: idToken, nonce: 'other' } },
      server.origin,
    )
    expect(wrongNonce.status).toBe(401)
    expect(await wrongNonce.json()).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })

    const [h, p, s] = idToken.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, email: 'mallory@example.com' })).toString('base64url')}.${s}`
    const tampered = await browser.postJson(
      `${server.base}/sign-in/social`,
      { provider: 'google', idToken: { token: forged } },
      server.origin,
    )
    expect(tampered.status).toBe(401)
    expect(await tampered.json()).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })
  })

  it('refuses an expired ID token (TestClock past exp)', async () => {
    const idToken = await appIdToken(BOB.sub, 'n')
    server.clock.advance(2 * 3600_000)
    try {
      const res = await new Browser().postJson(
        `${server.base}/sign-in/social`,
        { provider: 'google', idToken: { token: idToken } },
        server.origin,
      )
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })
    } finally {
      server.clock.advance(-2 * 3600_000)
    }
  })
})
