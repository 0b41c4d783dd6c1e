import { statSync } from 'node:fs'
import { and, count, desc, eq, gt, gte, like, sql } from 'drizzle-orm'
import { auditEvent, organization, session, user } from '../../db/schema.js'
import type { HandlerGroup } from '../service.js'
import { toAuditView } from './audit.js'
import { features } from './features.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

function fileSize(file: string): number {
  let total = 0
  for (const suffix of ['', '-wal']) {
    try {
      total += statSync(`${file}${suffix}`).size
    } catch {}
  }
  return total
}

export const systemHandlers: HandlerGroup<'server.info' | 'overview.get'> = (env) => ({
  'server.info'() {
    const apiURL = env.apiURL()
    const url = new URL(apiURL)
    const file = env.gatehouse.database.sqlite.name
    return {
      apiURL,
      origin: url.origin,
      basePath: env.gatehouse.config.get().basePath,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      version: env.version,
      startedAt: env.startedAt,
      uptimeSeconds: Math.floor((Date.now() - env.startedAt) / 1000),
      databaseFile: file,
      databaseBytes: file === ':memory:' ? 0 : fileSize(file),
      mode: env.mode,
      features: features(),
    }
  },

  'overview.get'({ range }) {
    const { db, clock } = env.gatehouse.ctx
    const now = clock.now()
    const one = (q: { get(): { n: number } | undefined }) => q.get()?.n ?? 0
    const counts = {
      users: one(db.select({ n: count() }).from(user)),
      activeSessions: one(db.select({ n: count() }).from(session).where(gt(session.expiresAt, new Date(now)))),
      organizations: one(db.select({ n: count() }).from(organization)),
      bannedUsers: one(db.select({ n: count() }).from(user).where(eq(user.banned, true))),
    }
    // Buckets aligned on the hour (last 24) or the UTC day (last 14), oldest first, zero-filled.
    const size = range === 'hours' ? HOUR : DAY
    const buckets = range === 'hours' ? 24 : 14
    const last = Math.floor(now / size) * size
    const first = last - (buckets - 1) * size
    const bucket = sql<number>`(${auditEvent.createdAt} / ${size}) * ${size}`
    const rows = db
      .select({ start: bucket, outcome: auditEvent.outcome, n: count() })
      .from(auditEvent)
      .where(and(like(auditEvent.type, '%sign-in%'), gte(auditEvent.createdAt, new Date(first))))
      .groupBy(bucket, auditEvent.outcome)
      .all()
    const activity = Array.from({ length: buckets }, (_, i) => ({ start: first + i * size, signIns: 0, failures: 0 }))
    for (const row of rows) {
      const slot = activity[Math.round((Number(row.start) - first) / size)]
      if (!slot) continue
      if (row.outcome === 'success') slot.signIns += row.n
      else slot.failures += row.n
    }
    const recent = db.select().from(auditEvent).orderBy(desc(auditEvent.id)).limit(12).all().map(toAuditView)
    return { counts, activity, recent }
  },
})
