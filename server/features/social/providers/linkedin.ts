import { defineProvider, str } from '../types.js'

/** LinkedIn (Sign In with LinkedIn using OpenID Connect): GET /v2/userinfo. */
export const linkedin = defineProvider({
  id: 'linkedin',
  name: 'LinkedIn',
  endpoints: () => ({
    authorization: 'https://www.linkedin.com/oauth/v2/authorization',
    token: 'https://www.linkedin.com/oauth/v2/accessToken',
    userInfo: 'https://api.linkedin.com/v2/userinfo',
  }),
  scopes: ['profile', 'email', 'openid'],
  pkce: false,
  tokenAuth: 'post',
  authorizationParams: (_o, r) => ({ login_hint: r.loginHint }),
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as Record<string, unknown>
    const id = str(u.sub)
    if (!id) return null
    return {
      user: { id, name: str(u.name) ?? '', email: str(u.email), image: str(u.picture), emailVerified: u.email_verified === true },
      data: u,
    }
  },
  refresh: true,
})
