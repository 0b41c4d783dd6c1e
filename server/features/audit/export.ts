import type { AuditEventView } from '../../panel-frame/shapes.js'

/** The audit export's file formats: CSV safe to open in a spreadsheet, and JSON. */

const CSV_COLUMNS = [
  'id',
  'createdAt',
  'type',
  'outcome',
  'actorUserId',
  'targetUserId',
  'target',
  'ipAddress',
  'userAgent',
  'detail',
  'requestId',
] as const

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
    lines.push(CSV_COLUMNS.map((c) => (c === 'createdAt' ? csvCell(new Date(e.createdAt).toISOString()) : csvCell(e[c]))).join(','))
  }
  return lines.length ? `${lines.join('\r\n')}\r\n` : ''
}

/** The download's name: gatehouse-audit-<time>.<format>, the time from the injected clock. */
export const exportFilename = (now: number, format: 'csv' | 'json'): string =>
  `gatehouse-audit-${new Date(now).toISOString().replace(/[:.]/g, '-')}.${format}`

export const exportMime = (format: 'csv' | 'json'): string => (format === 'csv' ? 'text/csv' : 'application/json')
