import type * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authRequest, Browser, exchange, expectCode, expectError, type Op, POST_LOGOUT, type Rp, registerRp, startOp } from './op.js'

/**
 * The OpenID Foundation's RP-Initiated Logout OP plan (`oidcc-rp-initiated-logout-certification-test-plan`,
 * code flow, client_secret_basic, static client), one test per module, named as the suite names
 * it. The end-session confirmation is Gatehouse's hosted sign-out page: it signs the person out of
 * Gatehouse (POST /sign-out) and then posts oidc-provider's confirmation form (xsrf, logout=yes),
 * which is what the browser does here. After a logout the suite checks that the session is gone:
 * prompt=none answers login_required. (The back-channel logout plan belongs with back-channel
 * logout itself.)
 */

let op: Op
let rp: Rp

beforeAll(async () => {
  op = await startOp()
  rp = await registerRp(op)
})

afterAll(async () => {
  await op?.close()
})

async function signedIn(client = rp): Promise<{ browser: Browser; idToken: string }> {
  const browser = new Browser(op)
  const request = await authRequest(client)
  const visit = await browser.visit(request.url.href)
  expectCode(visit, request)
  const tokens = await exchange(client, request, visit.at)
  return { browser, idToken: tokens.id_token as string }
}

/** A refused end-session request: the error page oidc-provider answers in place (no redirect anywhere). */
interface Refused {
  status: number
  body: string
}

/**
 * Visits the end-session endpoint; on the hosted sign-out page, confirms as the page does.
 * Returns where the browser ends, or the refusal when the endpoint answers with an error page.
 */
async function endSession(browser: Browser, params: Record<string, string>): Promise<URL | Refused> {
  const url = new URL(`${op.issuer}/oauth2/endsession`)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  const first = await fetch(url, { headers: { cookie: browser.jar.header() }, redirect: 'manual' })
  if (first.status >= 400) return { status: first.status, body: await first.text() }
  await first.arrayBuffer()
  const page = await browser.go(url.href)
  if (page.pathname !== '/api/auth/ui/sign-out') return page
  const action = page.searchParams.get('action') as string
  const xsrf = page.searchParams.get('xsrf') as string
  expect(action).toBe(`${op.issuer}/oauth2/endsession/confirm`)
  const signOut = await fetch(`${op.issuer}/sign-out`, {
    method: 'POST',
    headers: { origin: op.server.origin, cookie: browser.jar.header(), 'content-type': 'application/json' },
    body: '{}',
  })
  expect(signOut.status).toBe(200)
  browser.jar.store(signOut)
  return browser.go(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: op.server.origin },
    body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
  })
}

/** The suite's check after a logout: the OP session is gone (prompt=none → login_required). */
async function expectLoggedOut(browser: Browser, client = rp): Promise<void> {
  const request = await authRequest(client, { prompt: 'none' })
  expectError(await browser.visit(request.url.href), request, 'login_required')
}

/** The suite's check after a refused logout: the OP session is still there (prompt=none → a code). */
async function expectStillLoggedIn(browser: Browser): Promise<void> {
  const request = await authRequest(rp, { prompt: 'none' })
  expectCode(await browser.visit(request.url.href), request)
}

/** A refused end-session request: an error page in place (400, the OAuth error named), never a redirect to the RP. */
function expectErrorPage(at: URL | Refused, error: string): void {
  if (at instanceof URL) throw new Error(`expected an error page, the browser went to ${at.href}`)
  expect(at.status).toBe(400)
  expect(at.body).toContain(error)
}

/** Where an honoured end-session request leaves the browser. */
function landed(at: URL | Refused): URL {
  if (!(at instanceof URL)) throw new Error(`refused with ${at.status}: ${at.body.slice(0, 300)}`)
  return at
}

