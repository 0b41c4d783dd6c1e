import * as oidc from 'openid-client'
import { expect } from 'vitest'
import { createClient } from '../../../../server/features/oidc-provider/clients.js'
import { CookieJar, type SignedUp } from '../../../helpers/http.js'
import { verifiedSignUp } from '../../../helpers/members.js'
import { startTestServer, type TestServer } from '../../../helpers/server.js'
import { browse, insecure, PASSWORD } from '../rp.js'

/**
 * The OpenID Foundation conformance suite's part, played in Node: the suite's relying party is
 * panva's openid-client (strict: every ID token's signature checked against the JWKS, `iss`,
 * `aud`, `exp`, `iat`, `nonce`, `state`, PKCE), its browser is a cookie jar that follows
 * redirects and signs in and consents through the hosted pages' own calls (what
 * tests/features/oidc-provider/oidc-provider.api.test.ts does; tests/features/oidc-provider/oidc-browser.panel.test.ts does it in Chromium).
 * The server is the real one on loopback.
 */

export { PASSWORD }
/** The suite's redirect URI (its own host): Gatehouse redirects there; nothing is served. */
export const RP = 'https://rp.conformance.test'
export const CALLBACK = `${RP}/callback`
export const POST_LOGOUT = `${RP}/post_logout_redirect`

export interface Op {
  server: TestServer
  issuer: string
  /** The test user (profile: name, email; a username). */
  person: SignedUp
  close(): Promise<void>
}

export async function startOp(): Promise<Op> {
  const server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
  const person = await verifiedSignUp(server, { name: 'Conformance Person', password: PASSWORD, username: 'conformance' })
  return { server, issuer: server.base, person, close: () => server.close() }
}

export interface Rp {
  clientId: string
  clientSecret: string
  /** openid-client's configuration from discovery, with client_secret_basic (or the method asked). */
  config: oidc.Configuration
}

/** Registers a client as the plan's configuration does (static client, code flow) and discovers it. */
export async function registerRp(
  op: Op,
  options: { auth?: 'client_secret_basic' | 'client_secret_post'; redirectUris?: string[]; postLogoutRedirectUris?: string[] } = {},
): Promise<Rp> {
  const { client, clientSecret } = await createClient(
    op.server.gatehouse.ctx,
    {
      name: 'Conformance suite',
      redirectUris: options.redirectUris ?? [CALLBACK],
      postLogoutRedirectUris: options.postLogoutRedirectUris ?? [POST_LOGOUT],
    },
    { via: 'cli' },
  )
  const secret = clientSecret as string
  const auth = options.auth === 'client_secret_post' ? oidc.ClientSecretPost(secret) : oidc.ClientSecretBasic(secret)
  const config = await oidc.discovery(new URL(op.issuer), client.clientId, secret, auth, insecure)
  oidc.enableNonRepudiationChecks(config)
  return { clientId: client.clientId, clientSecret: secret, config }
}

/** What the browser went through on its way back to the relying party. */
export interface Visit {
  /** Where it ended: the callback (or post-logout) URL, or a Gatehouse error page. */
  at: URL
  signInPages: number
  consentPages: number
}

/** A browser: a cookie jar that follows redirects and signs in and consents when a hosted page asks. */
export class Browser {
  readonly jar = new CookieJar()
  constructor(
    private readonly op: Op,
    private readonly person: SignedUp | null = op.person,
  ) {}

  private get origin(): string {
    return this.op.server.origin
  }

  /** Follows redirects inside Gatehouse; stops at a hosted page (/ui/…) or a URL outside it. */
  async go(start: string, init: RequestInit = {}): Promise<URL> {
    return browse(this.op.server, this.jar, start, init)
  }

