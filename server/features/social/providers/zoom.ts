import { defineProvider, str } from '../types.js'

interface ZoomUser {
  id: string
  display_name?: string
  first_name?: string
  last_name?: string
  email?: string
  pic_url?: string
  verified?: number | boolean
}

/** Zoom: no scope parameter (scopes are set on the app), Basic client authentication, PKCE. */
export const zoom = defineProvider({
  id: 'zoom',
  name: 'Zoom',
  endpoints: () => ({
    authorization: 'https://zoom.us/oauth/authorize',
    token: 'https://zoom.us/oauth/token',
    userInfo: 'https://api.zoom.us/v2/users/me',
  }),
  scopes: [],
  pkce: true,
  tokenAuth: 'basic',
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as ZoomUser
    if (!str(u.id)) return null
    const fallback = [str(u.first_name), str(u.last_name)].filter(Boolean).join(' ')
    return {
      user: {
        id: u.id,
        name: str(u.display_name) ?? fallback,
        email: str(u.email),
        image: str(u.pic_url),
        emailVerified: Boolean(u.verified),
      },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
