import { defineProvider, str } from '../types.js'

interface DiscordUser {
  id: string
  username?: string
  global_name?: string | null
  discriminator?: string
  avatar?: string | null
  email?: string | null
  verified?: boolean
}

function avatarURL(u: DiscordUser): string {
  if (u.avatar) return `https://cdn.discordapp.com/avatars/${u.id}/${u.avatar}.${u.avatar.startsWith('a_') ? 'gif' : 'png'}`
  const index = u.discriminator === '0' || !u.discriminator ? Number((BigInt(u.id) >> 22n) % 6n) : Number(u.discriminator) % 5
  return `https://cdn.discordapp.com/embed/avatars/${index}.png`
}

export const discord = defineProvider({
  id: 'discord',
  name: 'Discord',
  endpoints: () => ({
    authorization: 'https://discord.com/api/oauth2/authorize',
    token: 'https://discord.com/api/oauth2/token',
    userInfo: 'https://discord.com/api/users/@me',
  }),
  scopes: ['identify', 'email'],
  pkce: false,
  tokenAuth: 'post',
  authorizationParams: (o) => ({ prompt: o.prompt ?? 'none' }),
  getUserInfo: async (pc) => {
    const u = (await pc.fetchJson(pc.endpoints.userInfo)) as DiscordUser
    if (!str(u.id)) return null
    return {
      user: {
        id: u.id,
        name: str(u.global_name) ?? str(u.username) ?? '',
        email: str(u.email),
        image: avatarURL(u),
        emailVerified: u.verified === true,
      },
      data: u as unknown as Record<string, unknown>,
    }
  },
  refresh: true,
})
