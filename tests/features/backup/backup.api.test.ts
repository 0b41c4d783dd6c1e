import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createGatehouse } from '../../../server/gatehouse.js'
import { migrationsFolder } from '../../../server/db/index.js'
import { restoreArchive } from '../../../server/features/backup/archive.js'
import { backupServiceOf } from '../../../server/features/backup/service.js'
import { startBrowserPanel } from '../../../server/panel/index.js'
import { signUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer, sqliteOf, testEngine } from '../../helpers/server.js'

const servers: TestServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const HOUR = 3_600_000

/**
 * Backups are archives of the SQLite data directory (the database file, config and secret): SQLite's
 * by nature, skipped on the PostgreSQL run, where the last block checks that they are refused.
 */
const onSqlite = describe.skipIf(testEngine === 'postgres')

onSqlite('scheduled backups', () => {
  it('takes one when the last scheduled one is older than the schedule, and keeps only backup.keep of them', async () => {
    const server = await startTestServer({ config: { backup: { schedule: 'hourly', keep: 2 } } })
    servers.push(server)
    const service = backupServiceOf(server.gatehouse.ctx)
    if (!service) throw new Error('no backup service')
    const dir = join(server.dataDir, 'backups')

    const first = await service.tick()
    expect(first?.manifest.kind).toBe('scheduled')
    expect(await service.tick()).toBeNull()
    server.clock.advance(HOUR - 1)
    expect(await service.tick()).toBeNull()
    const manual = await service.start('manual')

    const names: string[] = [first?.file.split('/').pop() as string]
    for (let i = 0; i < 3; i++) {
      server.clock.advance(HOUR)
      const made = await service.tick()
      expect(made).not.toBeNull()
      names.push(made?.file.split('/').pop() as string)
    }
    const left = readdirSync(dir).sort()
    // Two newest scheduled ones, and the manual one (never pruned).
    expect(left).toEqual([manual.file.split('/').pop(), ...names.slice(-2)].sort())
    expect(names.every((n) => n.endsWith('-auto.tar.gz'))).toBe(true)
  })

  it('is off by default', async () => {
    const server = await startTestServer()
    servers.push(server)
    expect(server.gatehouse.config.get().backup).toEqual({ schedule: 'off', keep: 7 })
    expect(await backupServiceOf(server.gatehouse.ctx)?.tick()).toBeNull()
    expect(existsSync(join(server.dataDir, 'backups'))).toBe(false)
  })
})

onSqlite('backup panel operations', () => {
  it('lists, creates with progress, downloads, and restores at the next start after a confirmation naming what is replaced', async () => {
    const server = await startTestServer({ keepData: true })
    servers.push(server)
    const panel = await startBrowserPanel(server.gatehouse, { port: 0, buildOnDemand: false, logger: silentLogger })
    const call = async (op: string, input: unknown = {}) => {
      const res = await fetch(`${panel.origin}/panel/api/${op}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${panel.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    }
    try {
      await signUp(server.base)
      const empty = await call('backup.list')
      expect(empty.status).toBe(200)
      expect(empty.body).toMatchObject({
        dataDir: server.dataDir,
        directory: join(server.dataDir, 'backups'),
        schedule: 'off',
        keep: 7,
        backups: [],
        job: null,
      })

      const started = await call('backup.create')
      expect(started.status).toBe(200)
      expect(started.body).toMatchObject({ running: true, kind: 'manual', error: null })
      await backupServiceOf(server.gatehouse.ctx)?.settle()
      const status = await call('backup.status')
      expect(status.body).toMatchObject({ running: false, phase: 'done', fraction: 1, name: started.body.name })

      const list = await call('backup.list')
      const rows = list.body.backups as Array<Record<string, unknown>>
      expect(rows).toHaveLength(1)
      const row = rows[0] as Record<string, unknown>
      const name = row.name as string
      expect(row).toMatchObject({ name, kind: 'manual', schemaVersion: expect.any(Number), createdAt: server.clock.now() })
      expect((row.rowCounts as Record<string, number>).user).toBe(1)
      expect(row.size).toBeGreaterThan(0)

      // Download: the file itself, behind the panel token.
      const download = await fetch(`${panel.origin}/panel/download/backup/${name}`, { headers: { authorization: `Bearer ${panel.token}` } })
      expect(download.status).toBe(200)
      expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${name}"`)
      expect(Buffer.from(await download.arrayBuffer()).equals(readFileSync(join(server.dataDir, 'backups', name)))).toBe(true)
      expect((await fetch(`${panel.origin}/panel/download/backup/${name}`)).status).toBe(401)
      const missing = await fetch(`${panel.origin}/panel/download/backup/..%2Fsecret`, {
        headers: { authorization: `Bearer ${panel.token}` },
      })
      expect(missing.status).toBe(404)

      // A user made after the backup: the restore will remove it.
      const later = await signUp(server.base)
      const plan = await call('backup.restorePlan', { name })
      expect(plan.status).toBe(200)
      expect(plan.body.replaces).toEqual(
        ['gatehouse.db', 'gatehouse.db-wal', 'gatehouse.db-shm', 'secret']
          .filter((f) => existsSync(join(server.dataDir, f)))
          .map((f) => join(server.dataDir, f)),
      )
      expect((plan.body.current as Record<string, number>).user).toBe(2)
      expect(((plan.body.backup as Record<string, unknown>).rowCounts as Record<string, number>).user).toBe(1)

      const wrong = await call('backup.restore', { name, confirm: 'gatehouse-backup-20000101-000000-000.tar.gz' })
      expect(wrong).toEqual({
        status: 400,
        body: { code: 'CONFIRMATION_MISMATCH', message: 'Type the backup name to confirm the restore', status: 400 },
      })
      const restore = await call('backup.restore', { name, confirm: name })
      expect(restore.status).toBe(200)
      expect(restore.body.staged).toBe(true)
      expect((await call('backup.list')).body.pendingRestore).toMatchObject({ archive: name })
      // Nothing is replaced under the running server.
      expect((await later.client.get('/get-session')).status).toBe(200)
    } finally {
      await panel.close()
    }
    await server.gatehouse.close()
    servers.pop()

    const reopened = createGatehouse({
      dataDir: server.dataDir,
      port: 0,
      secret: 'test-secret-0123456789-abcdefghijkl',
      logger: silentLogger,
    })
    try {
      const users = sqliteOf(reopened.ctx).prepare('SELECT count(*) FROM user').pluck().get()
      expect(users).toBe(1)
      expect(
        readdirSync(server.dataDir).filter((n) => n.startsWith('replaced-') || n === 'restore.json' || n === 'restore-pending'),
      ).toEqual([])
    } finally {
      await reopened.close()
    }
  })

  it('refuses an unknown backup name and a name outside the folder', async () => {
    const server = await startTestServer()
    servers.push(server)
    const panel = await startBrowserPanel(server.gatehouse, { port: 0, buildOnDemand: false, logger: silentLogger })
    try {
      const res = await fetch(`${panel.origin}/panel/api/backup.delete`, {
        method: 'POST',
        headers: { authorization: `Bearer ${panel.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'gatehouse-backup-20000101-000000-000.tar.gz' }),
      })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ code: 'BACKUP_NOT_FOUND', message: 'no such backup', status: 400 })
      const outside = await fetch(`${panel.origin}/panel/api/backup.delete`, {
        method: 'POST',
        headers: { authorization: `Bearer ${panel.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: '../gatehouse.db' }),
      })
      expect(outside.status).toBe(400)
      expect(((await outside.json()) as { code: string }).code).toBe('VALIDATION_ERROR')
    } finally {
      await panel.close()
    }
  })
})

