import type { ExtraOAuthProvider } from '../../core/oauth-providers.js'
import { type ProviderId, type ProviderOptions, providerOptionsOf } from './options.js'
import type { ProviderDefinition } from './types.js'

/** Asymmetric algorithms accepted for ID tokens when the provider's discovery names none. */
const ANY_ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

/**
 * A provider a feature adds (core/oauth-providers.ts) as the engine's provider definition: the
 * same fields the 18 built-in ones declare, filled from its resolved configuration. The engine
 * names a provider by ResolvedProvider.id, so the definition's `id` is only carried along.
 */
export function extraDefinition(p: ExtraOAuthProvider): ProviderDefinition {
  const verified = p.idToken
  return {
    id: p.id as ProviderId,
    name: p.name,
    // Only the endpoints the provider has are named; the engine reads them by name where it uses them.
    endpoints: () =>
      ({
        authorization: p.authorizationUrl,
        token: p.tokenUrl,
        ...(p.userInfoUrl ? { userInfo: p.userInfoUrl } : {}),
        ...(verified ? { jwks: verified.jwksUrl } : {}),
      }) as ReturnType<ProviderDefinition['endpoints']>,
    scopes: p.scopes,
    pkce: p.pkce,
    tokenAuth: p.tokenAuth,
    authorizationParams: (_options, { loginHint }) => ({ ...p.authorizationParams, login_hint: loginHint }),
    responseType: p.responseType,
    tokenParams: () => p.tokenParams,
    refreshParams: () => p.refreshParams,
    tokenHeaders: p.tokenHeaders,
    accessTokenExpiresIn: p.accessTokenExpiresIn,
    idTokenIssuer: () => (p.issuer ? [p.issuer] : null),
    idTokenVerification: verified && {
      jwksUrl: verified.jwksUrl,
      issuer: verified.issuer,
      algorithms: verified.algorithms,
      nonce: verified.nonce,
    },
    // An app's own ID token (`idToken` in /sign-in/social) is accepted where a key set verifies it.
    idTokenSignIn: verified && {
      jwksEndpoint: 'jwks',
      issuers: () => [verified.issuer],
      audiences: (_options, clientId) => [clientId],
      algorithms: verified.algorithms ?? ANY_ASYMMETRIC,
    },
    profileFromIdToken: (claims) => p.profileFromClaims(claims),
    getUserInfo: (pc) =>
      p.profile({
        accessToken: pc.tokens.accessToken,
        idToken: pc.tokens.idToken,
        idTokenClaims: pc.idTokenClaims(),
        fetchJson: (url) => pc.fetchJson(url),
      }),
    refresh: true,
  }
}

/** The engine's per-provider options of an extra provider (sign-up rules, PKCE). */
export const extraOptions = (p: ExtraOAuthProvider): ProviderOptions =>
  providerOptionsOf({
    clientId: p.clientId,
    disableSignUp: p.disableSignUp,
    disableImplicitSignUp: p.disableImplicitSignUp,
    overrideUserInfoOnSignIn: p.overrideUserInfo,
    pkce: p.pkce,
  })
