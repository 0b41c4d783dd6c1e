import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import '../../server/schema.js' // the tables, handed down to db/ as they load (as gatehouse.ts does first)
import { migrationsFolder, openDatabase } from '../../server/db/index.js'
import { createBackup } from '../../server/features/backup/archive.js'
import { tarEnd, tarHeader, tarPadding } from '../../server/features/backup/tar.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { runCli, startServerProcess } from '../helpers/process.js'
import { startTestServer } from '../helpers/server.js'

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-backup-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Every file under `dir` with its SHA-256 (the "nothing touched" check). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (!existsSync(dir)) return out
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name)
      if (entry.isDirectory()) walk(path)
      else out[path.slice(dir.length)] = createHash('sha256').update(readFileSync(path)).digest('hex')
    }
  }
  walk(dir)
  return out
}

const PASSWORD = 'password-1234'

async function signUp(client: HttpClient, email: string): Promise<void> {
  const res = await client.post('/sign-up/email', { name: 'Load', email, password: PASSWORD })
  if (res.status !== 200) throw new Error(`sign-up ${res.status}`)
}

/** A server process on a fresh data directory with a few users; stopped before it returns. */
async function populatedDataDir(users = 2): Promise<{ dataDir: string; emails: string[] }> {
  const dataDir = join(tempDir(), 'data')
  const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'], { GATEHOUSE_SECRET: '' })
  const client = new HttpClient(server.url, { origin: new URL(server.url).origin })
  const emails: string[] = []
  for (let i = 0; i < users; i++) {
    const email = uniqueEmail('seed')
    await signUp(client, email)
    emails.push(email)
  }
  server.child.kill('SIGTERM')
  await server.exited
  return { dataDir, emails }
}

