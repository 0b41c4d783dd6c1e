import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as oidc from 'openid-client'
import { expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { user } from '../../../server/db/schema.js'
import { CookieJar, type SignedUp, signUp } from '../../helpers/http.js'
import type { TestServer } from '../../helpers/server.js'

/**
 * The relying party's side of the OIDC provider's suites in this folder: openid-client as the
 * client, a cookie jar playing the browser (authorize → SSO → consent → callback), and a
 * back-channel logout receiver (a small node:http server, as an RP's endpoint).
 */

export const PASSWORD = 'correct horse battery'
export const RP = 'http://rp.example.test'
export const CALLBACK = `${RP}/callback`
/** A self-registered client's callback: https (plain http is taken only on loopback, clients.ts registeredRedirectRefusal). */
export const SECURE_RP = 'https://rp.example.test'
export const SECURE_CALLBACK = `${SECURE_RP}/callback`
export const insecure = { execute: [oidc.allowInsecureRequests] }

export function discover(server: TestServer, clientId: string, secret?: string, auth?: oidc.ClientAuth) {
  return oidc.discovery(new URL(server.base), clientId, secret, auth ?? (secret ? oidc.ClientSecretBasic(secret) : oidc.None()), insecure)
}

/** Follows redirects inside Gatehouse with the jar; stops at a hosted page (/ui/…) or a URL outside it. */
export async function browse(server: TestServer, jar: CookieJar, start: string, init: RequestInit = {}): Promise<URL> {
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

/** A person who signed up and verified their email (the OIDC provider vouches only for verified people). */
export async function verifiedPerson(server: TestServer): Promise<SignedUp> {
  const person = await signUp(server.base, { password: PASSWORD })
  await server.gatehouse.ctx.db.update(user).set({ emailVerified: true }).where(eq(user.id, person.user.id))
  return person
}

export async function signedInJar(server: TestServer, person: { email: string }): Promise<CookieJar> {
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

/** Accepts the consent screen an authorization stopped at; the callback URL. */
export async function consent(server: TestServer, jar: CookieJar, at: URL): Promise<URL> {
  expect(at.pathname).toBe('/api/auth/ui/consent')
  const uid = at.searchParams.get('interaction') as string
  const res = await fetch(`${server.base}/oidc/interaction/${uid}/consent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.origin, cookie: jar.header() },
    body: '{}',
  })
  expect(res.status).toBe(200)
  jar.store(res)
  const { redirectTo } = (await res.json()) as { redirectTo: string }
  return browse(server, jar, redirectTo)
}

/**
 * A whole code flow (PKCE) for the jar's person: the tokens. `par` pushes the request first
 * (RFC 9126); `dpop` binds the tokens (RFC 9449).
 */
export async function signIn(
  server: TestServer,
  config: oidc.Configuration,
  jar: CookieJar,
  options: { scope?: string; par?: boolean; dpop?: oidc.DPoPHandle; redirectUri?: string } = {},
) {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const params = {
    redirect_uri: options.redirectUri ?? CALLBACK,
    scope: options.scope ?? 'openid',
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }
  const url = options.par
    ? await oidc.buildAuthorizationUrlWithPAR(config, params, options.dpop ? { DPoP: options.dpop } : undefined)
    : oidc.buildAuthorizationUrl(config, params)
  let at = await browse(server, jar, url.href)
  if (at.pathname === '/api/auth/ui/consent') at = await consent(server, jar, at)
  return oidc.authorizationCodeGrant(
    config,
    at,
    { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce },
    undefined,
    options.dpop ? { DPoP: options.dpop } : undefined,
  )
}

export async function signOutOf(server: TestServer, jar: CookieJar): Promise<void> {
  const res = await fetch(`${server.base}/sign-out`, {
    method: 'POST',
    headers: { origin: server.origin, cookie: jar.header(), 'content-type': 'application/json' },
    body: '{}',
  })
  expect(res.status).toBe(200)
  jar.store(res)
}

export interface Received {
  path: string
  contentType: string | undefined
  logoutToken: string
}

/** A back-channel logout endpoint: records each POST; `down` answers 503 (as an RP being restarted). */
export interface Receiver {
  url: string
  received: Received[]
  down: boolean
  /** Resolves once `count` notices arrived (bounded by `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(path = '/backchannel?logout=backchannel'): Promise<Receiver> {
  const received: Received[] = []
  const state = { down: false }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (state.down) {
        res.statusCode = 503
        res.end()
        return
      }
      const body = new URLSearchParams(Buffer.concat(chunks).toString())
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], logoutToken: body.get('logout_token') ?? '' })
      res.statusCode = 200
      res.setHeader('cache-control', 'no-store')
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    get down() {
      return state.down
    },
    set down(value: boolean) {
      state.down = value
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      return received
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

export type { SignedUp }
