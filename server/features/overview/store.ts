import { and, count, gt, gte, inArray, isNotNull, like, ne, sql } from 'drizzle-orm'
import { bannedNowWhere } from '../../core/bans.js'
import type { AuthContext } from '../../core/context.js'
import { auditEvent, session, user } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'
import { countOrganizations } from '../organization/store.js'

/** The overview's own SQL: counts, sign-in activity from the audit log, who might be an administrator (the first-run checklist). */

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

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** What the control panel's overview counts. */
export async function serverCounts(ctx: AuthContext) {
  const one = async (q: PromiseLike<Array<{ n: number }>>) => (await firstRow(q))?.n ?? 0
  const { db } = ctx
  const now = ctx.clock.now()
  return {
    users: await one(db.select({ n: count() }).from(user)),
    activeSessions: await one(
      db
        .select({ n: count() })
        .from(session)
        .where(gt(session.expiresAt, new Date(now))),
    ),
    organizations: await countOrganizations(ctx),
    // Bans in force now: a lapsed one (cleared only at the person's next sign-in) is not counted.
    bannedUsers: await one(db.select({ n: count() }).from(user).where(bannedNowWhere(now))),
  }
}

export interface ActivityBucket {
  /** Epoch milliseconds of the bucket's start. */
  start: number
  signIns: number
  failures: number
}

/**
 * Sign-ins and failed sign-ins from the audit log, in buckets aligned on the hour (last 24) or the
 * UTC day (last 14), oldest first, zero-filled.
 */
export async function signInActivity(ctx: AuthContext, range: 'hours' | 'days'): Promise<ActivityBucket[]> {
  const size = range === 'hours' ? HOUR : DAY
  const buckets = range === 'hours' ? 24 : 14
  const last = Math.floor(ctx.clock.now() / size) * size
  const first = last - (buckets - 1) * size
  // The size is written into the SQL as an integer literal: better-sqlite3 binds every JS number
  // as a REAL, and `createdAt / 3600000.0` is not floored, so events in the second half of the
  // current hour landed in a bucket past the end and were dropped (the chart stayed empty).
  const literal = sql.raw(String(Math.trunc(size)))
  // PostgreSQL stores a timestamptz: its epoch milliseconds are bucketed the same way (bigint division floors).
  const millis =
    ctx.storage.dialect === 'sqlite' ? sql`${auditEvent.createdAt}` : sql`(extract(epoch from ${auditEvent.createdAt}) * 1000)::bigint`
  const bucket = sql<number>`(${millis} / ${literal}) * ${literal}`
  const rows = await ctx.db
    .select({ start: bucket, outcome: auditEvent.outcome, n: count() })
    .from(auditEvent)
    .where(and(like(auditEvent.type, '%sign-in%'), gte(auditEvent.createdAt, new Date(first))))
    .groupBy(bucket, auditEvent.outcome)
  const activity: ActivityBucket[] = Array.from({ length: buckets }, (_, i) => ({ start: first + i * size, signIns: 0, failures: 0 }))
  for (const row of rows) {
    const slot = activity[Math.round((Number(row.start) - first) / size)]
    if (!slot) continue
    if (row.outcome === 'success') slot.signIns += row.n
    else slot.failures += row.n
  }
  return activity
}
