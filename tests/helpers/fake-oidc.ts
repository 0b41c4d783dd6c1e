import { randomBytes } from 'node:crypto'
import { basicCredentials, createSigningKey, FakeProvider, type RecordedRequest, s256, type SigningKey } from './oauth-fakes.js'

/** Who the fake provider says signed in. */
export interface FakeOidcUser {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
  picture?: string
}

interface IssuedCode {
  clientId: string
  redirectUri: string
  challenge: string | null
  nonce: string | null
  scope: string
  user: FakeOidcUser
}

/**
 * An OpenID provider on loopback, small enough to misbehave on request: a discovery document, a
 * JWKS with a real RSA key, an authorization endpoint that signs `user` in at once (302 back with
 * code, state and iss), a token endpoint that checks the client's secret, the redirect URI and the
 * PKCE verifier and answers RS256-signed ID tokens echoing the nonce, and a userinfo endpoint.
 * `tamper` bends the next ID tokens (another key, audience, nonce, issuer); `authorizeError` makes
 * the authorization endpoint answer with an error instead.
 */
export class FakeOidc {
  readonly http = new FakeProvider()
  key!: SigningKey
  /** A key the provider does not publish. */
  strangerKey!: SigningKey
  user: FakeOidcUser = { sub: 'sub-1', email: 'someone@example.com', email_verified: true, name: 'Someone' }
  tamper: { key?: SigningKey; aud?: string; nonce?: string; iss?: string; noIdToken?: boolean } = {}
  authorizeError: string | null = null
  /** The time ID tokens are issued at (the server under test's clock), ms. */
  now: () => number = Date.now
  /** Ask for PKCE at the token endpoint (S256). */
  requirePkce = true
  readonly codes = new Map<string, IssuedCode>()
  private readonly accessTokens = new Map<string, FakeOidcUser>()

  constructor(
    readonly clientId: string,
    readonly clientSecret: string,
  ) {}

  get issuer(): string {
    return this.http.url
  }

  get discoveryUrl(): string {
    return `${this.http.url}/.well-known/openid-configuration`
  }

  async start(): Promise<this> {
    this.key = await createSigningKey('RS256')
    this.strangerKey = await createSigningKey('RS256')
    await this.http.start()
    this.http
      .on('GET', '/.well-known/openid-configuration', () => ({
        json: {
          issuer: this.issuer,
          authorization_endpoint: `${this.issuer}/authorize`,
          token_endpoint: `${this.issuer}/token`,
          userinfo_endpoint: `${this.issuer}/userinfo`,
          jwks_uri: `${this.issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
        },
      }))
      .on('GET', '/jwks', () => ({ json: { keys: [this.key.publicJwk] } }))
      .on('GET', '/authorize', (req) => this.authorize(req))
      .on('POST', '/token', (req) => this.token(req))
      .on('GET', '/userinfo', (req) => {
        const token = req.headers.authorization?.replace(/^Bearer /, '') ?? ''
        const user = this.accessTokens.get(token)
        return user ? { json: { ...user } } : { status: 401, json: { error: 'invalid_token' } }
      })
    return this
  }

  private authorize(req: RecordedRequest) {
    const q = req.query
    const redirectUri = q.get('redirect_uri') ?? ''
    const back = new URL(redirectUri)
    const state = q.get('state')
    if (this.authorizeError) {
      back.searchParams.set('error', this.authorizeError)
      back.searchParams.set('error_description', 'The user said no')
      if (state) back.searchParams.set('state', state)
      return { status: 302, headers: { location: back.toString() } }
    }
    if (q.get('client_id') !== this.clientId || q.get('response_type') !== 'code')
      return { status: 400, json: { error: 'invalid_request' } }
    if (this.requirePkce && q.get('code_challenge_method') !== 'S256') return { status: 400, json: { error: 'invalid_request' } }
    const code = randomBytes(16).toString('hex')
    this.codes.set(code, {
      clientId: this.clientId,
      redirectUri,
      challenge: q.get('code_challenge'),
      nonce: q.get('nonce'),
      scope: q.get('scope') ?? '',
      user: { ...this.user },
    })
    back.searchParams.set('code', code)
    if (state) back.searchParams.set('state', state)
    back.searchParams.set('iss', this.issuer)
    return { status: 302, headers: { location: back.toString() } }
  }

  private async token(req: RecordedRequest) {
    const basic = basicCredentials(req)
    const id = basic?.id ?? req.form.get('client_id')
    const secret = basic?.secret ?? req.form.get('client_secret')
    if (id !== this.clientId || secret !== this.clientSecret) return { status: 401, json: { error: 'invalid_client' } }
    if (req.form.get('grant_type') === 'refresh_token') {
      const access = randomBytes(16).toString('hex')
      this.accessTokens.set(access, this.user)
      return { json: { access_token: access, token_type: 'Bearer', expires_in: 3600 } }
    }
    const code = req.form.get('code') ?? ''
    const issued = this.codes.get(code)
    this.codes.delete(code)
    if (!issued || req.form.get('grant_type') !== 'authorization_code') return { status: 400, json: { error: 'invalid_grant' } }
    if (req.form.get('redirect_uri') !== issued.redirectUri) return { status: 400, json: { error: 'invalid_grant' } }
    if (issued.challenge && s256(req.form.get('code_verifier') ?? '') !== issued.challenge)
      return { status: 400, json: { error: 'invalid_grant', error_description: 'PKCE verification failed' } }
    const access = randomBytes(16).toString('hex')
    this.accessTokens.set(access, issued.user)
    const t = this.tamper
    const claims: Record<string, unknown> = {
      iss: t.iss ?? this.issuer,
      aud: t.aud ?? this.clientId,
      ...issued.user,
    }
    const nonce = t.nonce ?? issued.nonce
    if (nonce) claims.nonce = nonce
    const idToken = t.noIdToken ? undefined : await (t.key ?? this.key).sign(claims, { issuedAt: Math.floor(this.now() / 1000) })
    return {
      json: {
        access_token: access,
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: randomBytes(16).toString('hex'),
        scope: issued.scope,
        ...(idToken && issued.scope.split(' ').includes('openid') ? { id_token: idToken } : {}),
      },
    }
  }

  /** The provider's redirect back for an authorization URL (the user signs in at once). */
  async authorizeRedirect(authorizationURL: string): Promise<URL> {
    const response = await fetch(authorizationURL, { redirect: 'manual' })
    const location = response.headers.get('location')
    if (response.status !== 302 || !location) throw new Error(`authorize answered ${response.status}: ${await response.text()}`)
    return new URL(location)
  }

  close(): Promise<void> {
    return this.http.close()
  }
}
