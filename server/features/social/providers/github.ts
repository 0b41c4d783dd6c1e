import { defineProvider, str } from '../types.js'

interface GitHubUser {
  id: number
  login: string
  name?: string | null
  email?: string | null
  avatar_url?: string
}
interface GitHubEmail {
  email: string
  primary: boolean
  verified: boolean
}

/** GitHub: /user plus /user/emails (the profile email may be hidden; verification comes from the list). */
export const github = defineProvider({
  id: 'github',
  name: 'GitHub',
  endpoints: () => ({
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    userInfo: 'https://api.github.com/user',
    emails: 'https://api.github.com/user/emails',
  }),
  scopes: ['read:user', 'user:email'],
  pkce: true,
  tokenAuth: 'post',
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as GitHubUser
    if (u.id === undefined || u.id === null) return null
    let emails: GitHubEmail[] = []
    try {
      const list = await pc.fetchJson(pc.endpoints.emails)
      if (Array.isArray(list)) emails = list as GitHubEmail[]
    } catch {
      // Without the user:email scope the list is refused; the profile email still counts.
    }
    const email = str(u.email) ?? (emails.find((e) => e.primary) ?? emails[0])?.email ?? null
    const emailVerified = emails.find((e) => email !== null && e.email.toLowerCase() === email.toLowerCase())?.verified ?? false
    return {
      user: { id: String(u.id), name: str(u.name) ?? u.login, email, image: str(u.avatar_url), emailVerified },
      data: { ...u, emails } as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