describe('gatehouse backup and restore', () => {
  it('a backup taken under a mixed write load holds every write acknowledged before it, and restores into a fresh directory that starts cleanly', async () => {
    const dataDir = join(tempDir(), 'live')
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'], { GATEHOUSE_SECRET: '' })
    const origin = new URL(server.url).origin
    const client = new HttpClient(server.url, { origin })
    const writer = new HttpClient(server.url, { origin })
    const writerEmail = uniqueEmail('writer')
    await signUp(writer, writerEmail)

    // Two kinds of writes at once: new accounts (user, account, session rows) and profile
    // updates on one user (the same row rewritten), each recorded once acknowledged.
    const acknowledged: Array<{ kind: 'user'; email: string } | { kind: 'name'; seq: number }> = []
    let stop = false
    const signUps = (async () => {
      while (!stop) {
        const email = uniqueEmail('load')
        await signUp(client, email)
        acknowledged.push({ kind: 'user', email })
      }
    })()
    const updates = (async () => {
      for (let seq = 1; !stop; seq++) {
        const res = await writer.post('/update-user', { name: `name-${seq}` })
        if (res.status !== 200) throw new Error(`update-user ${res.status}`)
        acknowledged.push({ kind: 'name', seq })
      }
    })()
    while (acknowledged.filter((a) => a.kind === 'user').length < 3) await new Promise((r) => setTimeout(r, 20))

    const before = [...acknowledged]
    const archive = join(tempDir(), 'snap.tar.gz')
    const backup = await runCli(['backup', '--out', archive, '--data-dir', dataDir], { GATEHOUSE_SECRET: '' }, 60_000)
    // The server kept acknowledging writes while the backup ran.
    const during = acknowledged.length - before.length
    stop = true
    await Promise.all([signUps, updates])
    expect(during).toBeGreaterThan(0)
    expect(backup.stderr).toBe('')
    expect(backup.code).toBe(0)
    expect(backup.stdout).toContain(`Backup written: ${archive}`)
    server.child.kill('SIGTERM')
    await server.exited

    const target = join(tempDir(), 'restored')
    const restore = await runCli(['restore', archive, '--data-dir', target])
    expect(restore.stderr).toBe('')
    expect(restore.code).toBe(0)

    const db = new Database(join(target, 'gatehouse.db'), { readonly: true })
    const emails = new Set(db.prepare('SELECT email FROM user').pluck().all() as string[])
    const name = db.prepare('SELECT name FROM user WHERE email = ?').pluck().get(writerEmail) as string
    db.close()
    for (const write of before) if (write.kind === 'user') expect(emails.has(write.email), write.email).toBe(true)
    const lastName = Math.max(...before.filter((w) => w.kind === 'name').map((w) => (w as { seq: number }).seq), 0)
    expect(Number(name.replace('name-', ''))).toBeGreaterThanOrEqual(lastName)
    // The stored secret came along: sessions signed before the backup still verify.
    expect(readFileSync(join(target, 'secret'), 'utf8')).toBe(readFileSync(join(dataDir, 'secret'), 'utf8'))

    const restored = await startServerProcess(['--port', '0', '--data-dir', target, '--rate-limit', 'off'], { GATEHOUSE_SECRET: '' })
    expect(await (await fetch(`${restored.url}/ready`)).json()).toEqual({ ready: true })
    const signIn = await new HttpClient(restored.url, { origin: new URL(restored.url).origin }).post('/sign-in/email', {
      email: writerEmail,
      password: PASSWORD,
    })
    expect(signIn.status).toBe(200)
    expect(existsSync(join(target, 'restore.json'))).toBe(false)
    restored.child.kill('SIGTERM')
    expect(await restored.exited).toEqual({ code: 0, signal: null })
  }, 120_000)

  it('refuses truncated, tampered and foreign archives with one line, touching nothing', async () => {
    const { dataDir } = await populatedDataDir(1)
    const good = join(tempDir(), 'good.tar.gz')
    expect((await runCli(['backup', '--out', good, '--data-dir', dataDir])).code).toBe(0)
    const bytes = readFileSync(good)
    const tar = gunzipSync(bytes)
    const work = tempDir()

    const cases: Array<[string, Buffer, RegExp]> = []
    cases.push(['truncated', bytes.subarray(0, Math.floor(bytes.length / 2)), /^gatehouse: backup archive is truncated/])
    // One byte of the database flipped (after the manifest's two blocks and the db's header).
    const tampered = Buffer.from(tar)
    const manifestSize = Number.parseInt(tar.subarray(124, 136).toString().replace(/\0.*$/, '').trim(), 8)
    const dbData = 512 + Math.ceil(manifestSize / 512) * 512 + 512
    tampered[dbData + 5000] = (tampered[dbData + 5000] as number) ^ 0xff
    cases.push(['tampered', gzipSync(tampered), /^gatehouse: checksum mismatch for gatehouse\.db: the archive was altered or damaged$/])
    // A manifest edited to claim other row counts: the checksums hold, the counts do not.
    const manifest = JSON.parse(tar.subarray(512, 512 + manifestSize).toString()) as { rowCounts: Record<string, number> }
    manifest.rowCounts.user = 99
    const edited = Buffer.from(JSON.stringify(manifest))
    const rest = tar.subarray(512 + Math.ceil(manifestSize / 512) * 512)
    cases.push([
      'edited manifest',
      gzipSync(Buffer.concat([tarHeader('manifest.json', edited.length, 0), edited, tarPadding(edited.length), rest])),
      /^gatehouse: row count of user differs from the manifest: the archive was altered$/,
    ])
    const other = Buffer.from('hello\n')
    cases.push([
      'foreign tar.gz',
      gzipSync(Buffer.concat([tarHeader('notes.txt', other.length, 0), other, tarPadding(other.length), tarEnd()])),
      /^gatehouse: not a Gatehouse backup \(no manifest\.json first in the archive\)$/,
    ])
    cases.push([
      'not gzip',
      Buffer.from('SQLite format 3\0 and then some'),
      /^gatehouse: not a Gatehouse backup \(not a gzip-compressed archive\)$/,
    ])
    cases.push([
      'gzip, not tar',
      gzipSync(Buffer.from('just text, not a tar archive at all')),
      /^gatehouse: backup archive is truncated|^gatehouse: not a Gatehouse backup/,
    ])

    const before = tree(dataDir)
    const siblings = readdirSync(dirname(dataDir)).sort()
    for (const [label, content, message] of cases) {
      const file = join(work, `${label.replaceAll(' ', '-')}.tar.gz`)
      writeFileSync(file, content)
      const result = await runCli(['restore', file, '--data-dir', dataDir])
      expect(result.code, label).toBe(1)
      expect(result.stderr.split('\n').filter(Boolean), label).toHaveLength(1)
      expect(result.stderr.trim(), label).toMatch(message)
      expect(tree(dataDir), label).toEqual(before)
      expect(readdirSync(dirname(dataDir)).sort(), label).toEqual(siblings)
    }
    // A refused restore into a fresh directory creates nothing either.
    const fresh = join(work, 'fresh')
    expect((await runCli(['restore', join(work, 'tampered.tar.gz'), '--data-dir', fresh])).code).toBe(1)
    expect(existsSync(fresh)).toBe(false)
    // The good one still restores.
    expect((await runCli(['restore', good, '--data-dir', fresh])).code).toBe(0)
  }, 120_000)

  it('refuses to restore under a running server; keeps the replaced data aside until the restored data has started once', async () => {
    const { dataDir, emails } = await populatedDataDir(1)
    const archive = join(tempDir(), 'one-user.tar.gz')
    expect((await runCli(['backup', '--out', archive, '--data-dir', dataDir])).code).toBe(0)

    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'], { GATEHOUSE_SECRET: '' })
    const later = uniqueEmail('later')
    await signUp(new HttpClient(server.url, { origin: new URL(server.url).origin }), later)
    const before = tree(dataDir)
    const refused = await runCli(['restore', archive, '--data-dir', dataDir])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      `gatehouse: a Gatehouse server (pid ${server.child.pid}) is running on this data directory; stop it before restoring\n`,
    )
    expect(tree(dataDir)).toEqual(before)
    server.child.kill('SIGTERM')
    await server.exited

    const restored = await runCli(['restore', archive, '--data-dir', dataDir])
    expect(restored.code).toBe(0)
    const aside = readdirSync(dataDir).filter((n) => n.startsWith('replaced-'))
    expect(aside).toHaveLength(1)
    const replacedDb = new Database(join(dataDir, aside[0] as string, 'gatehouse.db'), { readonly: true })
    expect(replacedDb.prepare('SELECT count(*) FROM user WHERE email = ?').pluck().get(later)).toBe(1)
    replacedDb.close()
    expect(JSON.parse(readFileSync(join(dataDir, 'restore.json'), 'utf8'))).toMatchObject({
      archive: 'one-user.tar.gz',
      replaced: aside[0],
    })

    const again = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'], { GATEHOUSE_SECRET: '' })
    expect(again.output()).toContain(`Restored data (one-user.tar.gz) started; removed the replaced data (${aside[0]})`)
    const client = new HttpClient(again.url, { origin: new URL(again.url).origin })
    expect((await client.post('/sign-in/email', { email: emails[0], password: PASSWORD })).status).toBe(200)
    expect((await client.post('/sign-in/email', { email: later, password: PASSWORD })).status).toBe(401)
    expect(readdirSync(dataDir).filter((n) => n.startsWith('replaced-') || n === 'restore.json')).toEqual([])
    again.child.kill('SIGTERM')
    await again.exited
  }, 120_000)

  it('a running server records the database it uses beside its pid file, without secrets; a backup of another database is refused (issue 50 §8)', async () => {
    const { dataDir } = await populatedDataDir(1)
    const db = join(dataDir, 'gatehouse.db')
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'], { GATEHOUSE_SECRET: '' })
    try {
      const record = JSON.parse(readFileSync(join(dataDir, 'gatehouse.engine.json'), 'utf8'))
      expect(record).toEqual({ pid: server.child.pid, database: `sqlite:${db}` })
      const elsewhere = 'postgres://gatehouse:s3cret@127.0.0.1:1/elsewhere'
      const refusal = `gatehouse: the server running on ${dataDir} (pid ${server.child.pid}) uses sqlite:${db}, but this backup would read postgres://127.0.0.1:1/elsewhere: run it without --database-url, GATEHOUSE_DATABASE_URL or database.url\n`
      // By the flag, the variable or the data directory's config: one line, no password, no archive, nothing asked of that database.
      const byFlag = await runCli(['backup', '--data-dir', dataDir, '--database-url', elsewhere])
      expect([byFlag.code, byFlag.stderr]).toEqual([1, refusal])
      const byEnv = await runCli(['backup', '--data-dir', dataDir], { GATEHOUSE_DATABASE_URL: elsewhere })
      expect([byEnv.code, byEnv.stderr]).toEqual([1, refusal])
      expect(existsSync(join(dataDir, 'backups')) ? readdirSync(join(dataDir, 'backups')) : []).toEqual([])
      // The database it uses is backed up while it runs.
      const same = await runCli(['backup', '--data-dir', dataDir])
      expect([same.code, same.stderr]).toEqual([0, ''])
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
    // Stopped, it leaves no record behind.
    expect(existsSync(join(dataDir, 'gatehouse.engine.json'))).toBe(false)
    expect(existsSync(join(dataDir, 'gatehouse.pid'))).toBe(false)
  }, 120_000)

  it('a server whose stop fails part-way still removes its pid file and engine record (a stale pid could be reused by another process)', async () => {
    const server = await startTestServer()
    try {
      expect(existsSync(join(server.dataDir, 'gatehouse.pid'))).toBe(true)
      expect(existsSync(join(server.dataDir, 'gatehouse.engine.json'))).toBe(true)
      server.gatehouse.ctx.mailer.close = async () => {
        throw new Error('the mail transport would not close')
      }
      await expect(server.gatehouse.close()).rejects.toThrow('the mail transport would not close')
      expect(existsSync(join(server.dataDir, 'gatehouse.pid'))).toBe(false)
      expect(existsSync(join(server.dataDir, 'gatehouse.engine.json'))).toBe(false)
    } finally {
      rmSync(server.dataDir, { recursive: true, force: true })
    }
  })

  it("carries the Network view's settings (network.json) and restores them; an archive without them leaves the machine's own (issue 50 §8)", async () => {
    const { dataDir } = await populatedDataDir(1)
    const network = { listen: 'lan', interface: null, port: 4390, baseURL: 'https://auth.example.lan' }
    writeFileSync(join(dataDir, 'network.json'), `${JSON.stringify(network)}\n`, { mode: 0o600 })
    const archive = join(tempDir(), 'with-network.tar.gz')
    const made = await runCli(['backup', '--out', archive, '--data-dir', dataDir])
    expect(made.code, made.stderr).toBe(0)

    const fresh = join(tempDir(), 'fresh')
    const restored = await runCli(['restore', archive, '--data-dir', fresh])
    expect(restored.code, restored.stderr).toBe(0)
    expect(JSON.parse(readFileSync(join(fresh, 'network.json'), 'utf8'))).toEqual(network)

    // Without network.json in the archive, a restore keeps the network.json already there.
    rmSync(join(dataDir, 'network.json'))
    const bare = join(tempDir(), 'without-network.tar.gz')
    expect((await runCli(['backup', '--out', bare, '--data-dir', dataDir])).code).toBe(0)
    const own = { ...network, port: 4391 }
    writeFileSync(join(fresh, 'network.json'), `${JSON.stringify(own)}\n`, { mode: 0o600 })
    expect((await runCli(['restore', bare, '--data-dir', fresh])).code).toBe(0)
    expect(JSON.parse(readFileSync(join(fresh, 'network.json'), 'utf8'))).toEqual(own)
  }, 120_000)

  it("backs up the PostgreSQL a data directory's config names, never its stale SQLite file: an unreachable one is refused", async () => {
    const { dataDir } = await populatedDataDir(1)
    const configFile = join(dataDir, 'config.json')
    const stored = existsSync(configFile) ? JSON.parse(readFileSync(configFile, 'utf8')) : {}
    writeFileSync(configFile, JSON.stringify({ ...stored, database: { url: 'postgres://gatehouse@127.0.0.1:1/gatehouse' } }))
    const before = tree(dataDir)
    const refused = await runCli(['backup', '--data-dir', dataDir])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^gatehouse: cannot connect to postgres:\/\/gatehouse@127\.0\.0\.1:1\/gatehouse: .*\n$/)
    expect(tree(dataDir)).toEqual(before)
    // The same through a GATEHOUSE_CONFIG file merged over a config without it.
    writeFileSync(configFile, JSON.stringify(stored))
    const overlay = join(tempDir(), 'overlay.json')
    writeFileSync(overlay, JSON.stringify({ database: { url: 'postgres://gatehouse@127.0.0.1:1/gatehouse' } }))
    const viaOverlay = await runCli(['backup', '--data-dir', dataDir], { GATEHOUSE_CONFIG: overlay })
    expect([viaOverlay.code, viaOverlay.stderr]).toEqual([1, expect.stringMatching(/^gatehouse: cannot connect to postgres:/)])
  }, 120_000)

  it('migrates an archive made by the previous schema version', async () => {
    // The previous migration set: every migration this build ships but the last.
    const previous = join(tempDir(), 'migrations')
    cpSync(migrationsFolder, previous, { recursive: true })
    const journalFile = join(previous, 'meta', '_journal.json')
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> }
    const last = journal.entries.pop()
    expect(last).toBeDefined()
    rmSync(join(previous, `${last?.tag}.sql`))
    writeFileSync(journalFile, JSON.stringify(journal))

    const oldDir = join(tempDir(), 'old')
    mkdirSync(oldDir)
    const old = openDatabase(join(oldDir, 'gatehouse.db'), { migrations: previous })
    const now = Date.UTC(2026, 0, 2)
    old.sqlite
      .prepare('INSERT INTO user (id, name, email, emailVerified, createdAt, updatedAt) VALUES (?, ?, ?, 1, ?, ?)')
      .run('olduser1', 'Old Timer', 'old@example.com', now, now)
    const archive = join(tempDir(), 'previous.tar.gz')
    const made = await createBackup(
      {
        database: { sqliteFile: join(oldDir, 'gatehouse.db') },
        dataDir: oldDir,
        secret: 'an-old-secret-0123456789abcdef',
        migrationsFolder: previous,
        version: '0.0.9',
        now,
      },
      archive,
    )
    old.close()
    expect(made.manifest.schemaVersion).toBe(journal.entries.length)

    const target = join(tempDir(), 'new')
    const result = await runCli(['restore', archive, '--data-dir', target])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const db = new Database(join(target, 'gatehouse.db'), { readonly: true })
    expect(db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(journal.entries.length + 1)
    expect(db.prepare('SELECT name FROM user WHERE id = ?').pluck().get('olduser1')).toBe('Old Timer')
    db.close()
    expect(readFileSync(join(target, 'secret'), 'utf8').trim()).toBe('an-old-secret-0123456789abcdef')

    const server = await startServerProcess(['--port', '0', '--data-dir', target], { GATEHOUSE_SECRET: '' })
    expect(await (await fetch(`${server.url}/ready`)).json()).toEqual({ ready: true })
    server.child.kill('SIGTERM')
    await server.exited
  }, 120_000)

  it('refuses an archive from a newer schema, and usage errors exit 2', async () => {
    const { dataDir } = await populatedDataDir(0)
    const archive = join(tempDir(), 'a.tar.gz')
    expect((await runCli(['backup', '--out', archive, '--data-dir', dataDir])).code).toBe(0)
    // Rewrite the manifest to claim a later schema; its files still check out.
    const tar = gunzipSync(readFileSync(archive))
    const size = Number.parseInt(tar.subarray(124, 136).toString().replace(/\0.*$/, '').trim(), 8)
    const manifest = JSON.parse(tar.subarray(512, 512 + size).toString()) as { schemaVersion: number }
    const ours = manifest.schemaVersion
    manifest.schemaVersion = ours + 1
    const edited = Buffer.from(JSON.stringify(manifest))
    const newer = join(tempDir(), 'newer.tar.gz')
    writeFileSync(
      newer,
      gzipSync(
        Buffer.concat([
          tarHeader('manifest.json', edited.length, 0),
          edited,
          tarPadding(edited.length),
          tar.subarray(512 + Math.ceil(size / 512) * 512),
        ]),
      ),
    )
    const target = join(tempDir(), 't')
    const refused = await runCli(['restore', newer, '--data-dir', target])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      `gatehouse: backup has schema version ${ours + 1}, newer than this Gatehouse knows (${ours}); upgrade Gatehouse first\n`,
    )
    expect(existsSync(target)).toBe(false)

    expect((await runCli(['restore', archive])).code).toBe(1)
    expect((await runCli(['backup', '--bogus'])).code).toBe(2)
    const missing = await runCli(['backup', '--data-dir', join(tempDir(), 'nothing')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^gatehouse: no Gatehouse database in .*nothing\n$/)
    expect(statSync(archive).mode & 0o777).toBe(0o600)
  }, 60_000)
})
