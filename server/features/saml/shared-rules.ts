import type { AuthContext } from '../../core/context.js'

/**
 * TEMPORARY, until the lead's shared rules land on main (`server/core/bans.ts` `bannedNow`,
 * `server/features/groups/names.ts` `groupNamesOf`): the SAML feature calls them only through this
 * file, so the merge replaces these two bodies by re-exports and nothing else changes. Not a rule of
 * its own: the ban as every feature reads it, and the role names as `gatehouse:<role>` only.
 */
export function bannedNow(user: { banned: boolean | null; banExpires: Date | null }, now: number): boolean {
  return user.banned === true && (!user.banExpires || user.banExpires.getTime() > now)
}

export async function groupNamesOf(_ctx: AuthContext, user: { id: string; role: string | null }): Promise<string[]> {
  return (user.role ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => `gatehouse:${r}`)
}
