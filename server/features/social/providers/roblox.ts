import { defineProvider, placeholderEmail, str } from '../types.js'

/** Roblox (OpenID Connect userinfo): no email is available, so the account gets a placeholder address. */
export const roblox = defineProvider({
  id: 'roblox',
  name: 'Roblox',
  endpoints: () => ({
    authorization: 'https://apis.roblox.com/oauth/v1/authorize',
    token: 'https://apis.roblox.com/oauth/v1/token',
    userInfo: 'https://apis.roblox.com/oauth/v1/userinfo',
  }),
  scopes: ['openid', 'profile'],
  pkce: false,
  tokenAuth: 'post',
  authorizationParams: (o) => ({ prompt: o.prompt ?? 'select_account consent' }),
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as Record<string, unknown>
    const id = str(u.sub)
    if (!id) return null
    return {
      user: {
        id,
        name: str(u.nickname) ?? str(u.preferred_username) ?? '',
        email: placeholderEmail('roblox', id),
        image: str(u.picture),
        emailVerified: false,
      },
      data: u,
    }
  },
  refresh: true,
})
