import { defineProvider, type ProviderProfile, str } from '../types.js'

const ISSUER = 'https://appleid.apple.com'

/** Apple sends the user's name once, on first consent, as a JSON `user` form field. */
function nameFromCallback(raw: string | undefined): string | null {
  if (!raw) return null
  try {
    const parsed = JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } }
    const parts = [str(parsed.name?.firstName), str(parsed.name?.lastName)].filter(Boolean)
    return parts.length > 0 ? parts.join(' ') : null
  } catch {
    return null
  }
}

const fromClaims = (c: Record<string, unknown>, name: string | null): ProviderProfile | null => {
  const id = str(c.sub)
  if (!id) return null
  const email = str(c.email)
  return {
    user: {
      id,
      name: name ?? str(c.name) ?? email ?? '',
      email,
      image: null,
      emailVerified: c.email_verified === true || c.email_verified === 'true',
    },
    data: c,
  }
}

/**
 * Sign in with Apple: form_post callback, profile from the ID token, the name from the `user`
 * field of the first sign-in. The client secret is the JWT the operator generated for Apple.
 */
export const apple = defineProvider({
  id: 'apple',
  name: 'Apple',
  endpoints: () => ({
    authorization: 'https://appleid.apple.com/auth/authorize',
    token: 'https://appleid.apple.com/auth/token',
    jwks: 'https://appleid.apple.com/auth/keys',
  }),
  scopes: ['email', 'name'],
  pkce: true,
  tokenAuth: 'post',
  responseType: 'code id_token',
  authorizationParams: () => ({ response_mode: 'form_post' }),
  idTokenIssuer: () => [ISSUER],
  idTokenSignIn: {
    jwksEndpoint: 'jwks',
    issuers: () => [ISSUER],
    audiences: (o, clientId) => [o.appBundleIdentifier ?? clientId],
    algorithms: ['RS256', 'ES256'],
    maxTokenAge: '1h',
    keysUnavailable: 'KEYS_NOT_FOUND',
  },
  profileFromIdToken: (claims) => fromClaims(claims, null),
  getUserInfo: async (pc) => {
    const claims = pc.idTokenClaims()
    return claims ? fromClaims(claims, nameFromCallback(pc.callback.user)) : null
  },
  refresh: true,
})
