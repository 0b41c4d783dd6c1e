import type { AuthContext } from '../../core/context.js'
import { splitRoles } from '../admin/access.js'

/**
 * TEMPORARY until the lead's shared rules land on main ("one rule for group names"): then these
 * two are imports of `bannedNow` (server/core/bans.ts) and `groupNamesOf`
 * (server/features/groups/names.ts), with the same signatures, and this module goes.
 */
export function bannedNow(user: { banned: boolean | null; banExpires: Date | null }, now: number): boolean {
  return user.banned === true && (user.banExpires === null || user.banExpires.getTime() > now)
}

export async function groupNamesOf(ctx: AuthContext, user: { id: string; role: string | null }): Promise<string[]> {
  return splitRoles(user.role, ctx.config())
}
