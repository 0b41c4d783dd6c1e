import { defineProvider, str } from '../types.js'

interface SpotifyUser {
  id: string
  display_name?: string | null
  email?: string
  images?: { url: string }[]
}

/** Spotify: GET /v1/me; Spotify does not say whether the email is verified. */
export const spotify = defineProvider({
  id: 'spotify',
  name: 'Spotify',
  endpoints: () => ({
    authorization: 'https://accounts.spotify.com/authorize',
    token: 'https://accounts.spotify.com/api/token',
    userInfo: 'https://api.spotify.com/v1/me',
  }),
  scopes: ['user-read-email'],
  pkce: true,
  tokenAuth: 'post',
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as SpotifyUser
    if (!str(u.id)) return null
    return {
      user: { id: u.id, name: str(u.display_name) ?? '', email: str(u.email), image: str(u.images?.[0]?.url), emailVerified: false },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
