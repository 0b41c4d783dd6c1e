import { defineProvider, placeholderEmail, str } from '../types.js'

interface RedditUser {
  id: string
  name: string
  icon_img?: string
  has_verified_email?: boolean
}

/** Reddit: Basic client authentication, `duration` for refresh tokens, no email (placeholder address). */
export const reddit = defineProvider({
  id: 'reddit',
  name: 'Reddit',
  endpoints: () => ({
    authorization: 'https://www.reddit.com/api/v1/authorize',
    token: 'https://www.reddit.com/api/v1/access_token',
    userInfo: 'https://oauth.reddit.com/api/v1/me',
  }),
  scopes: ['identity'],
  pkce: false,
  tokenAuth: 'basic',
  authorizationParams: (o) => ({ duration: o.duration }),
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as RedditUser
    if (!str(u.id)) return null
    const icon = str(u.icon_img)
    return {
      user: {
        id: u.id,
        name: str(u.name) ?? '',
        email: placeholderEmail('reddit', u.id),
        image: icon ? (icon.split('?')[0] ?? icon) : null,
        emailVerified: false,
      },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
