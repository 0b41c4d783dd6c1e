import { defineProvider, type ProviderProfile, str } from '../types.js'

const ISSUERS = ['https://accounts.google.com', 'accounts.google.com']

const fromClaims = (c: Record<string, unknown>): ProviderProfile | null => {
  const id = str(c.sub)
  if (!id) return null
  return {
    user: {
      id,
      name: str(c.name) ?? '',
      email: str(c.email),
      image: str(c.picture),
      emailVerified: c.email_verified === true || c.email_verified === 'true',
    },
    data: c,
  }
}

/** Google (OpenID Connect): profile from the ID token; client id + secret and PKCE are mandatory. */
export const google = defineProvider({
  id: 'google',
  name: 'Google',
  endpoints: () => ({
    authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
    token: 'https://oauth2.googleapis.com/token',
    jwks: 'https://www.googleapis.com/oauth2/v3/certs',
  }),
  scopes: ['email', 'profile', 'openid'],
  pkce: true,
  requireClientSecret: true,
  tokenAuth: 'post',
  authorizationParams: (o, r) => ({
    access_type: o.accessType,
    display: o.display,
    hd: o.hd,
    login_hint: r.loginHint,
    include_granted_scopes: 'true',
  }),
  idTokenIssuer: () => ISSUERS,
  idTokenSignIn: {
    jwksEndpoint: 'jwks',
    issuers: () => ISSUERS,
    audiences: (_o, clientId) => [clientId],
    algorithms: ['RS256', 'ES256'],
  },
  profileFromIdToken: (claims) => fromClaims(claims),
  getUserInfo: async (pc) => {
    const claims = pc.idTokenClaims()
    return claims ? fromClaims(claims) : null
  },
  refresh: true,
})
