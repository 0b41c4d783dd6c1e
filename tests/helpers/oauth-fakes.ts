import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import Provider from 'oidc-provider'
import { CookieJar } from './http.js'

// ------------------------------------------------------------------ a browser with one jar per origin

/** A browser-like client: cookies kept per origin, redirects followed by hand. */
export class Browser {
  private readonly jars = new Map<string, CookieJar>()

  jar(origin: string): CookieJar {
    let jar = this.jars.get(origin)
    if (!jar) {
      jar = new CookieJar()
      this.jars.set(origin, jar)
    }
    return jar
  }

  async request(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url)
    const jar = this.jar(target.origin)
    const headers: Record<string, string> = { ...init.headers }
    const cookie = jar.header()
    if (cookie) headers.cookie = cookie
    const response = await fetch(target, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual' })
    jar.store(response)
    return response
  }

  /** POST JSON as the app's page would (Origin of the app). */
  postJson(url: string, body: unknown, origin: string): Promise<Response> {
    return this.request(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', origin } })
  }

  postForm(url: string, form: Record<string, string>, origin?: string): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
    if (origin) headers.origin = origin
    return this.request(url, { method: 'POST', body: new URLSearchParams(form).toString(), headers })
  }
}

export const locationOf = (response: Response, base: string): URL => {
  const location = response.headers.get('location')
  if (!location) throw new Error(`expected a redirect, got ${response.status}`)
  return new URL(location, base)
}

// ------------------------------------------------------------------ a real OpenID provider (oidc-provider)

export interface OidcAccount {
  sub: string
  email: string
  email_verified: boolean
  name: string
  picture?: string
}

export interface OidcProviderHandle {
  /** http://127.0.0.1:PORT */
  url: string
  issuer: string
  close(): Promise<void>
}

/**
 * panva's oidc-provider on loopback, as Google would behave: the given issuer, one confidential
 * client (client_secret_post) with PKCE required, dev interactions (login then consent).
 */
export async function startOidcProvider(options: {
  issuer: string
  clientId: string
  clientSecret: string
  redirectUris: string[]
  accounts: OidcAccount[]
}): Promise<OidcProviderHandle> {
  const provider = new Provider(options.issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: options.redirectUris,
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    findAccount: (_ctx, sub) => {
      const account = options.accounts.find((a) => a.sub === sub)
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    conformIdTokenClaims: false,
    cookies: { keys: ['oidc-test-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    ttl: { Interaction: 3600, Session: 86400, Grant: 86400, AccessToken: 3600, IdToken: 3600, AuthorizationCode: 60 },
  })
  const server = provider.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    issuer: options.issuer,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/**
 * Drives oidc-provider's dev interactions from the authorization URL: login as `sub`, grant
 * consent, and return the redirect back to the client (with code, state and iss).
 */
export async function authorizeAtOidcProvider(browser: Browser, authorizationURL: string, sub: string): Promise<URL> {
  let url = new URL(authorizationURL)
  const providerOrigin = url.origin
  for (let hop = 0; hop < 20; hop++) {
    if (url.origin !== providerOrigin) return url
    const response = await browser.request(url.toString())
    if (response.status >= 300 && response.status < 400) {
      url = locationOf(response, url.toString())
      continue
    }
    const html = await response.text()
    if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${html.slice(0, 300)}`)
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1] ?? (html.includes('name="login"') ? 'login' : 'consent')
    const form: Record<string, string> = prompt === 'login' ? { prompt, login: sub, password: 'any' } : { prompt }
    const submitted = await browser.postForm(url.toString(), form)
    url = locationOf(submitted, url.toString())
  }
  throw new Error('too many redirects at the provider')
}

// ------------------------------------------------------------------ a programmable loopback provider

export interface RecordedRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingMessage['headers']
  body: string
  form: URLSearchParams
}

export interface FakeAnswer {
  status?: number
  json?: unknown
  body?: string | Buffer
  headers?: Record<string, string>
}

export type FakeHandler = (req: RecordedRequest) => FakeAnswer | Promise<FakeAnswer>

/** A loopback HTTP server answering chosen paths like a provider's token, userinfo or key-set endpoints. */
export class FakeProvider {
  readonly requests: RecordedRequest[] = []
  private readonly routes = new Map<string, FakeHandler>()
  url = ''
  private server: Server | null = null

  on(method: string, path: string, handler: FakeHandler): this {
    this.routes.set(`${method} ${path}`, handler)
    return this
  }

  reset(): void {
    this.requests.length = 0
    this.routes.clear()
  }

  calls(method: string, path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path === path)
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res))
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', () => resolve()))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    const url = new URL(req.url ?? '/', this.url)
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      form: new URLSearchParams(body),
    }
    this.requests.push(recorded)
    const handler = this.routes.get(`${recorded.method} ${recorded.path}`)
    if (!handler) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}')
      return
    }
    try {
      const answer = await handler(recorded)
      const headers: Record<string, string> = { ...answer.headers }
      let payload: string | Buffer = ''
      if (answer.json !== undefined) {
        payload = JSON.stringify(answer.json)
        headers['content-type'] ??= 'application/json'
      } else if (answer.body !== undefined) payload = answer.body
      res.writeHead(answer.status ?? 200, headers).end(payload)
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error))
    }
  }

  close(): Promise<void> {
    this.server?.closeAllConnections()
    return new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }
}

/** base64url(SHA-256(verifier)): what a provider checks the PKCE verifier against. */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url')

/** Basic credentials as RFC 6749 §2.3.1 sends them, decoded; null when absent. */
export function basicCredentials(req: RecordedRequest): { id: string; secret: string } | null {
  const header = req.headers.authorization
  if (!header?.startsWith('Basic ')) return null
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) }
}

// ------------------------------------------------------------------ signing keys for ID tokens

export interface SigningKey {
  kid: string
  alg: 'RS256' | 'ES256'
  publicJwk: JWK
  sign(claims: Record<string, unknown>, options?: { issuedAt?: number; expiresIn?: number }): Promise<string>
}

export async function createSigningKey(alg: 'RS256' | 'ES256' = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const kid = randomUUID()
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
  return {
    kid,
    alg,
    publicJwk,
    async sign(claims, options = {}) {
      const iat = options.issuedAt ?? Math.floor(Date.now() / 1000)
      return new SignJWT(claims)
        .setProtectedHeader({ alg, kid, typ: 'JWT' })
        .setIssuedAt(iat)
        .setExpirationTime(iat + (options.expiresIn ?? 3600))
        .sign(privateKey)
    },
  }
}

/** An unsigned JWT (alg none) as a provider's token endpoint might carry claims for the code flow. */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`
}
