import { and, desc, eq, gte, lte, or, type SQL, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { findUserByEmail } from '../../auth/users.js'
import { auditEvent } from '../../db/schema.js'
import type { AuditEventView, AuditFilter } from '../contract.js'
import type { HandlerGroup, PanelEnv } from '../service.js'

type AuditRow = typeof auditEvent.$inferSelect

export const toAuditView = (row: AuditRow): AuditEventView => ({ ...row, createdAt: row.createdAt.getTime() })

/** `column` starts with `prefix`, taken literally (LIKE wildcards escaped, with the ESCAPE clause that makes the escapes count). */
const startsWith = (column: SQLiteColumn, prefix: string): SQL =>
  sql`${column} LIKE ${`${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} ESCAPE '\\'`

function whereOf(env: PanelEnv, filter: AuditFilter): SQL | undefined {
  const conditions: SQL[] = []
  if (filter.type) {
    conditions.push(filter.type.endsWith('*') ? startsWith(auditEvent.type, filter.type.slice(0, -1)) : eq(auditEvent.type, filter.type))
  }
  if (filter.outcome) conditions.push(eq(auditEvent.outcome, filter.outcome))
  if (filter.ip) conditions.push(startsWith(auditEvent.ipAddress, filter.ip))
  if (filter.from !== undefined) conditions.push(gte(auditEvent.createdAt, new Date(filter.from)))
  if (filter.to !== undefined) conditions.push(lte(auditEvent.createdAt, new Date(filter.to)))
  if (filter.user) {
    const value = filter.user.trim()
    const ids = [value]
    if (value.includes('@')) {
      const found = findUserByEmail(env.gatehouse.ctx, value)
      if (found) ids.push(found.id)
    }
    const byUser: SQL[] = ids.flatMap((id) => [eq(auditEvent.actorUserId, id), eq(auditEvent.targetUserId, id)])
    if (value.includes('@')) byUser.push(sql`lower(json_extract(${auditEvent.detail}, '$.email')) = ${value.toLowerCase()}`)
    const any = or(...byUser)
    if (any) conditions.push(any)
  }
  return conditions.length ? and(...conditions) : undefined
}

const CSV_COLUMNS = ['id', 'createdAt', 'type', 'outcome', 'actorUserId', 'targetUserId', 'target', 'ipAddress', 'userAgent', 'detail'] as const

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  // Quote always; neutralise spreadsheet formulas (=, +, -, @ at the start of a cell).
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
  return `"${safe.replace(/"/g, '""')}"`
}

export function toCsv(events: AuditEventView[]): string {
  const lines = [CSV_COLUMNS.join(',')]
  for (const e of events) {
    lines.push(
      CSV_COLUMNS.map((c) => (c === 'createdAt' ? csvCell(new Date(e.createdAt).toISOString()) : csvCell(e[c]))).join(','),
    )
  }
  return `${lines.join('\r\n')}\r\n`
}

export const auditHandlers: HandlerGroup<'audit.list' | 'audit.types' | 'audit.export'> = (env) => ({
  'audit.list'(input) {
    const { db } = env.gatehouse.ctx
    const where = whereOf(env, input)
    const total = db.select({ n: sql<number>`count(*)` }).from(auditEvent).where(where).get()?.n ?? 0
    const events = db
      .select()
      .from(auditEvent)
      .where(where)
      .orderBy(desc(auditEvent.createdAt), desc(auditEvent.id))
      .limit(input.limit)
      .offset(input.offset)
      .all()
      .map(toAuditView)
    return { events, total }
  },

  'audit.types'() {
    return env.gatehouse.ctx.db
      .selectDistinct({ type: auditEvent.type })
      .from(auditEvent)
      .orderBy(auditEvent.type)
      .all()
      .map((r) => r.type)
  },

  'audit.export'({ format, ...filter }) {
    const { db, clock } = env.gatehouse.ctx
    const events = db
      .select()
      .from(auditEvent)
      .where(whereOf(env, filter))
      .orderBy(desc(auditEvent.createdAt), desc(auditEvent.id))
      .all()
      .map(toAuditView)
    const stamp = new Date(clock.now()).toISOString().replace(/[:.]/g, '-')
    return format === 'csv'
      ? { filename: `gatehouse-audit-${stamp}.csv`, mime: 'text/csv', content: toCsv(events), count: events.length }
      : {
          filename: `gatehouse-audit-${stamp}.json`,
          mime: 'application/json',
          content: `${JSON.stringify(events, null, 2)}\n`,
          count: events.length,
        }
  },
})
