import { and, asc, eq, isNotNull, isNull, lt } from 'drizzle-orm'
import type { AuthContext } from '../../auth/context.js'
import { keypair, member } from '../../db/schema.js'
import type { KeypairRow } from './schema.js'

/** Every SQL statement of the jwt feature. */

export function allKeypairs(ctx: AuthContext): KeypairRow[] {
  return ctx.db.select().from(keypair).orderBy(asc(keypair.createdAt)).all()
}

export function insertKeypair(ctx: AuthContext, row: KeypairRow): void {
  ctx.db.insert(keypair).values(row).run()
}

/** Marks every live key retired at `at` (rotation); returns their ids. */
export function retireLiveKeypairs(ctx: AuthContext, at: Date): string[] {
  return ctx.db
    .update(keypair)
    .set({ expiresAt: at })
    .where(isNull(keypair.expiresAt))
    .returning({ id: keypair.id })
    .all()
    .map((r) => r.id)
}

export function retireKeypair(ctx: AuthContext, id: string, at: Date): void {
  ctx.db.update(keypair).set({ expiresAt: at }).where(eq(keypair.id, id)).run()
}

/** Deletes keys retired before `before` (their grace period is over); returns their ids. */
export function deleteKeypairsRetiredBefore(ctx: AuthContext, before: Date): string[] {
  return ctx.db
    .delete(keypair)
    .where(and(isNotNull(keypair.expiresAt), lt(keypair.expiresAt, before)))
    .returning({ id: keypair.id })
    .all()
    .map((r) => r.id)
}

/** The user's role and team in an organization (token claims). */
export function findMembership(ctx: AuthContext, userId: string, organizationId: string): { role: string; teamId: string | null } | undefined {
  return ctx.db
    .select({ role: member.role, teamId: member.teamId })
    .from(member)
    .where(and(eq(member.userId, userId), eq(member.organizationId, organizationId)))
    .get()
}