describe('oidcc-rp-initiated-logout-certification-test-plan', () => {
  it('oidcc-rp-initiated-logout-discovery-endpoint-verification', () => {
    const meta = rp.config.serverMetadata() as oidc.ServerMetadata
    expect(meta.end_session_endpoint).toBe(`${op.issuer}/oauth2/endsession`)
  })

  it('oidcc-rp-initiated-logout', async () => {
    const { browser, idToken } = await signedIn()
    const at = landed(await endSession(browser, { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT, state: 'bye-1' }))
    expect(at.href).toBe(`${POST_LOGOUT}?state=bye-1`)
    await expectLoggedOut(browser)
  })

  it('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri', async () => {
    const { browser, idToken } = await signedIn()
    const at = await endSession(browser, { id_token_hint: idToken, post_logout_redirect_uri: `${POST_LOGOUT}/not-registered`, state: 's' })
    expectErrorPage(at, 'invalid_request')
    await expectStillLoggedIn(browser)
  })

  it('oidcc-rp-initiated-logout-modified-id-token-hint', async () => {
    const { browser, idToken } = await signedIn()
    const [header, payload, signature] = idToken.split('.') as [string, string, string]
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`
    const at = await endSession(browser, {
      id_token_hint: `${header}.${payload}.${flipped}`,
      post_logout_redirect_uri: POST_LOGOUT,
      state: 's',
    })
    expectErrorPage(at, 'invalid_request')
    await expectStillLoggedIn(browser)
  })

  it('oidcc-rp-initiated-logout-bad-id-token-hint', async () => {
    const { browser, idToken } = await signedIn()
    // The same claims, unsigned (alg none).
    const payload = idToken.split('.')[1] as string
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`
    const at = await endSession(browser, { id_token_hint: unsigned, post_logout_redirect_uri: POST_LOGOUT, state: 's' })
    expectErrorPage(at, 'invalid_request')
    await expectStillLoggedIn(browser)
  })

  it('oidcc-rp-initiated-logout-no-id-token-hint', async () => {
    const { browser } = await signedIn()
    // RP-Initiated Logout 1.0 §3: without an id_token_hint the OP need not redirect (the suite
    // accepts either); Gatehouse does not (a registered URI would be an open redirect): the person
    // is signed out and shown the hosted signed-out page.
    const at = landed(await endSession(browser, { client_id: rp.clientId, post_logout_redirect_uri: POST_LOGOUT, state: 'bye-2' }))
    expect(at.origin + at.pathname).toBe(`${op.server.origin}/api/auth/ui/sign-out`)
    expect(at.searchParams.get('done')).toBe('1')
    await expectLoggedOut(browser)
  })

  it('oidcc-rp-initiated-logout-no-params', async () => {
    const { browser } = await signedIn()
    const at = landed(await endSession(browser, {}))
    // Logged out, and shown Gatehouse's own signed-out page (no RP to return to).
    expect(at.origin + at.pathname).toBe(`${op.server.origin}/api/auth/ui/sign-out`)
    expect(at.searchParams.get('done')).toBe('1')
    await expectLoggedOut(browser)
  })

  it('oidcc-rp-initiated-logout-no-post-logout-redirect-uri', async () => {
    const { browser, idToken } = await signedIn()
    const at = landed(await endSession(browser, { id_token_hint: idToken, state: 'ignored' }))
    expect(at.origin + at.pathname).toBe(`${op.server.origin}/api/auth/ui/sign-out`)
    expect(at.searchParams.get('done')).toBe('1')
    await expectLoggedOut(browser)
  })

  it('oidcc-rp-initiated-logout-no-state', async () => {
    const { browser, idToken } = await signedIn()
    const at = landed(await endSession(browser, { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT }))
    expect(at.href).toBe(POST_LOGOUT)
    await expectLoggedOut(browser)
  })

  it('oidcc-rp-initiated-logout-only-state', async () => {
    const { browser } = await signedIn()
    const at = landed(await endSession(browser, { state: 'only' }))
    expect(at.origin + at.pathname).toBe(`${op.server.origin}/api/auth/ui/sign-out`)
    expect(at.searchParams.get('done')).toBe('1')
    await expectLoggedOut(browser)
  })

  it('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri', async () => {
    const withQuery = `${POST_LOGOUT}?foo=bar`
    const client = await registerRp(op, { postLogoutRedirectUris: [withQuery] })
    const { browser, idToken } = await signedIn(client)
    const at = landed(await endSession(browser, { id_token_hint: idToken, post_logout_redirect_uri: withQuery, state: 'bye-3' }))
    expect(at.href).toBe(`${POST_LOGOUT}?foo=bar&state=bye-3`)
    await expectLoggedOut(browser, client)
  })
})
