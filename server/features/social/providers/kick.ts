import { defineProvider, str } from '../types.js'

interface KickUser {
  user_id: number | string
  name?: string
  email?: string
  profile_picture?: string
}

/** Kick: GET /public/v1/users → data[0]. Kick does not report email verification. */
export const kick = defineProvider({
  id: 'kick',
  name: 'Kick',
  endpoints: () => ({
    authorization: 'https://id.kick.com/oauth/authorize',
    token: 'https://id.kick.com/oauth/token',
    userInfo: 'https://api.kick.com/public/v1/users',
  }),
  scopes: ['user:read'],
  pkce: true,
  tokenAuth: 'post',
  getUserInfo: async (pc) => {
    const body = (await pc.fetchJson(pc.endpoints.userInfo)) as { data?: KickUser[] }
    const u = body.data?.[0]
    if (!u || u.user_id === undefined || u.user_id === null) return null
    return {
      user: { id: String(u.user_id), name: str(u.name) ?? '', email: str(u.email), image: str(u.profile_picture), emailVerified: false },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
