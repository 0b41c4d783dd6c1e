import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRegistrationToken } from '../../../server/features/oidc-provider/registration.js'
import { CookieJar, type SignedUp } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { browse, discover, insecure, SECURE_CALLBACK, signedInJar, signIn, verifiedPerson } from './rp.js'

/**
 * RP-initiated logout's post_logout_redirect_uri (issue 47 §7, RP-Initiated Logout 1.0 §3): honoured
 * only with an id_token_hint the client was issued; without one, the person ends on the hosted
 * signed-out page, so a registered URI is no open redirect (`…/endsession?client_id=…&
 * post_logout_redirect_uri=https://evil.example/` used to send the browser there without a click).
 */

const EVIL = 'https://evil.example/'
let server: TestServer
let person: SignedUp
let clientId: string
let secret: string

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true, registration: { enabled: true } } } })
  person = await verifiedPerson(server)
  const { token } = await createRegistrationToken(server.gatehouse.ctx, {}, { via: 'cli' })
  // A self-registered client names the attacker's page as its post-logout URI.
  const registered = await oidc.dynamicClientRegistration(
    new URL(server.base),
    { redirect_uris: [SECURE_CALLBACK], post_logout_redirect_uris: [EVIL] },
    undefined,
    { initialAccessToken: token, ...insecure },
  )
  clientId = registered.clientMetadata().client_id
  secret = registered.clientMetadata().client_secret as string
})

afterAll(async () => {
  await server?.close()
})

/**
 * A browser at the end-session endpoint: follows the redirects, confirms on the hosted sign-out
 * page (signing out of Gatehouse as the page does) or submits oidc-provider's self-posting form
 * (no session). Where it ends.
 */
async function endSession(jar: CookieJar, params: Record<string, string>): Promise<URL> {
  const url = new URL(`${server.base}/oauth2/endsession`)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  const first = await fetch(url, { headers: { cookie: jar.header() }, redirect: 'manual' })
  jar.store(first)
  let action: string
  let form: Record<string, string>
  if (first.status === 200) {
    // No session: the form oidc-provider posts by itself.
    const html = await first.text()
    action = (/action="([^"]+)"/.exec(html)?.[1] ?? '').replace(/&amp;/g, '&')
    form = Object.fromEntries([...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string]))
  } else {
    expect(first.status).toBe(302)
    await first.arrayBuffer()
    const page = await browse(server, jar, url.href)
    expect(page.pathname).toBe('/api/auth/ui/sign-out')
    action = page.searchParams.get('action') as string
    form = { xsrf: page.searchParams.get('xsrf') as string, logout: 'yes' }
    const out = await fetch(`${server.base}/sign-out`, {
      method: 'POST',
      headers: { origin: server.origin, cookie: jar.header(), 'content-type': 'application/json' },
      body: '{}',
    })
    expect(out.status).toBe(200)
    jar.store(out)
  }
  expect(action).toBe(`${server.base}/oauth2/endsession/confirm`)
  return browse(server, jar, action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.origin },
    body: new URLSearchParams(form).toString(),
  })
}

const signedOutPage = (at: URL): void => {
  expect(`${at.origin}${at.pathname}`).toBe(`${server.origin}/api/auth/ui/sign-out`)
  expect(at.searchParams.get('done')).toBe('1')
}

describe('post_logout_redirect_uri', () => {
  it('client_id and a registered post_logout_redirect_uri without id_token_hint: the hosted signed-out page, never the URI', async () => {
    // A stranger's link, no session at all.
    signedOutPage(await endSession(new CookieJar(), { client_id: clientId, post_logout_redirect_uri: EVIL, state: 'x' }))
    // A signed-in person following the same link is signed out and stays on Gatehouse.
    const jar = await signedInJar(server, person)
    await signIn(server, await discover(server, clientId, secret), jar, { redirectUri: SECURE_CALLBACK })
    signedOutPage(await endSession(jar, { client_id: clientId, post_logout_redirect_uri: EVIL, state: 'x' }))
  })

  it('with a valid id_token_hint the client was issued, the browser is sent back to its registered URI with state', async () => {
    const jar = await signedInJar(server, person)
    const tokens = await signIn(server, await discover(server, clientId, secret), jar, { redirectUri: SECURE_CALLBACK })
    const at = await endSession(jar, { id_token_hint: tokens.id_token as string, post_logout_redirect_uri: EVIL, state: 'bye' })
    expect(at.href).toBe(`${EVIL}?state=bye`)
  })
})
