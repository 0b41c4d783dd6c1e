import type { AuthContext } from '../../core/context.js'
import type { SocialErrorCode } from './errors.js'
import type { EndpointName, ProviderId, ProviderOptions } from './options.js'

/** Tokens as the engine keeps them, whatever the provider's response looked like. */
export interface OAuthTokens {
  tokenType?: string
  accessToken?: string
  refreshToken?: string
  idToken?: string
  accessTokenExpiresAt?: Date
  refreshTokenExpiresAt?: Date
  scopes: string[]
  /** The token response as received (VK puts the user id there, TikTok the open_id). */
  raw: Record<string, unknown>
}

/** The provider's user, mapped to Gatehouse's user fields (SPEC §3). */
export interface MappedUser {
  /** The provider's stable account id, as a string. */
  id: string
  name: string
  email: string | null
  image: string | null
  emailVerified: boolean
}

export interface ProviderProfile {
  user: MappedUser
  /** The provider's raw profile, returned by /account-info as `data`. */
  data: Record<string, unknown>
}

/** What the engine lends a provider definition while it reads the profile. */
export interface ProfileContext<P extends ProviderId = ProviderId> {
  ctx: AuthContext
  options: ProviderOptions
  clientId: string
  endpoints: Record<EndpointName<P>, string>
  tokens: OAuthTokens
  /** Parameters the provider sent to the callback (Apple's `user`, VK's `device_id`). */
  callback: Record<string, string>
  /** GET (or POST) a JSON document with the bearer access token; throws on a non-2xx answer. */
  fetchJson(
    url: string,
    init?: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string | URLSearchParams; bearer?: boolean },
  ): Promise<unknown>
  /** The same, returning the raw bytes (Microsoft's photo); null on a non-2xx answer. */
  fetchBytes(url: string): Promise<Buffer | null>
  /** Claims of the ID token from the token endpoint, already checked (audience, expiry, issuer when known). */
  idTokenClaims(): Record<string, unknown> | null
}

export type TokenAuthMethod = 'post' | 'basic' | 'tiktok'

export interface IdTokenCheck {
  /** The key set URL's endpoint name. */
  jwksEndpoint: 'jwks'
  issuers: (options: ProviderOptions) => string[]
  audiences: (options: ProviderOptions, clientId: string) => string[]
  algorithms: string[]
  /** Apple: at most 1 hour old. */
  maxTokenAge?: string
  /** Answer when the key set cannot be fetched (Apple: 400 "Keys not found"). */
  keysUnavailable?: SocialErrorCode
}

/** One provider: a small declarative object (server/features/social/providers/<id>.ts). */
export interface ProviderDefinition<P extends ProviderId = ProviderId> {
  id: P
  name: string
  /** Default endpoint URLs; options.endpoints overrides any of them by name. */
  endpoints: (options: ProviderOptions) => Record<EndpointName<P>, string>
  scopes: string[]
  /** How scopes are joined in the authorization URL (TikTok uses commas). */
  scopeSeparator?: string
  pkce: boolean
  /** Google: refuses to start without client id and secret. */
  requireClientSecret?: boolean
  tokenAuth: TokenAuthMethod
  /** The query parameter carrying the client id (TikTok: client_key). */
  clientIdParam?: string
  /** Extra authorization parameters (prompt, access_type, response_mode…). */
  authorizationParams?: (options: ProviderOptions, request: { loginHint?: string }) => Record<string, string | undefined>
  /** response_type (Apple: "code id_token"). */
  responseType?: string
  /** Extra parameters for the code exchange, from the callback (VK: device_id, state). */
  tokenParams?: (callback: Record<string, string>) => Record<string, string | undefined>
  /** Extra parameters for a refresh (Microsoft: scope). */
  refreshParams?: (scopes: string[]) => Record<string, string>
  /**
   * Expected `iss` of ID tokens received from the token endpoint, when the provider has a fixed
   * one; the audience and expiry are always checked.
   */
  idTokenIssuer?: (options: ProviderOptions) => string[] | null
  /** ID-token sign-in (`idToken` in /sign-in/social): how to verify a token handed in by an app. */
  idTokenSignIn?: IdTokenCheck
  /** Maps claims of a verified ID token to a profile (id-token sign-in). */
  profileFromIdToken?: (claims: Record<string, unknown>, options: ProviderOptions) => ProviderProfile | null
  /**
   * ID tokens from the token endpoint are verified against this key set (generic OpenID providers
   * found by discovery); `nonce`: each authorization request sends one the ID token must echo.
   */
  idTokenVerification?: { jwksUrl: string; issuer: string; algorithms?: string[]; nonce: boolean }
  /** Extra headers of token requests. */
  tokenHeaders?: Record<string, string>
  /** Seconds an access token lives when the token response has no expires_in. */
  accessTokenExpiresIn?: number
  /** Reads the user; null means "refused" (GitLab inactive, VK without email) → unable_to_get_user_info. */
  getUserInfo: (pc: ProfileContext<P>) => Promise<ProviderProfile | null>
  refresh: boolean
}

/** Marks a value as a provider definition with its endpoint names checked. */
export const defineProvider = <P extends ProviderId>(def: ProviderDefinition<P>): ProviderDefinition<P> => def

export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

/** Placeholder address for providers that give no email (better-auth 1.7): never matches a real user. */
export const placeholderEmail = (provider: ProviderId, id: string): string =>
  `${id.toLowerCase().replace(/[^a-z0-9._-]/g, '-')}@${provider}.placeholder.invalid`
