import { type AuditQuery, auditEventsPage, auditEventTypes, queryAuditEvents } from '../../core/audit.js'
import { peopleOf, toAuditView } from '../../panel-frame/audit-views.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { exportFilename, exportMime, toCsv } from './export.js'

type Format = 'csv' | 'json'
type Cursor = { createdAt: number; id: number } | null

/** The audit log view: the core audit queries (auth/audit.ts), shaped for the panel. */
export const auditPanel = (env: PanelEnv) => {
  const { ctx } = env.gatehouse
  return {
    async 'audit.list'({ limit, offset, ...query }: AuditQuery & { limit: number; offset: number }) {
      const { events, total } = await queryAuditEvents(ctx, query, { limit, offset })
      return { events: events.map(toAuditView), total, people: await peopleOf(ctx, events) }
    },

    async 'audit.types'() {
      return await auditEventTypes(ctx)
    },

    async 'audit.exportPage'({ format, after, size, ...filter }: AuditQuery & { format: Format; after: Cursor; size: number }) {
      const { events, total, next } = await auditEventsPage(ctx, filter, after, size)
      const views = events.map(toAuditView)
      const content = format === 'csv' ? toCsv(views, after === null) : views.map((e) => JSON.stringify(e, null, 2)).join(',\n')
      return { content, count: views.length, total, next, filename: exportFilename(ctx.clock.now(), format), mime: exportMime(format) }
    },

    async 'audit.export'({ format, ...filter }: AuditQuery & { format: Format }) {
      const events = (await queryAuditEvents(ctx, filter)).events.map(toAuditView)
      const content = format === 'csv' ? toCsv(events) : `${JSON.stringify(events, null, 2)}\n`
      return { filename: exportFilename(ctx.clock.now(), format), mime: exportMime(format), content, count: events.length }
    },
  }
}
