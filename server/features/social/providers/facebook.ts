import { defineProvider, type ProviderProfile, str } from '../types.js'

const ISSUERS = ['https://www.facebook.com', 'https://limited.facebook.com']

const fromClaims = (c: Record<string, unknown>): ProviderProfile | null => {
  const id = str(c.sub)
  if (!id) return null
  return {
    // Limited Login tokens document no verification claim: the address is not vouched for
    // (better-auth 1.7 answers false too), unless a token ever carries email_verified.
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

interface GraphUser {
  id: string
  name?: string
  email?: string
  email_verified?: boolean
  picture?: { data?: { url?: string } }
}

/** Facebook Login: Graph API profile, or Limited Login ID tokens (RS256 only). */
export const facebook = defineProvider({
  id: 'facebook',
  name: 'Facebook',
  endpoints: () => ({
    authorization: 'https://www.facebook.com/v21.0/dialog/oauth',
    token: 'https://graph.facebook.com/oauth/access_token',
    userInfo: 'https://graph.facebook.com/me',
    jwks: 'https://limited.facebook.com/.well-known/oauth/openid/jwks/',
  }),
  scopes: ['email', 'public_profile'],
  pkce: false,
  tokenAuth: 'post',
  authorizationParams: (o) => ({ config_id: o.configId }),
  idTokenIssuer: () => ISSUERS,
  idTokenSignIn: {
    jwksEndpoint: 'jwks',
    issuers: () => ISSUERS,
    audiences: (_o, clientId) => [clientId],
    algorithms: ['RS256'],
  },
  profileFromIdToken: (claims) => fromClaims(claims),
  getUserInfo: async (pc) => {
    const claims = pc.idTokenClaims()
    if (claims) return fromClaims(claims)
    const fields = [...new Set(['id', 'name', 'email', 'picture', ...pc.options.fields])].join(',')
    const url = new URL(pc.endpoints.userInfo)
    url.searchParams.set('fields', fields)
    const u = (await pc.fetchJson(url.toString())) as GraphUser
    if (!str(u.id)) return null
    return {
      user: {
        id: u.id,
        name: str(u.name) ?? '',
        email: str(u.email),
        image: str(u.picture?.data?.url),
        emailVerified: u.email_verified === true,
      },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
