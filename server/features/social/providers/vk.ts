import { defineProvider, str } from '../types.js'

interface VkUser {
  user_id: string | number
  first_name?: string
  last_name?: string
  avatar?: string
  email?: string
}

/**
 * VK ID: PKCE, `device_id` and `state` echoed to the token endpoint, profile by POST with the
 * token in the form. Users without an email are refused (SPEC §5).
 */
export const vk = defineProvider({
  id: 'vk',
  name: 'VK',
  endpoints: () => ({
    authorization: 'https://id.vk.com/authorize',
    token: 'https://id.vk.com/oauth2/auth',
    userInfo: 'https://id.vk.com/oauth2/user_info',
  }),
  scopes: ['email', 'phone'],
  pkce: true,
  tokenAuth: 'post',
  tokenParams: (callback) => ({ device_id: callback.device_id, state: callback.state }),
  getUserInfo: async (pc) => {
    const form = new URLSearchParams({ access_token: pc.tokens.accessToken ?? '', client_id: pc.clientId })
    const body = (await pc.fetchJson(pc.endpoints.userInfo, {
      method: 'POST',
      bearer: false,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    })) as { user?: VkUser }
    const u = body.user
    if (!u || u.user_id === undefined || u.user_id === null) return null
    const email = str(u.email)
    if (!email) return null
    const name = [str(u.first_name), str(u.last_name)].filter(Boolean).join(' ')
    return {
      user: { id: String(u.user_id), name: name || email, email, image: str(u.avatar), emailVerified: false },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
