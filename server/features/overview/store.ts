import { and, inArray, isNotNull, ne } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { user } from '../../db/schema.js'

/** The overview's own SQL: who might be an administrator (for the first-run checklist). */

export interface AdminCandidate {
  id: string
  email: string
  role: string | null
}

/** Users with a role other than the default one, and the users listed by id (at most 500). */
export async function adminCandidates(ctx: AuthContext, defaultRole: string, adminUserIds: readonly string[]): Promise<AdminCandidate[]> {
  const columns = { id: user.id, email: user.email, role: user.role }
  const byRole = await ctx.db
    .select(columns)
    .from(user)
    .where(and(isNotNull(user.role), ne(user.role, defaultRole)))
  const byId = adminUserIds.length
    ? await ctx.db
        .select(columns)
        .from(user)
        .where(inArray(user.id, adminUserIds.slice(0, 500)))
    : []
  return [...byId, ...byRole]
}
