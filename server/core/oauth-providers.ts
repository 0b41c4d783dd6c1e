import type { AuthContext } from './context.js'

/**
 * An OAuth 2.0 / OpenID Connect provider that a feature adds to the social sign-in engine at run
 * time (the generic-oauth feature's `genericOAuth.config`), resolved: endpoints known (discovery
 * done), secrets opened. The social engine runs it exactly as one of its built-in providers: the
 * same state, PKCE, code exchange, account-linking rules and sign-in pipeline. Core owns this shape
 * so that the feature that supplies providers and the feature that runs them need not import each
 * other (Feature.oauthProviders, server/feature.ts).
 */
export interface ExtraOAuthProvider {
  id: string
  /** Shown on the sign-in page's button and in the panel. */
  name: string
  clientId: string
  clientSecret: string | null
  authorizationUrl: string
  tokenUrl: string
  userInfoUrl?: string
  /** The discovered issuer: a callback's `iss` must equal it (RFC 9207). */
  issuer?: string
  /** ID tokens are verified against the provider's key set (discovery with issuer and jwks_uri). */
  idToken?: {
    jwksUrl: string
    issuer: string
    /** The discovered id_token_signing_alg_values_supported; absent: any asymmetric algorithm. */
    algorithms?: string[]
    /** A `nonce` is sent with each authorization request and the ID token must echo it. */
    nonce: boolean
  }
  /** Every scope of the authorization request (openid included for an OpenID provider). */
  scopes: string[]
  pkce: boolean
  tokenAuth: 'basic' | 'post'
  /** Extra authorization request parameters (prompt, access_type, response_mode, authorizationUrlParams). */
  authorizationParams: Record<string, string>
  responseType?: string
  /** Extra token request parameters (tokenUrlParams). */
  tokenParams: Record<string, string>
  /** Extra headers of token requests (authorizationHeaders). */
  tokenHeaders: Record<string, string>
  /** Extra refresh request parameters (refreshTokenParams). */
  refreshParams: Record<string, string>
  /** Lifetime assumed for an access token whose response has no expires_in, in seconds. */
  accessTokenExpiresIn?: number
  redirectURI?: string
  disableSignUp: boolean
  disableImplicitSignUp: boolean
  overrideUserInfo: boolean
  /**
   * Reads the user: from the (already verified) ID token claims or the userinfo endpoint. Null
   * refuses the sign-in (unable_to_get_user_info).
   */
  profile(input: ExtraProfileInput): Promise<ExtraProfile | null>
  /**
   * The user named by the claims of an ID token an app hands in (`idToken` in /sign-in/social),
   * already verified against `idToken`'s key set; null refuses it. Only used when `idToken` is set.
   */
  profileFromClaims(claims: Record<string, unknown>): ExtraProfile | null
}

export interface ExtraProfileInput {
  accessToken?: string
  idToken?: string
  /** Claims of the ID token: verified against the key set when the provider has one, else only decoded. */
  idTokenClaims: Record<string, unknown> | null
  /** GET a JSON document with the bearer access token; throws on a non-2xx answer. */
  fetchJson(url: string): Promise<unknown>
}

export interface ExtraProfile {
  user: { id: string; name: string; email: string | null; image: string | null; emailVerified: boolean }
  data: Record<string, unknown>
}

/** What a feature offering providers answers (Feature.oauthProviders). */
export interface OAuthProviderSource {
  /** The providers offered now, by id and name, in order (the sign-in page's buttons, the panel). */
  list(ctx: AuthContext): { id: string; name: string }[]
  /** The provider `id` resolved (discovery fetched when needed), or null: unknown, off or unreachable. */
  resolve(ctx: AuthContext, id: string): Promise<ExtraOAuthProvider | null>
  /**
   * Why `resolve` gives null for a provider `list` offers (its discovery document unreachable…),
   * for the panel's test sign-in to say instead of "not found"; null when there is nothing to say.
   */
  explain?(ctx: AuthContext, id: string): Promise<ProviderProblem | null>
}

/** Why an offered provider cannot be used now, in the offering feature's words and code. */
export interface ProviderProblem {
  status: number
  code: string
  message: string
  /** The setting it concerns (the panel shows the message beside it). */
  field: string
  fieldMessage: string
}
