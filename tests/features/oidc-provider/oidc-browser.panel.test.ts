import { rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import * as oidc from 'openid-client'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { launchBrowser } from '../../helpers/browser.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { buildHostedPages } from '../../helpers/hosted.js'

/**
 * End to end in real Chromium, through Gatehouse's own hosted pages: authorize → the hosted
 * sign-in page (B/ui/sign-in: the form is filled and submitted like a person does) → back to the
 * interaction → the hosted consent page (Allow) → the relying party's callback, where
 * openid-client exchanges the code; then SSO on a second authorize, and RP-initiated logout
 * through the hosted sign-out page (B/ui/sign-out → oidc-provider's end-session confirm).
 */

let assets = ''

let CALLBACK = ''
let server: TestServer
let browser: Browser
let rp: Server

beforeAll(async () => {
  ;[assets, browser] = await Promise.all([buildHostedPages(), launchBrowser()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
  server = await startTestServer({ clock: new TestClock(Date.now()), config: { oidcProvider: { enabled: true } } })
  // The relying party's callback: a page on another loopback port.
  rp = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>relying party</p>'))
  await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve))
  CALLBACK = `http://127.0.0.1:${(rp.address() as AddressInfo).port}/callback`
})
afterAll(async () => {
  await new Promise((resolve) => rp?.close(resolve))
  await browser?.close()
  await server?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
}, 120_000)

async function waitForPath(page: Page, path: string): Promise<URL> {
  await page.waitForURL((url) => url.pathname === path || url.href.startsWith(CALLBACK))
  return new URL(page.url())
}

describe('OIDC in Chromium', () => {
  it('authorization code + PKCE: sign-in, consent, callback, code exchange, ID token against the JWKS', async () => {
    const person = await verifiedSignUp(server, { name: 'Erin', password: 'correct horse battery' })
    const { client, clientSecret } = await createClient(server.gatehouse.ctx, { name: 'Grafana', redirectUris: [CALLBACK] }, { via: 'cli' })
    const config = await oidc.discovery(new URL(server.base), client.clientId, clientSecret as string, undefined, {
      execute: [oidc.allowInsecureRequests],
    })
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid email profile groups',
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })

    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(url.href)
      const signIn = await waitForPath(page, '/api/auth/ui/sign-in')
      const returnTo = signIn.searchParams.get('returnTo') as string
      expect(returnTo.startsWith(`${server.base}/oidc/interaction/`)).toBe(true)
      // The hosted sign-in page, used as a person does: fill, submit, and it goes on to returnTo.
      await page.getByLabel(/^Email or username/).fill(person.email)
      await page.getByLabel(/^Password/).fill('correct horse battery')
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      const consentPage = await waitForPath(page, '/api/auth/ui/consent')
      const uid = consentPage.searchParams.get('interaction') as string
      const details = await page.evaluate(async (id) => {
        const res = await fetch(`/api/auth/oidc/interaction/${id}`, { headers: { accept: 'application/json' } })
        return res.json()
      }, uid)
      expect(details).toEqual({
        uid,
        prompt: 'consent',
        client: { clientId: client.clientId, name: 'Grafana', logo: null },
        scopes: ['openid', 'email', 'profile', 'groups'],
      })
      // The hosted consent page names the client; Allow sends the browser on to the callback.
      await page.getByRole('heading', { level: 1, name: 'Allow Grafana?' }).waitFor()
      await page.getByRole('button', { name: 'Allow' }).click()
      const callback = await waitForPath(page, '/callback')
      expect(callback.origin + callback.pathname).toBe(CALLBACK)

      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state })
      const { payload } = await jwtVerify(tokens.id_token as string, createRemoteJWKSet(new URL(`${server.base}/oauth2/jwks`)), {
        issuer: server.base,
        audience: client.clientId,
        algorithms: ['RS256'],
      })
      expect(payload).toMatchObject({ sub: person.user.id, email: person.email, name: 'Erin', email_verified: true, groups: ['user'] })

      // Signed in and consented: the next authorize comes straight back with a code (SSO).
      const second = oidc.buildAuthorizationUrl(config, {
        redirect_uri: CALLBACK,
        scope: 'openid email',
        state: 'again',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      })
      await page.goto(second.href)
      const straight = await waitForPath(page, '/callback')
      expect(straight.searchParams.get('code')).toBeTruthy()
      expect(straight.searchParams.get('state')).toBe('again')

      // RP-initiated logout: end-session → the hosted sign-out page → Sign out → signed out of
      // Gatehouse and of the OIDC session: the next authorize asks for a sign-in again.
      const sessionCookie = (await context.cookies(server.base)).find((c) => c.name === 'better-auth.session_token')
      expect(sessionCookie?.value).toBeTruthy()
      const logout = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token as string })
      await page.goto(logout.href)
      await waitForPath(page, '/api/auth/ui/sign-out')
      await page.getByRole('heading', { level: 1, name: 'Sign out' }).waitFor()
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByTestId('signed-out').waitFor()
      const cookies = await context.cookies(server.base)
      expect(cookies.find((c) => c.name === 'better-auth.session_token')).toBeUndefined()
      await page.goto(second.href)
      await waitForPath(page, '/api/auth/ui/sign-in')
    } finally {
      await context.close()
    }
  })

  it('Connected apps (/ui/account/apps): consent is remembered in a new browser; the page lists the app and Revoke ends its tokens at once', async () => {
    const person = await verifiedSignUp(server, { name: 'Frank', password: 'correct horse battery' })
    const { client, clientSecret } = await createClient(server.gatehouse.ctx, { name: 'Gitea', redirectUris: [CALLBACK] }, { via: 'cli' })
    const config = await oidc.discovery(new URL(server.base), client.clientId, clientSecret as string, undefined, {
      execute: [oidc.allowInsecureRequests],
    })
    const verifier = oidc.randomPKCECodeVerifier()
    const authorizeUrl = async (state: string) =>
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: CALLBACK,
        scope: 'openid email',
        state,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      })
    const signIn = async (page: Page) => {
      await waitForPath(page, '/api/auth/ui/sign-in')
      await page.getByLabel(/^Email or username/).fill(person.email)
      await page.getByLabel(/^Password/).fill('correct horse battery')
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    }
    // First browser: sign in, allow.
    const first = await browser.newContext()
    try {
      const page = await first.newPage()
      await page.goto((await authorizeUrl('one')).href)
      await signIn(page)
      await waitForPath(page, '/api/auth/ui/consent')
      await page.getByRole('button', { name: 'Allow' }).click()
      await waitForPath(page, '/callback')
    } finally {
      await first.close()
    }
    // Another browser: signed in again, not asked again.
    const second = await browser.newContext()
    try {
      const page = await second.newPage()
      await page.goto((await authorizeUrl('two')).href)
      await signIn(page)
      const callback = await waitForPath(page, '/callback')
      expect(callback.searchParams.get('state')).toBe('two')
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'two' })
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true)

      // The hosted page is linked from the sign-out page; it lists the app with what it may see.
      await page.goto(`${server.base}/ui/sign-out`)
      await page.getByTestId('connected-apps-link').click()
      await waitForPath(page, '/api/auth/ui/account/apps')
      const card = page.getByTestId(`app-${client.clientId}`)
      await card.getByText('Gitea').waitFor()
      await card.getByText('Your email address and whether it is verified').waitFor()
      await page.getByTestId(`revoke-${client.clientId}`).click()
      await page.getByTestId('no-apps').waitFor()
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false)
      // The next sign-in to it asks again.
      await page.goto((await authorizeUrl('three')).href)
      await waitForPath(page, '/api/auth/ui/consent')
    } finally {
      await second.close()
    }
  })
})