  /** The hosted sign-in page's call: email and password, the session cookie kept. */
  async signIn(): Promise<void> {
    if (!this.person) throw new Error('this browser has nobody to sign in')
    const res = await fetch(`${this.op.issuer}/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: this.origin, cookie: this.jar.header() },
      body: JSON.stringify({ email: this.person.email, password: PASSWORD }),
    })
    expect(res.status).toBe(200)
    this.jar.store(res)
  }

  /** The hosted consent page's calls: read the interaction, approve it; returns where that leads. */
  async consent(at: URL): Promise<URL> {
    const uid = at.searchParams.get('interaction') as string
    const details = await fetch(`${this.op.issuer}/oidc/interaction/${uid}`, {
      headers: { accept: 'application/json', cookie: this.jar.header() },
    })
    expect(details.status).toBe(200)
    expect(((await details.json()) as { prompt: string }).prompt).toBe('consent')
    const res = await fetch(`${this.op.issuer}/oidc/interaction/${uid}/consent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: this.origin, cookie: this.jar.header() },
      body: '{}',
    })
    expect(res.status).toBe(200)
    this.jar.store(res)
    return this.go(((await res.json()) as { redirectTo: string }).redirectTo)
  }

  /** Visits an authorization (or end-session) URL and does what the hosted pages ask until it leaves Gatehouse. */
  async visit(url: string, init: RequestInit = {}): Promise<Visit> {
    const visit: Visit = { at: await this.go(url, init), signInPages: 0, consentPages: 0 }
    for (let step = 0; step < 4; step++) {
      if (visit.at.pathname === '/api/auth/ui/sign-in') {
        visit.signInPages++
        await this.signIn()
        visit.at = await this.go(visit.at.searchParams.get('returnTo') as string)
      } else if (visit.at.pathname === '/api/auth/ui/consent') {
        visit.consentPages++
        visit.at = await this.consent(visit.at)
      } else return visit
    }
    throw new Error(`the hosted pages kept asking: ${visit.at.href}`)
  }
}

/** One authorization request as the suite builds it (code flow, state, nonce, PKCE S256 unless told otherwise). */
export interface AuthRequest {
  url: URL
  state: string
  nonce: string | undefined
  verifier: string | undefined
}

export async function authRequest(
  rp: Rp,
  params: Record<string, string> = {},
  options: { nonce?: boolean; pkce?: boolean } = {},
): Promise<AuthRequest> {
  const state = oidc.randomState()
  const nonce = options.nonce === false ? undefined : oidc.randomNonce()
  const verifier = options.pkce === false ? undefined : oidc.randomPKCECodeVerifier()
  const url = oidc.buildAuthorizationUrl(rp.config, {
    redirect_uri: CALLBACK,
    scope: 'openid',
    state,
    ...(nonce ? { nonce } : {}),
    ...(verifier ? { code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' } : {}),
    ...params,
  })
  return { url, state, nonce, verifier }
}

/** The token request for the code on `callback`, every check of openid-client on (state, nonce, PKCE, ID token). */
export function exchange(rp: Rp, request: AuthRequest, callback: URL, checks: { maxAge?: number } = {}) {
  return oidc.authorizationCodeGrant(rp.config, callback, {
    expectedState: request.state,
    // Without a nonce in the request, openid-client requires the ID token to carry none.
    ...(request.nonce ? { expectedNonce: request.nonce } : {}),
    ...(request.verifier ? { pkceCodeVerifier: request.verifier } : {}),
    ...(checks.maxAge !== undefined ? { maxAge: checks.maxAge } : {}),
  })
}

/** Asserts the browser came back to the callback with a code and this request's state. */
export function expectCode(visit: Visit, request: AuthRequest): void {
  expect(visit.at.origin + visit.at.pathname, visit.at.href).toBe(CALLBACK)
  expect(visit.at.searchParams.get('error'), visit.at.href).toBeNull()
  expect(visit.at.searchParams.get('code')).toBeTruthy()
  expect(visit.at.searchParams.get('state')).toBe(request.state)
}

/** Asserts the browser came back to the callback with this error and the request's state. */
export function expectError(visit: Visit, request: AuthRequest, error: string): void {
  expect(visit.at.origin + visit.at.pathname, visit.at.href).toBe(CALLBACK)
  expect(visit.at.searchParams.get('error'), visit.at.href).toBe(error)
  expect(visit.at.searchParams.get('state')).toBe(request.state)
  expect(visit.at.searchParams.get('code')).toBeNull()
}

/** A ResponseBodyError's error code (or the thrown value when it is something else). */
export async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  )
  if (error instanceof oidc.ResponseBodyError) return error.error
  throw error
}
