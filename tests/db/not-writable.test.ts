/**
 * Issue 50 §9: storage that refuses writes answers as a fault. The refusal is real: the data
 * directory's files are made immutable with `chattr +i` (ext4, root: chmod does not stop root), so
 * the kernel refuses every write (EPERM), through descriptors SQLite already holds too, and SQLite
 * reports SQLITE_IOERR / SQLITE_READONLY / SQLITE_CANTOPEN.
 * - under a running server: 503 DATABASE_NOT_WRITABLE with Retry-After, /ready 503, /ok 200, back
 *   to 200 once writable again;
 * - at start (serve, backup): one line naming the path and the cause, exit 2, no stack.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { runCli, startServerProcess } from '../helpers/process.js'
import { serverLog, startTestServer } from '../helpers/server.js'

const PASSWORD = 'correct horse battery'
const immutable: string[] = []
const chattr = (flag: '+i' | '-i', paths: string[]) => {
  const present = paths.filter((p) => existsSync(p))
  if (present.length) execFileSync('chattr', [flag, ...present])
  if (flag === '+i') immutable.push(...present)
}
const dirs: string[] = []
afterEach(() => {
  chattr('-i', immutable.splice(0))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ro-'))
  dirs.push(dir)
  return dir
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('storage refusing writes', () => {
  it('under a running server: 503 DATABASE_NOT_WRITABLE with Retry-After, /ready 503, /ok 200; writable again: 200', async () => {
    const dataDir = join(tempDir(), 'data')
    const server = await startTestServer({ dataDir })
    try {
      const client = new HttpClient(server.base)
      expect((await client.post('/sign-up/email', { name: 'Before', email: uniqueEmail('ro'), password: PASSWORD })).status).toBe(200)
      serverLog.allowError(/^storage outage \(DATABASE_NOT_WRITABLE\): /)
      serverLog.allowWarning(/^storage outage \(DATABASE_NOT_WRITABLE\) over after/)
      const files = ['gatehouse.db', 'gatehouse.db-wal'].map((f) => join(dataDir, f))
      chattr('+i', files)
      const refused = await client.post<{ code: string; message: string }>('/sign-up/email', {
        name: 'During',
        email: uniqueEmail('ro'),
        password: PASSWORD,
      })
      expect(refused.status).toBe(503)
      expect(refused.body).toEqual({ code: 'DATABASE_NOT_WRITABLE', message: 'The database cannot be written. Please try again later.' })
      expect(refused.headers.get('retry-after')).toBe('5')
      const ready = await client.get<{ code: string }>('/ready')
      expect(ready.status).toBe(503)
      expect(ready.body.code).toBe('DATABASE_NOT_WRITABLE')
      expect((await client.get('/ok')).status).toBe(200)
      expect(serverLog.entries.filter((e) => e.level === 'error' && !e.message.startsWith('storage outage'))).toEqual([])

      chattr('-i', immutable.splice(0))
      await eventually(async () => (await client.get('/ready')).status === 200, 10_000)
      expect((await client.post('/sign-up/email', { name: 'After', email: uniqueEmail('ro'), password: PASSWORD })).status).toBe(200)
    } finally {
      chattr('-i', immutable.splice(0))
      await server.close()
    }
  }, 60_000)

  it('a read-only data directory at start: serve and backup print one line naming the path and the cause, exit 2', async () => {
    const dataDir = join(tempDir(), 'data')
    // A data directory with a database, then made read-only (directory and files).
    const first = await startServerProcess(['--port', '0', '--data-dir', dataDir])
    first.child.kill('SIGTERM')
    await first.exited
    chattr('+i', [dataDir, ...readdirSync(dataDir).map((name) => join(dataDir, name))])

    const serve = await runCli(['serve', '--port', '0', '--data-dir', dataDir], {
      GATEHOUSE_SECRET: 'read-only-test-secret-0123456789abcdef',
    })
    expect(serve.code).toBe(2)
    expect(serve.stderr).toMatch(new RegExp(`^gatehouse: ${dataDir}/[^\\n]+: [^\\n]*(not permitted|read-only|readonly)[^\\n]*\\n$`))
    expect(serve.stdout).not.toContain('listening')

    const backup = await runCli(['backup', '--data-dir', dataDir])
    expect(backup.code).toBe(2)
    expect(backup.stderr).toMatch(new RegExp(`^gatehouse: ${dataDir}/[^\\n]+: [^\\n]*\\n$`))
    expect(backup.stderr.length).toBeLessThan(400)
  }, 60_000)
})
