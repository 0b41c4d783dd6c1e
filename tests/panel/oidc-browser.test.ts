import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import * as oidc from 'openid-client'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../server/features/oidc-provider/clients.js'
import { launchBrowser } from '../helpers/browser.js'
import { signUp } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

/**
 * The browser part of authorization code + PKCE in real Chromium: authorize → the hosted sign-in
 * page (B/ui/sign-in, served by the hosted-pages feature; here the page only needs to be
 * same-origin, so the test signs in by calling the better-auth API from it, as that page does) →
 * back to the interaction (SSO) → the hosted consent page's calls (details JSON, POST consent) →
 * the relying party's callback, where openid-client exchanges the code.
 */

let CALLBACK = ''
let server: TestServer
let browser: Browser
let rp: Server

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
  browser = await launchBrowser()
  // The relying party's callback: a page on another loopback port.
  rp = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>relying party</p>'))
  await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve))
  CALLBACK = `http://127.0.0.1:${(rp.address() as AddressInfo).port}/callback`
})
afterAll(async () => {
  await new Promise((resolve) => rp?.close(resolve))
  await browser?.close()
  await server?.close()
})

async function waitForPath(page: Page, path: string): Promise<URL> {
  await page.waitForURL((url) => url.pathname === path || url.href.startsWith(CALLBACK))
  return new URL(page.url())
}

describe('OIDC in Chromium', () => {
  it('authorization code + PKCE: sign-in, consent, callback, code exchange, ID token against the JWKS', async () => {
    const person = await signUp(server.base, { name: 'Erin', password: 'correct horse battery' })
    const { client, clientSecret } = await createClient(server.gatehouse.ctx, { name: 'Grafana', redirectUris: [CALLBACK] }, { via: 'cli' })
    const config = await oidc.discovery(new URL(server.base), client.clientId, clientSecret as string, undefined, { execute: [oidc.allowInsecureRequests] })
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
      // What the hosted sign-in page does: the better-auth API, then on to returnTo.
      const status = await page.evaluate(
        async ({ email }) => {
          const res = await fetch('/api/auth/sign-in/email', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, password: 'correct horse battery' }),
          })
          return res.status
        },
        { email: person.email },
      )
      expect(status).toBe(200)
      await page.goto(returnTo)
      const consentPage = await waitForPath(page, '/api/auth/ui/consent')
      const uid = consentPage.searchParams.get('interaction') as string
      // What the hosted consent page does: read the request, then POST Allow.
      const answer = await page.evaluate(async (id) => {
        const details = await (await fetch(`/api/auth/oidc/interaction/${id}`, { headers: { accept: 'application/json' } })).json()
        const res = await fetch(`/api/auth/oidc/interaction/${id}/consent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
        return { details, status: res.status, body: await res.json() }
      }, uid)
      expect(answer.details).toEqual({
        uid,
        prompt: 'consent',
        client: { clientId: client.clientId, name: 'Grafana', logo: null },
        scopes: ['openid', 'email', 'profile', 'groups'],
      })
      expect(answer.status).toBe(200)
      await page.goto(answer.body.redirectTo)
      const callback = await waitForPath(page, '/callback')
      expect(callback.origin + callback.pathname).toBe(CALLBACK)

      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state })
      const { payload } = await jwtVerify(tokens.id_token as string, createRemoteJWKSet(new URL(`${server.base}/oauth2/jwks`)), {
        issuer: server.base,
        audience: client.clientId,
        algorithms: ['RS256'],
      })
      expect(payload).toMatchObject({ sub: person.user.id, email: person.email, name: 'Erin', email_verified: false, groups: [] })

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
    } finally {
      await context.close()
    }
  })
})
