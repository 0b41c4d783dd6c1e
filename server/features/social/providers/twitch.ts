import { defineProvider, str } from '../types.js'

const CLAIMS = JSON.stringify({ id_token: { email: null, email_verified: null, preferred_username: null, picture: null } })

/** Twitch (OpenID Connect): the profile comes from the ID token, whose claims are requested explicitly. */
export const twitch = defineProvider({
  id: 'twitch',
  name: 'Twitch',
  endpoints: () => ({
    authorization: 'https://id.twitch.tv/oauth2/authorize',
    token: 'https://id.twitch.tv/oauth2/token',
  }),
  scopes: ['user:read:email', 'openid'],
  pkce: false,
  tokenAuth: 'post',
  authorizationParams: () => ({ claims: CLAIMS }),
  idTokenIssuer: () => ['https://id.twitch.tv/oauth2'],
  getUserInfo: async (pc) => {
    const c = pc.idTokenClaims()
    const id = c ? str(c.sub) : null
    if (!c || !id) return null
    return {
      user: {
        id,
        name: str(c.preferred_username) ?? '',
        email: str(c.email),
        image: str(c.picture),
        emailVerified: c.email_verified === true,
      },
      data: c,
    }
  },
  refresh: true,
})
