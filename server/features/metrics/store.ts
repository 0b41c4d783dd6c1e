import { count, gt, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { mailOutbox, session, user } from '../../db/schema.js'

/** The gauges read from the database at scrape time: one cheap query each. */
export interface ScrapeCounts {
  activeSessions: number
  users: number
  outbox: { status: string; messages: number }[]
}

export async function scrapeCounts(ctx: AuthContext): Promise<ScrapeCounts> {
  const now = new Date(ctx.clock.now())
  const [sessions] = await ctx.db.select({ n: count() }).from(session).where(gt(session.expiresAt, now))
  const [users] = await ctx.db.select({ n: count() }).from(user)
  const outbox = await ctx.db
    .select({ status: mailOutbox.status, messages: count() })
    .from(mailOutbox)
    .groupBy(mailOutbox.status)
    .orderBy(sql`1`)
  return {
    activeSessions: Number(sessions?.n ?? 0),
    users: Number(users?.n ?? 0),
    outbox: outbox.map((row) => ({ status: row.status, messages: Number(row.messages) })),
  }
}
