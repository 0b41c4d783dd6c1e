import { defineProvider, placeholderEmail, str } from '../types.js'

interface TikTokUser {
  open_id: string
  display_name?: string
  username?: string
  avatar_large_url?: string
}

/**
 * TikTok Login Kit: `client_key` instead of client_id, comma-separated scopes, credentials in
 * the token request body (never in the authorization URL). TikTok gives no email: the account
 * gets a placeholder address.
 */
export const tiktok = defineProvider({
  id: 'tiktok',
  name: 'TikTok',
  endpoints: () => ({
    authorization: 'https://www.tiktok.com/v2/auth/authorize/',
    token: 'https://open.tiktokapis.com/v2/oauth/token/',
    userInfo: 'https://open.tiktokapis.com/v2/user/info/',
  }),
  scopes: ['user.info.profile'],
  scopeSeparator: ',',
  pkce: false,
  tokenAuth: 'tiktok',
  clientIdParam: 'client_key',
  getUserInfo: async (pc) => {
    const url = new URL(pc.endpoints.userInfo)
    url.searchParams.set('fields', 'open_id,avatar_large_url,display_name,username')
    const body = (await pc.fetchJson(url.toString())) as { data?: { user?: TikTokUser }; error?: { code?: string } }
    const u = body.data?.user
    if (!u || !str(u.open_id) || (body.error?.code && body.error.code !== 'ok')) return null
    return {
      user: {
        id: u.open_id,
        name: str(u.display_name) ?? str(u.username) ?? '',
        email: placeholderEmail('tiktok', u.open_id),
        image: str(u.avatar_large_url),
        emailVerified: false,
      },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
