import { packageVersion } from '../../../server/version.js'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { sql } from 'drizzle-orm'
import { sqliteOnly, sqliteOf, startTestServer, type TestServer, testEngine } from '../../helpers/server.js'

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
    expect(await (await fetch(`${server.base}/ok`)).json()).toEqual({ ok: true, version: packageVersion() })
  })

  // SQLite's by nature: another process takes the file's write lock (PostgreSQL has no such lock).
  sqliteOnly('answers 503 DATABASE_NOT_WRITABLE while the database cannot take a write, and recovers', async () => {
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
    const res = await withLastMigrationRemoved(server, () => fetch(`${server.base}/ready`))
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ code: 'MIGRATIONS_PENDING', message: 'Database migrations are not all applied' })
    expect((await fetch(`${server.base}/ready`)).status).toBe(200)
  })
})

/** Removes the newest row of the engine's migration journal while `body` runs, then puts it back. */
async function withLastMigrationRemoved<T>(server: TestServer, body: () => Promise<T>): Promise<T> {
  if (testEngine === 'postgres') {
    const db = server.gatehouse.ctx.db as unknown as {
      execute(query: ReturnType<typeof sql>): Promise<{ rows: { hash: string; created_at: string }[] }>
    }
    const { rows } = await db.execute(
      sql`DELETE FROM drizzle.__drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM drizzle.__drizzle_migrations) RETURNING hash, created_at`,
    )
    const last = rows[0]
    if (rows.length !== 1 || !last) throw new Error('no migration journal row to remove')
    try {
      return await body()
    } finally {
      await db.execute(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${last.hash}, ${last.created_at})`)
    }
  }
  const sqlite = sqliteOf(server.gatehouse.ctx)
  const last = sqlite.prepare('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1').get() as Record<
    string,
    unknown
  >
  sqlite.prepare('DELETE FROM __drizzle_migrations WHERE created_at = ?').run(last.created_at)
  try {
    return await body()
  } finally {
    sqlite.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(last.hash, last.created_at)
  }
}
