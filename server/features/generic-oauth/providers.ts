import type { AuthContext } from '../../core/context.js'
import type { ExtraOAuthProvider, ExtraProfile, ExtraProfileInput, OAuthProviderSource } from '../../core/oauth-providers.js'
import { revealSecret } from '../../crypto/encrypt.js'
import type { GenericOAuthProviderConfig } from './config.js'
import { discover, probeDiscovery } from './discovery.js'
import { discoveryProblem } from './errors.js'

/** The purpose a sealed client secret is bound to: the same as the social providers' (the panel seals). */
export const CLIENT_SECRET_PURPOSE = 'client-secret'

/** better-auth's parseStringBoolean: true/"true", false/"false", else undefined. */
const stringBoolean = (v: unknown): boolean | undefined =>
  v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)
const subject = (v: unknown): string | null => (typeof v === 'string' || typeof v === 'number' ? String(v) : null)

/** The raw profile an ID token's claims make, when they carry `sub` and `email` (better-auth 1.7's fetchUserInfo). */
const rawFromClaims = (claims: Record<string, unknown> | null): Record<string, unknown> | null =>
  claims?.sub && claims.email
    ? { id: claims.sub, emailVerified: stringBoolean(claims.email_verified) ?? false, image: claims.picture, ...claims }
    : null

/**
 * Maps a raw profile (better-auth 1.7's resolveUserInfo and accountSubject): its `sub` must be the
 * verified ID token's; the account id is the OpenID subject (`sub`) for an OpenID provider
 * (discovery with signing algorithms), the profile's `id` for a plain OAuth 2.0 one.
 */
function mapProfile(
  raw: Record<string, unknown>,
  claims: Record<string, unknown> | null,
  isOidc: boolean,
  verified: boolean,
): ExtraProfile | null {
  if (verified && claims?.sub !== undefined && subject(raw.sub) !== String(claims.sub)) return null
  const id = isOidc ? (verified && claims ? subject(claims.sub) : subject(raw.sub)) : subject(raw.id)
  if (!id || id.trim() === '') return null
  return {
    user: {
      id,
      name: text(raw.name) ?? '',
      email: text(raw.email),
      image: text(raw.image),
      emailVerified: stringBoolean(raw.emailVerified) ?? false,
    },
    data: raw,
  }
}

/**
 * The user a generic provider names after a code exchange: the ID token's claims when they carry
 * `sub` and `email`, else the userinfo endpoint.
 */
async function readProfile(
  input: ExtraProfileInput,
  userInfoUrl: string | undefined,
  isOidc: boolean,
  verified: boolean,
): Promise<ExtraProfile | null> {
  const claims = input.idTokenClaims
  let raw = rawFromClaims(claims)
  if (!raw && userInfoUrl && input.accessToken) {
    let data: unknown
    try {
      data = await input.fetchJson(userInfoUrl)
    } catch {
      return null
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) return null
    const info = data as Record<string, unknown>
    raw = { ...info, emailVerified: stringBoolean(info.email_verified) ?? false, image: info.picture }
  }
  return raw ? mapProfile(raw, claims, isOidc, verified) : null
}

/** One configured provider, resolved: discovery fetched, secret opened. Null: unusable now. */
export async function resolveGenericProvider(ctx: AuthContext, conf: GenericOAuthProviderConfig): Promise<ExtraOAuthProvider | null> {
  let { authorizationUrl, tokenUrl, userInfoUrl } = conf
  let issuer: string | undefined
  let isOidc = false
  let idToken: ExtraOAuthProvider['idToken']
  if (conf.discoveryUrl) {
    const doc = await discover(ctx, conf.discoveryUrl, conf.discoveryHeaders)
    if (doc) {
      authorizationUrl ??= doc.authorization_endpoint
      tokenUrl ??= doc.token_endpoint
      userInfoUrl ??= doc.userinfo_endpoint
      issuer = doc.issuer
      const algorithms = doc.id_token_signing_alg_values_supported
      isOidc = Array.isArray(algorithms) && algorithms.length > 0
      if (doc.jwks_uri && doc.issuer) {
        let jwksUrl: URL
        try {
          jwksUrl = new URL(doc.jwks_uri, conf.discoveryUrl)
        } catch {
          return null
        }
        idToken = {
          jwksUrl: jwksUrl.toString(),
          issuer: doc.issuer,
          algorithms: isOidc ? algorithms : undefined,
          nonce: !conf.disableIdTokenNonceBinding,
        }
      }
    }
  }
  if (!authorizationUrl || !tokenUrl) return null
  if (conf.requireIdTokenVerification && !idToken) return null
  const scopes = [...conf.scopes]
  if (isOidc && !scopes.includes('openid')) scopes.unshift('openid')
  const authorizationParams: Record<string, string> = {}
  if (conf.prompt) authorizationParams.prompt = conf.prompt
  if (conf.accessType) authorizationParams.access_type = conf.accessType
  if (conf.responseMode) authorizationParams.response_mode = conf.responseMode
  Object.assign(authorizationParams, conf.authorizationUrlParams)
  const verified = idToken !== undefined
  return {
    id: conf.providerId,
    name: conf.name ?? conf.providerId,
    clientId: conf.clientId,
    clientSecret: revealSecret(ctx.secret, conf.clientSecret, CLIENT_SECRET_PURPOSE),
    authorizationUrl,
    tokenUrl,
    userInfoUrl,
    issuer,
    idToken,
    scopes,
    pkce: conf.pkce,
    tokenAuth: conf.authentication,
    authorizationParams,
    responseType: conf.responseType,
    tokenParams: conf.tokenUrlParams,
    tokenHeaders: conf.authorizationHeaders,
    refreshParams: conf.refreshTokenParams,
    accessTokenExpiresIn: conf.accessTokenExpiresIn,
    redirectURI: conf.redirectURI,
    disableSignUp: conf.disableSignUp,
    disableImplicitSignUp: conf.disableImplicitSignUp,
    overrideUserInfo: conf.overrideUserInfo,
    profile: (input) => readProfile(input, userInfoUrl, isOidc, verified),
    profileFromClaims: (claims) => {
      const raw = rawFromClaims(claims)
      return raw ? mapProfile(raw, claims, isOidc, true) : null
    },
  }
}

export const genericProviderConfigs = (ctx: AuthContext): GenericOAuthProviderConfig[] => ctx.config().genericOAuth.config

/** What the feature offers the social engine (Feature.oauthProviders). */
export const genericOAuthProviders: OAuthProviderSource = {
  list: (ctx) => genericProviderConfigs(ctx).map((c) => ({ id: c.providerId, name: c.name ?? c.providerId })),
  async resolve(ctx, id) {
    const conf = genericProviderConfigs(ctx).find((c) => c.providerId === id)
    return conf ? resolveGenericProvider(ctx, conf) : null
  },
  async explain(ctx, id) {
    const conf = genericProviderConfigs(ctx).find((c) => c.providerId === id)
    if (!conf?.discoveryUrl) return null
    const probe = await probeDiscovery(conf.discoveryUrl, conf.discoveryHeaders)
    return 'problem' in probe ? discoveryProblem(conf.discoveryUrl, probe) : null
  },
}
