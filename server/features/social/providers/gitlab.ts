import { defineProvider, str } from '../types.js'

interface GitLabUser {
  id: number
  username: string
  name?: string
  email?: string
  avatar_url?: string
  state?: string
  locked?: boolean
  confirmed_at?: string | null
}

/** `issuer` selects a self-managed instance; duplicate slashes are collapsed. */
const root = (issuer: string | undefined) => (issuer ?? 'https://gitlab.com').replace(/\/+$/, '')
const join = (base: string, path: string) => `${base}${path}`.replace(/([^:]\/)\/+/g, '$1')

/** GitLab (gitlab.com or self-managed): users that are not active, or locked, are refused. */
export const gitlab = defineProvider({
  id: 'gitlab',
  name: 'GitLab',
  endpoints: (o) => ({
    authorization: join(root(o.issuer), '/oauth/authorize'),
    token: join(root(o.issuer), '/oauth/token'),
    userInfo: join(root(o.issuer), '/api/v4/user'),
  }),
  scopes: ['read_user'],
  pkce: true,
  tokenAuth: 'post',
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as GitLabUser
    if (u.id === undefined || u.id === null) return null
    if (u.state !== 'active' || u.locked) return null
    return {
      user: {
        id: String(u.id),
        name: str(u.name) ?? u.username,
        email: str(u.email),
        image: str(u.avatar_url),
        emailVerified: Boolean(u.confirmed_at),
      },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