onSqlite('restore and the desktop app', () => {
  it("moves the desktop app's keychain-encrypted secret aside when the archive carries a secret", async () => {
    const server = await startTestServer()
    servers.push(server)
    const service = backupServiceOf(server.gatehouse.ctx)
    if (!service) throw new Error('no backup service')
    const made = await service.start('manual')
    const target = mkdtempSync(join(tmpdir(), 'gatehouse-desktop-'))
    try {
      mkdirSync(target, { recursive: true })
      writeFileSync(join(target, 'secret.enc'), 'keychain-encrypted')
      const result = await restoreArchive(made.file, target, service.migrationsFolder, server.clock.now())
      // The restored secret is the one in use when the backup was made; the app re-encrypts it.
      expect(readFileSync(join(target, 'secret'), 'utf8').trim()).toBe('test-secret-0123456789-abcdefghijkl')
      expect(existsSync(join(target, 'secret.enc'))).toBe(false)
      expect(readFileSync(join(result.replacedDir as string, 'secret.enc'), 'utf8')).toBe('keychain-encrypted')
    } finally {
      rmSync(target, { recursive: true, force: true })
    }
  })
})

describe.runIf(testEngine === 'postgres')('backups on a PostgreSQL install', () => {
  it("the panel backs PostgreSQL up into the usual archive (restorable into SQLite), on schedule too; restoring is the command line's", async () => {
    const server = await startTestServer({ config: { backup: { schedule: 'hourly', keep: 2 } } })
    servers.push(server)
    const panel = await startBrowserPanel(server.gatehouse, { port: 0, buildOnDemand: false, logger: silentLogger })
    const call = async (op: string, input: unknown = {}) => {
      const res = await fetch(`${panel.origin}/panel/api/${op}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${panel.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    }
    try {
      const person = await signUp(server.base)
      const started = await call('backup.create')
      expect(started.status).toBe(200)
      await backupServiceOf(server.gatehouse.ctx)?.settle()
      expect((await call('backup.status')).body).toMatchObject({ running: false, phase: 'done', error: null })
      const rows = (await call('backup.list')).body.backups as Array<Record<string, unknown>>
      expect(rows).toHaveLength(1)
      const name = (rows[0] as Record<string, unknown>).name as string
      expect(((rows[0] as Record<string, unknown>).rowCounts as Record<string, number>).user).toBe(1)

      // The archive restores into a SQLite data directory, holding the person.
      const target = mkdtempSync(join(tmpdir(), 'gatehouse-pg-panel-restore-'))
      try {
        await restoreArchive(join(server.dataDir, 'backups', name), join(target, 'data'), migrationsFolder, Date.now())
        const restored = createGatehouse({ dataDir: join(target, 'data'), secret: 'x'.repeat(32), logger: silentLogger })
        try {
          expect(sqliteOf(restored.ctx).prepare('SELECT email FROM user').pluck().all()).toEqual([person.email])
        } finally {
          await restored.close()
        }
      } finally {
        rmSync(target, { recursive: true, force: true })
      }

      // Restoring needs every instance stopped: the command line's, the panel says so.
      for (const [op, input] of [
        ['backup.restorePlan', { name }],
        ['backup.restore', { name, confirm: name }],
      ] as const) {
        expect([op, await call(op, input)]).toEqual([
          op,
          {
            status: 409,
            body: {
              status: 409,
              code: 'NOT_AVAILABLE',
              message:
                'this install keeps its data in PostgreSQL: restore a backup with every instance stopped, by gatehouse restore <file> --data-dir <dir> --database-url postgres://…',
            },
          },
        ])
      }

      server.clock.advance(2 * HOUR)
      const scheduled = await backupServiceOf(server.gatehouse.ctx)?.tick()
      expect(scheduled?.manifest.kind).toBe('scheduled')
    } finally {
      await panel.close()
    }
  })
})
