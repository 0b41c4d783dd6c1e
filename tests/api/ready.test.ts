import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { sqliteOf, startTestServer, type TestServer } from '../helpers/server.js'

const servers: TestServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

describe('GET /ready', () => {
  it('answers 200 when migrated and writable; /ok stays the liveness answer', async () => {
    const server = await startTestServer()
    servers.push(server)
    const res = await fetch(`${server.base}/ready`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ready: true })
    expect(await (await fetch(`${server.base}/ok`)).json()).toEqual({ ok: true })
  })

  it('answers 503 DATABASE_NOT_WRITABLE while the database cannot take a write, and recovers', async () => {
    const server = await startTestServer()
    servers.push(server)
    // Another process holds the write lock (a stuck writer, a long manual transaction).
    const other = new Database(join(server.dataDir, 'gatehouse.db'))
    other.exec('BEGIN EXCLUSIVE')
    try {
      const res = await fetch(`${server.base}/ready`)
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ code: 'DATABASE_NOT_WRITABLE', message: 'The database cannot be written' })
      expect((await fetch(`${server.base}/ok`)).status).toBe(200)
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    expect((await fetch(`${server.base}/ready`)).status).toBe(200)
  })

  it('answers 503 MIGRATIONS_PENDING when the database lacks a migration this build ships', async () => {
    const server = await startTestServer()
    servers.push(server)
    const sqlite = sqliteOf(server.gatehouse.ctx)
    const last = sqlite.prepare('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1').get() as Record<
      string,
      unknown
    >
    sqlite.prepare('DELETE FROM __drizzle_migrations WHERE created_at = ?').run(last.created_at)
    const res = await fetch(`${server.base}/ready`)
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ code: 'MIGRATIONS_PENDING', message: 'Database migrations are not all applied' })
    sqlite.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(last.hash, last.created_at)
    expect((await fetch(`${server.base}/ready`)).status).toBe(200)
  })
})
