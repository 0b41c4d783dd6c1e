import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ImportJob } from '../../../server/features/import/panel-contract.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { HttpClient, signUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 37 §13 in the panel: Users → Import with "Skip invalid rows" leaves out a row whose email
 * belongs to another Gatehouse user, imports the others and names the email in its report; without
 * it, the same file imports nothing. The panel's operations as the renderer calls them. Both engines.
 * And a PostgreSQL source is named with its password masked (issue 51 §2, config/url-password.ts).
 */

let server: TestServer
let panel: PanelService

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
})
afterAll(async () => {
  await server?.close()
})

async function ok<T>(op: string, input: unknown): Promise<T> {
  const result = await panel.dispatch(op, input)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

/** Uploads the rows as users.json and runs the import to its end (bounded). */
async function runImport(rows: unknown[], skipInvalid: boolean): Promise<ImportJob> {
  const data = Buffer.from(JSON.stringify(rows)).toString('base64')
  const { uploadId } = await ok<{ uploadId: string }>('import.upload', { uploadId: null, name: 'users.json', offset: 0, data })
  await ok('import.start', { source: 'users-file', uploadId, format: 'json', skipInvalid, dryRun: false })
  // The import runs in the background: its status is polled, bounded (20 s).
  for (let i = 0; i < 1000; i++) {
    const job = await ok<ImportJob | null>('import.status', {})
    if (job && !job.running) return job
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error('the import did not finish')
}

describe('panel import: Skip invalid rows', () => {
  it('leaves out a row whose email another user holds, names the email, imports the rest', async () => {
    const tag = Date.now().toString(36)
    const holder = await signUp(server.base, { name: 'Holder', email: `held-${tag}@example.com` })
    const rows = [
      { email: `new-${tag}@example.com`, name: 'New' },
      { email: holder.email.toUpperCase(), name: 'Impostor' },
    ]
    const conflict = {
      line: 2,
      field: 'email',
      email: holder.email,
      reason: `the email ${holder.email} belongs to another Gatehouse user`,
    }

    const refused = await runImport(rows, false)
    expect([refused.refused, refused.report]).toEqual([true, expect.objectContaining({ users: 0, errors: [conflict] })])

    const skipped = await runImport(rows, true)
    expect([skipped.refused, skipped.report]).toEqual([false, expect.objectContaining({ users: 1, errors: [conflict] })])
    const holderNow = await new HttpClient(server.base).post<{ user: { name: string } }>('/sign-in/email', {
      email: holder.email,
      password: holder.password,
    })
    expect(holderNow.body.user.name).toBe('Holder')
  })
})

describe('panel import from PostgreSQL', () => {
  it('never shows the source URL’s password: the job names it masked (config/url-password.ts)', async () => {
    const from = 'postgres://importer:s3cret-pw@127.0.0.1:1/source'
    const started = await ok<ImportJob>('import.start', { source: 'better-auth', from, dryRun: true })
    expect(started.name).toBe('postgres://importer:***@127.0.0.1:1/source')
    // Nothing listens on port 1: the job fails, and neither its name nor its error holds the password.
    let job: ImportJob | null = null
    for (let i = 0; i < 1000 && (!job || job.running); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      job = await ok<ImportJob | null>('import.status', {})
    }
    expect([job?.running, job?.phase, job?.name]).toEqual([false, 'failed', 'postgres://importer:***@127.0.0.1:1/source'])
    expect(JSON.stringify(job)).not.toContain('s3cret-pw')
  })
})
