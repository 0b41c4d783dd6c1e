import { defineProvider, placeholderEmail, str } from '../types.js'

interface XUser {
  data?: { id?: string; name?: string; username?: string; profile_image_url?: string; confirmed_email?: string }
}

/**
 * X (Twitter) OAuth 2.0 with PKCE and Basic client authentication. The email is read with a
 * second call (`confirmed_email`); without one the account gets a placeholder address that can
 * never match a real user (better-auth 1.7).
 */
export const twitter = defineProvider({
  id: 'twitter',
  name: 'Twitter',
  endpoints: () => ({
    authorization: 'https://x.com/i/oauth2/authorize',
    token: 'https://api.x.com/2/oauth2/token',
    userInfo: 'https://api.x.com/2/users/me',
  }),
  scopes: ['users.read', 'tweet.read', 'offline.access', 'users.email'],
  pkce: true,
  tokenAuth: 'basic',
  getUserInfo: async (pc) => {
    const profileURL = new URL(pc.endpoints.userInfo)
    profileURL.searchParams.set('user.fields', 'profile_image_url')
    const profile = (await pc.fetchJson(profileURL.toString())) as XUser
    const id = str(profile.data?.id)
    if (!id || !profile.data) return null
    let confirmed: string | null = null
    try {
      const emailURL = new URL(pc.endpoints.userInfo)
      emailURL.searchParams.set('user.fields', 'confirmed_email')
      confirmed = str(((await pc.fetchJson(emailURL.toString())) as XUser).data?.confirmed_email)
    } catch {
      // The app lacks email access: fall back to the placeholder.
    }
    return {
      user: {
        id,
        name: str(profile.data.name) ?? str(profile.data.username) ?? '',
        email: confirmed ?? placeholderEmail('twitter', id),
        image: str(profile.data.profile_image_url),
        emailVerified: confirmed !== null,
      },
      data: { ...profile.data, ...(confirmed ? { confirmed_email: confirmed } : {}) },
    }
  },
  refresh: true,
})
