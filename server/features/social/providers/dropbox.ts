import { defineProvider, str } from '../types.js'

interface DropboxAccount {
  account_id: string
  name?: { display_name?: string }
  email?: string
  email_verified?: boolean
  profile_photo_url?: string
}

/** Dropbox: POST /2/users/get_current_account (an RPC call with no arguments). */
export const dropbox = defineProvider({
  id: 'dropbox',
  name: 'Dropbox',
  endpoints: () => ({
    authorization: 'https://www.dropbox.com/oauth2/authorize',
    token: 'https://api.dropboxapi.com/oauth2/token',
    userInfo: 'https://api.dropboxapi.com/2/users/get_current_account',
  }),
  scopes: ['account_info.read'],
  pkce: true,
  tokenAuth: 'post',
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo, { method: 'POST' })) as DropboxAccount
    if (!str(u.account_id)) return null
    return {
      user: {
        id: u.account_id,
        name: str(u.name?.display_name) ?? '',
        email: str(u.email),
        image: str(u.profile_photo_url),
        emailVerified: u.email_verified === true,
      },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
