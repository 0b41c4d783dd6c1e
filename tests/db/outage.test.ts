/**
 * Issue 31 §6: faults answer as faults. A known outage of the storage is not an internal error:
 * requests that need it answer 503 with Retry-After and a stable code (DATABASE_UNAVAILABLE,
 * STORAGE_FULL), `/ready` says 503 with the cause while `/ok` stays 200, the cause is logged once
 * when the outage starts and once when it ends (no stack per request), and a database restart never
 * ends the process.
 * - PostgreSQL: a private server (tests/helpers/engines.ts) halted and restarted under a running
 *   `gatehouse serve` process (needs `npm run build:server`).
 * - SQLite: a data directory on a small tmpfs filled up (root only, as CI); elsewhere SQLite's own
 *   SQLITE_FULL through `max_page_count`, with a loud warning, which checks the request's answer only.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { type RunningServer, startServerProcess } from '../helpers/process.js'
import { createPanelService } from '../../server/panel/service.js'
import { serverLog, silentLogger, sqliteOf, startTestServer, type TestServer } from '../helpers/server.js'

const PASSWORD = 'correct horse battery'
const count = (text: string, needle: string) => text.split(needle).length - 1

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const noPostgres = postgresUnavailable()
warnSkipped('the PostgreSQL outage test (tests/db/outage.test.ts)', noPostgres)

describe.skipIf(noPostgres)('PostgreSQL stopped and restarted under a running instance', () => {
  let postgres: PostgresServer
  let server: RunningServer | undefined
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-outage-'))

  beforeAll(async () => {
    postgres = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM')
      await server.exited
    }
    await postgres?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('answers 503 DATABASE_UNAVAILABLE with Retry-After, /ready names it, /ok stays 200, one log line each way, and the process lives', async () => {
    const databaseUrl = await postgres.createDatabase('outage')
    // Rate limiting stays on (its counters are in the database by default on PostgreSQL, and fall
    // back to memory during the outage), with limits this test's burst stays under.
    const configFile = join(dataDir, 'overrides.json')
    writeFileSync(configFile, JSON.stringify({ rateLimit: { max: 100_000, strict: { window: 10, max: 100_000 } } }))
    server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--database-url', databaseUrl, '--config', configFile])
    const running = server
    const client = new HttpClient(running.url)
    const signedUp = await client.post('/sign-up/email', { name: 'Before', email: uniqueEmail('before'), password: PASSWORD })
    expect(signedUp.status).toBe(200)
    const cookie = signedUp.cookies.map((c) => c.split(';')[0]).join('; ')
    const signedIn = new HttpClient(running.url, { headers: { cookie } })
    expect((await signedIn.get('/ready')).status).toBe(200)

    // Requests in flight while PostgreSQL goes down: none may end the process.
    let stop = false
    const load = (async () => {
      let n = 0
      while (!stop && n < 2_000) {
        n++
        await Promise.all([
          signedIn.get('/get-session?disableCookieCache=true'),
          client.post('/sign-up/email', { name: 'Load', email: uniqueEmail('load'), password: PASSWORD }),
        ]).catch(() => {})
      }
    })()
    await new Promise((r) => setTimeout(r, 300))
    await postgres.halt()
    await new Promise((r) => setTimeout(r, 500))

    const statuses: number[] = []
    for (let i = 0; i < 20; i++) {
      const session = await signedIn.get<{ code: string; message: string }>('/get-session?disableCookieCache=true')
      const signUp = await client.post<{ code: string }>('/sign-up/email', {
        name: 'During',
        email: uniqueEmail('during'),
        password: PASSWORD,
      })
      for (const answer of [session, signUp]) {
        statuses.push(answer.status)
        expect(answer.status).toBe(503)
        expect(answer.body).toEqual({ code: 'DATABASE_UNAVAILABLE', message: 'The database is unavailable. Please try again later.' })
        expect(answer.headers.get('retry-after')).toBe('5')
      }
    }
    const ready = await client.get<{ code: string; cause: string }>('/ready')
    expect(ready.status).toBe(503)
    expect(ready.body).toMatchObject({ code: 'DATABASE_UNAVAILABLE' })
    // A halted server refuses new connections, or resets one caught mid-read; one still stopping
    // answers a new connection with 57P03 "the database system is shutting down".
    expect(ready.body.cause).toMatch(/ECONNREFUSED|ECONNRESET|terminat|connect|shutting down/i)
    expect(ready.headers.get('retry-after')).toBe('5')
    expect((await client.get('/ok')).status).toBe(200)

    stop = true
    await load
    expect(running.child.exitCode).toBeNull()
    expect(count(running.output(), 'storage outage (DATABASE_UNAVAILABLE):')).toBe(1)
    expect(running.output()).not.toMatch(/unexpected error|INTERNAL_SERVER_ERROR|\n\s+at /)

    await postgres.restart()
    await eventually(async () => (await client.get('/ready')).status === 200, 20_000)
    const after = await client.post('/sign-up/email', { name: 'After', email: uniqueEmail('after'), password: PASSWORD })
    expect(after.status).toBe(200)
    expect((await signedIn.get<{ user: { name: string } }>('/get-session?disableCookieCache=true')).body.user.name).toBe('Before')
    await eventually(async () => running.output().includes('storage outage (DATABASE_UNAVAILABLE) over after'), 5_000)
    expect(count(running.output(), 'storage outage (DATABASE_UNAVAILABLE)')).toBe(2)
    expect(running.child.exitCode).toBeNull()
  }, 90_000)
})

/** A small tmpfs for a data directory (root only); null with the reason it is not available. */
function smallTmpfs(): { dir: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'not root: cannot mount a tmpfs'
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-full-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', dir], { stdio: 'pipe' })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    return `mount -t tmpfs failed: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Fills the file system under `dir` with one file until it is full; returns the file. */
function fill(dir: string): string {
  const file = join(dir, 'filler')
  const chunk = Buffer.alloc(64 * 1024, 1)
  let written = 0
  try {
    for (;;) {
      writeFileSync(file, chunk, { flag: 'a' })
      written += chunk.length
      if (written > 64 * 1024 * 1024) throw new Error('the tmpfs never filled up')
    }
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error
  }
  // Whatever fits below 64 KiB too.
  for (let size = 32 * 1024; size >= 512; size /= 2) {
    try {
      writeFileSync(file, Buffer.alloc(size, 1), { flag: 'a' })
    } catch {}
  }
  return file
}

describe('SQLite disk full', () => {
  let tmpfs: ReturnType<typeof smallTmpfs> = 'not mounted yet'
  let server: TestServer

  beforeAll(async () => {
    tmpfs = smallTmpfs()
    warnSkipped(
      'a real full disk (tmpfs): SQLITE_FULL is provoked through PRAGMA max_page_count instead',
      typeof tmpfs === 'string' ? tmpfs : undefined,
    )
    const dataDir = typeof tmpfs === 'string' ? undefined : join(tmpfs.dir, 'data')
    if (dataDir) mkdirSync(dataDir)
    server = await startTestServer({ ...(dataDir ? { dataDir } : {}) })
  })
  afterAll(async () => {
    await server?.close()
    if (typeof tmpfs !== 'string') tmpfs.unmount()
  })

  const panelOverview = async () => {
    const panel = createPanelService({
      gatehouse: server.gatehouse,
      apiURL: () => server.base,
      mode: 'browser',
      version: 'test',
      startedAt: Date.now(),
      logger: silentLogger,
    })
    const result = await panel.dispatch('overview.get', {})
    if (!result.ok) throw new Error(`overview.get: ${result.error.code}`)
    return result.data as { outage: { code: string; cause: string; since: number } | null }
  }

  it('answers 503 STORAGE_FULL with Retry-After, /ready names it, /ok stays 200, logged once each way', async () => {
    const client = new HttpClient(server.base)
    expect((await client.post('/sign-up/email', { name: 'Before', email: uniqueEmail('full'), password: PASSWORD })).status).toBe(200)
    const sqlite = sqliteOf(server.gatehouse.ctx)
    let release: () => void
    if (typeof tmpfs === 'string') {
      const pages = sqlite.pragma('page_count', { simple: true }) as number
      sqlite.pragma(`max_page_count = ${pages}`)
      release = () => sqlite.pragma('max_page_count = 1073741823')
    } else {
      const filler = fill(tmpfs.dir)
      release = () => rmSync(filler)
    }
    serverLog.allowError(/^storage outage \(STORAGE_FULL\): /)
    serverLog.allowWarning(/^storage outage \(STORAGE_FULL\) over after/)

    // Enough new rows to need pages (or disk) that are not there.
    let full: Awaited<ReturnType<typeof client.post<{ code: string; message: string }>>> | undefined
    for (let i = 0; i < 200 && !full; i++) {
      const answer = await client.post<{ code: string; message: string }>('/sign-up/email', {
        name: 'x'.repeat(200),
        email: uniqueEmail(`full${i}`),
        password: PASSWORD,
      })
      if (answer.status !== 200) full = answer
    }
    expect(full?.status).toBe(503)
    expect(full?.body).toEqual({ code: 'STORAGE_FULL', message: 'The storage is full. Please try again later.' })
    expect(full?.headers.get('retry-after')).toBe('5')
    expect((await client.get('/ok')).status).toBe(200)
    if (typeof tmpfs === 'string') {
      // max_page_count refuses new pages only: the probe's rewrite of page 1 passes, so the outage
      // is seen over at once and /ready stays 200. Only the request's answer is checked here.
      release()
      return
    }
    const again = await client.post('/sign-up/email', { name: 'x'.repeat(200), email: uniqueEmail('again'), password: PASSWORD })
    expect(again.status).toBe(503)
    const ready = await client.get<{ code: string; cause: string }>('/ready')
    expect(ready.status).toBe(503)
    expect(ready.body).toMatchObject({ code: 'STORAGE_FULL', cause: expect.stringMatching(/full/i) })
    // The panel's overview says so.
    const overview = await panelOverview()
    expect(overview.outage).toMatchObject({ code: 'STORAGE_FULL', cause: expect.stringMatching(/full/i), since: expect.any(Number) })
    expect(serverLog.entries.filter((e) => e.message.startsWith('storage outage (STORAGE_FULL):'))).toHaveLength(1)
    expect(serverLog.entries.filter((e) => e.level === 'error' && !e.message.startsWith('storage outage'))).toEqual([])

    release()
    await eventually(async () => (await client.get('/ready')).status === 200, 10_000)
    await eventually(async () => serverLog.entries.some((e) => e.message.startsWith('storage outage (STORAGE_FULL) over after')), 5_000)
    expect((await client.post('/sign-up/email', { name: 'After', email: uniqueEmail('after'), password: PASSWORD })).status).toBe(200)
    expect((await panelOverview()).outage).toBeNull()
  }, 60_000)
})
