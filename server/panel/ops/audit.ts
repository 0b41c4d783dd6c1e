import { type AuditRow, auditEventsPage, auditEventTypes, queryAuditEvents } from '../../auth/audit.js'
import type { AuthContext } from '../../auth/context.js'
import { findPeopleByIds } from '../../auth/user-store.js'
import type { AuditEventView, PersonView } from '../contract.js'
import type { HandlerGroup } from '../service.js'

export const toAuditView = (row: AuditRow): AuditEventView => ({ ...row, createdAt: row.createdAt.getTime() })

/**
 * The people the events name (actor and target), by id: the panel shows a name and an email
 * instead of an id. A deleted user is simply absent (the row keeps its id).
 */
export async function peopleOf(ctx: AuthContext, rows: AuditRow[]): Promise<Record<string, PersonView>> {
  const ids = [...new Set(rows.flatMap((r) => [r.actorUserId, r.targetUserId]).filter((id): id is string => Boolean(id)))]
  const people: Record<string, PersonView> = {}
  for (const person of await findPeopleByIds(ctx, ids)) people[person.id] = person
  return people
}

const CSV_COLUMNS = ['id', 'createdAt', 'type', 'outcome', 'actorUserId', 'targetUserId', 'target', 'ipAddress', 'userAgent', 'detail'] as const

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  // Quote always; neutralise spreadsheet formulas (=, +, -, @ at the start of a cell).
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
  return `"${safe.replace(/"/g, '""')}"`
}

export function toCsv(events: AuditEventView[], header = true): string {
  const lines = header ? [CSV_COLUMNS.join(',')] : []
  for (const e of events) {
    lines.push(
      CSV_COLUMNS.map((c) => (c === 'createdAt' ? csvCell(new Date(e.createdAt).toISOString()) : csvCell(e[c]))).join(','),
    )
  }
  return lines.length ? `${lines.join('\r\n')}\r\n` : ''
}

export const auditHandlers: HandlerGroup<'audit.list' | 'audit.types' | 'audit.export' | 'audit.exportPage'> = (env) => ({
  async 'audit.list'({ limit, offset, ...query }) {
    const { events, total } = await queryAuditEvents(env.gatehouse.ctx, query, { limit, offset })
    return { events: events.map(toAuditView), total, people: await peopleOf(env.gatehouse.ctx, events) }
  },

  async 'audit.types'() {
    return await auditEventTypes(env.gatehouse.ctx)
  },

  async 'audit.exportPage'({ format, after, size, ...filter }) {
    const { ctx } = env.gatehouse
    const { events, total, next } = await auditEventsPage(ctx, filter, after, size)
    const views = events.map(toAuditView)
    const stamp = new Date(ctx.clock.now()).toISOString().replace(/[:.]/g, '-')
    const content =
      format === 'csv' ? toCsv(views, after === null) : views.map((e) => JSON.stringify(e, null, 2)).join(',\n')
    return {
      content,
      count: views.length,
      total,
      next,
      filename: `gatehouse-audit-${stamp}.${format}`,
      mime: format === 'csv' ? 'text/csv' : 'application/json',
    }
  },

  async 'audit.export'({ format, ...filter }) {
    const { clock } = env.gatehouse.ctx
    const events = (await queryAuditEvents(env.gatehouse.ctx, filter)).events.map(toAuditView)
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
