import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordAudit } from '../../../server/core/audit.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 11: the audit export walks every matching row page by page (no cap), each page after the
 * last row of the previous one, with the total for the panel's progress bar.
 */
let server: TestServer
let panel: PanelService
const ROWS = 2_345

beforeAll(async () => {
  server = await startTestServer()
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
  const { ctx } = server.gatehouse
  await ctx.storage.transaction(async () => {
    for (let i = 0; i < ROWS; i++) {
      // Several events per millisecond: the cursor must break ties by id.
      if (i % 3 === 0) server.clock.advanceSeconds(0.001)
      await recordAudit(ctx, { type: i % 2 ? 'export.odd' : 'export.even', outcome: 'success', detail: { n: i } })
    }
  })
})
afterAll(() => server.close())

interface Page {
  content: string
  count: number
  total: number
  next: { createdAt: number; id: number } | null
  filename: string
  mime: string
}

async function exportAll(input: Record<string, unknown>, size: number): Promise<{ pages: Page[]; progress: string[] }> {
  const pages: Page[] = []
  const progress: string[] = []
  let after: Page['next'] = null
  let done = 0
  for (;;) {
    const result = await panel.dispatch('audit.exportPage', { ...input, after, size })
    if (!result.ok) throw new Error(JSON.stringify(result.error))
    const page = result.data as Page
    pages.push(page)
    done += page.count
    progress.push(`${done}/${page.total}`)
    if (!page.next) break
    after = page.next
  }
  return { pages, progress }
}

describe('audit export page by page', () => {
  it('CSV: every matching row exactly once, header once, newest first, progress up to the total', async () => {
    const { pages, progress } = await exportAll({ type: 'export.*', format: 'csv' }, 1000)
    expect(pages).toHaveLength(3)
    expect(progress).toEqual([`1000/${ROWS}`, `2000/${ROWS}`, `${ROWS}/${ROWS}`])
    const lines = pages
      .map((p) => p.content)
      .join('')
      .trimEnd()
      .split('\r\n')
    expect(lines[0]).toBe('id,createdAt,type,outcome,actorUserId,targetUserId,target,ipAddress,userAgent,detail,requestId')
    expect(lines.filter((l) => l.startsWith('id,'))).toHaveLength(1)
    const ids = lines.slice(1).map((l) => Number(JSON.parse(l.split(',')[0] as string)))
    expect(ids).toHaveLength(ROWS)
    expect(new Set(ids).size).toBe(ROWS)
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    expect(pages[0]?.mime).toBe('text/csv')
    expect(pages[0]?.filename).toMatch(/^gatehouse-audit-.+\.csv$/)
  })

  it('JSON: the pages join into one array of every filtered row', async () => {
    const { pages } = await exportAll({ type: 'export.odd', format: 'json' }, 400)
    const odd = Math.floor(ROWS / 2)
    expect(pages).toHaveLength(Math.ceil(odd / 400))
    const parsed = JSON.parse(`[${pages.map((p) => p.content).join(',\n')}]`) as Array<{ type: string; detail: { n: number } }>
    expect(parsed).toHaveLength(odd)
    expect(parsed.every((e) => e.type === 'export.odd')).toBe(true)
    expect(new Set(parsed.map((e) => e.detail.n)).size).toBe(odd)
  })

  it('rows added during an export do not shift the pages still to come', async () => {
    const first = await panel.dispatch('audit.exportPage', { type: 'export.*', format: 'csv', after: null, size: 1000 })
    if (!first.ok) throw new Error('first page failed')
    server.clock.advanceSeconds(1)
    await recordAudit(server.gatehouse.ctx, { type: 'export.late', outcome: 'success' })
    const { pages } = await exportAll({ type: 'export.*', format: 'csv' }, 1000)
    const rest = await panel.dispatch('audit.exportPage', { type: 'export.*', format: 'csv', after: (first.data as Page).next, size: 5000 })
    if (!rest.ok) throw new Error('second page failed')
    expect((first.data as Page).count + (rest.data as Page).count).toBe(ROWS)
    expect(pages.reduce((n, p) => n + p.count, 0)).toBe(ROWS + 1)
  })
})
