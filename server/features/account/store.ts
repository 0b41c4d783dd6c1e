import { and, eq, gte, inArray, isNull, ne, or } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { account, auditEvent, session } from '../../db/schema.js'

export type AccountRow = typeof account.$inferSelect

/** The person's successful audit events of `types`, but the one that made the session `exceptSession`. */
function successfulSignIns(userId: string, exceptSession: string, types: string[]) {
  return and(
    eq(auditEvent.targetUserId, userId),
    inArray(auditEvent.type, types),
    eq(auditEvent.outcome, 'success'),
    or(isNull(auditEvent.target), ne(auditEvent.target, exceptSession)),
  )
}

/** Removes one linked account row. */
export async function deleteAccountRow(ctx: AuthContext, accountId: string): Promise<void> {
  await ctx.db.delete(account).where(eq(account.id, accountId))
}

/**
 * Up to two of the person's earlier successful sign-ins (their audit details), leaving out the one
 * that made the session `exceptSession`: notices.ts tells a first sign-in (none, or only the
 * sign-up's own) from a later one.
 */
export async function earlierSignIns(
  ctx: AuthContext,
  userId: string,
  exceptSession: string,
): Promise<Array<Record<string, unknown> | null>> {
  const rows = await ctx.db
    .select({ detail: auditEvent.detail })
    .from(auditEvent)
    .where(successfulSignIns(userId, exceptSession, ['user.sign-in']))
    .limit(2)
  return rows.map((r) => r.detail ?? null)
}

/**
 * Whether a successful sign-in with exactly this address and User-Agent was recorded for the person
 * since `since` (other than the one that made `exceptSession`): the common case of a sign-in from a
 * known device, answered by one row before the wider look of devicesSeenSince.
 */
export async function signedInExactlySince(
  ctx: AuthContext,
  userId: string,
  device: { ipAddress: string | null; userAgent: string | null },
  since: Date,
  exceptSession: string,
): Promise<boolean> {
  if (device.ipAddress === null || device.userAgent === null) return false
  const rows = await ctx.db
    .select({ id: auditEvent.id })
    .from(auditEvent)
    .where(
      and(
        successfulSignIns(userId, exceptSession, ['user.sign-in']),
        eq(auditEvent.ipAddress, device.ipAddress),
        eq(auditEvent.userAgent, device.userAgent),
        gte(auditEvent.createdAt, since),
      ),
    )
    .limit(1)
  return rows.length > 0
}

/** A device seen before: the address and User-Agent of a sign-in, a sign-up or a session. */
export interface SeenDevice {
  ipAddress: string | null
  userAgent: string | null
}

/** Bounds what one sign-in reads of a person's history (distinct address and User-Agent pairs). */
const SEEN_LIMIT = 500

/**
 * The distinct (address, User-Agent) pairs of the person's sessions created since `since` and of
 * their successful sign-ins and sign-up recorded since then, leaving out the session
 * `exceptSession` and the sign-in that made it.
 */
export async function devicesSeenSince(ctx: AuthContext, userId: string, since: Date, exceptSession: string): Promise<SeenDevice[]> {
  const sessions = await ctx.db
    .selectDistinct({ ipAddress: session.ipAddress, userAgent: session.userAgent })
    .from(session)
    .where(and(eq(session.userId, userId), gte(session.createdAt, since), ne(session.id, exceptSession)))
    .limit(SEEN_LIMIT)
  const signIns = await ctx.db
    .selectDistinct({ ipAddress: auditEvent.ipAddress, userAgent: auditEvent.userAgent })
    .from(auditEvent)
    .where(and(successfulSignIns(userId, exceptSession, ['user.sign-in', 'user.sign-up']), gte(auditEvent.createdAt, since)))
    .limit(SEEN_LIMIT)
  return [...sessions, ...signIns]
}
