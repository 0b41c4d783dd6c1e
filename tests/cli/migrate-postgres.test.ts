/**
 * `gatehouse migrate --to postgres://…` (the real CLI process, dist/server/main.mjs: run
 * `npm run build:server` first) on a data directory filled by a real server run: sign-ups,
 * sign-ins, a failed sign-in, an organization with an invitation accepted, a team, an API key,
 * a password-reset request (verification + outbox), database rate-limit counters and the audit
 * log. Checks every table row for row on both sides, the refusal of a non-empty target, and that
 * a failed copy leaves the target empty.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getTableName, type Table } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../server/db/index.js'
import { copyOrder } from '../../server/db/pg/migrate-command.js'
import { pgSchema } from '../../server/db/pg/schema.js'
import { schema } from '../../server/schema.js'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { HttpClient, signUp, uniqueEmail } from '../helpers/http.js'
import { GATEHOUSE_BIN } from '../helpers/process.js'
import { startTestServer } from '../helpers/server.js'

const unavailable = postgresUnavailable()
warnSkipped('tests/cli/migrate-postgres.test.ts (gatehouse migrate --to postgres)', unavailable)

function migrate(args: string[]) {
  const result = spawnSync(process.execPath, [GATEHOUSE_BIN, 'migrate', ...args], {
    encoding: 'utf8',
    env: { ...process.env, GATEHOUSE_DATABASE_URL: '' },
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/**
 * A successful migrate renamed the data directory's SQLite file (and WAL files) to
 * gatehouse.db.migrated-<time>, as its output says: checked, then put back for the next test.
 */
function putBackRetiredSqlite(dataDir: string, stdout: string): void {
  const aside = /Renamed the SQLite file to (\S+): the data now lives in PostgreSQL/.exec(stdout)?.[1]
  expect(aside, stdout).toMatch(/gatehouse\.db\.migrated-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z$/)
  expect(existsSync(join(dataDir, 'gatehouse.db'))).toBe(false)
  expect(existsSync(aside as string)).toBe(true)
  renameSync(aside as string, join(dataDir, 'gatehouse.db'))
  for (const suffix of ['-wal', '-shm'])
    if (existsSync(`${aside}${suffix}`)) renameSync(`${aside}${suffix}`, join(dataDir, `gatehouse.db${suffix}`))
}

/** Every row of every table, through each engine's drizzle mirror, sorted by primary key. */
async function dump(read: (key: string) => Promise<Record<string, unknown>[]>) {
  const out: Record<string, Record<string, unknown>[]> = {}
  for (const key of Object.keys(schema)) {
    const rows = await read(key)
    const id = (r: Record<string, unknown>) => String(r.id ?? r.key)
    out[key] = rows.sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0))
  }
  return out
}

describe.skipIf(unavailable)('gatehouse migrate --to postgres://', () => {
  let postgres: PostgresServer
  let dataDir: string

  beforeAll(async () => {
    postgres = await startPostgres()
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-migrate-'))
    const server = await startTestServer({
      dataDir,
      keepData: true,
      config: {
        rateLimit: { enabled: true, storage: 'database', max: 1000, strict: { window: 10, max: 1000 } },
        // biome-ignore lint/suspicious/noExplicitAny: a plugin section the typed input does not name here
        ...({ apiKey: { enabled: true, enableMetadata: true } } as any),
      },
    })
    try {
      const owner = await signUp(server.base, { email: uniqueEmail('owner'), name: 'Ówner "Quoted" 名前' })
      const guest = await signUp(server.base, { email: uniqueEmail('guest') })
      for (let i = 0; i < 5; i++) await signUp(server.base)
      const again = new HttpClient(server.base)
      expect((await again.post('/sign-in/email', { email: guest.email, password: guest.password })).status).toBe(200)
      expect((await again.post('/sign-in/email', { email: guest.email, password: 'wrong password!' })).status).toBe(401)
      const org = await owner.client.post<{ id: string }>('/organization/create', { name: 'Acme', slug: `acme-${Date.now()}` })
      expect(org.status).toBe(200)
      const team = await owner.client.post('/organization/create-team', { name: 'Blue', organizationId: org.body.id })
      expect(team.status).toBe(200)
      const invited = await owner.client.post<{ id: string }>('/organization/invite-member', {
        email: guest.email,
        role: 'member',
        organizationId: org.body.id,
      })
      expect(invited.status).toBe(200)
      expect((await guest.client.post('/organization/accept-invitation', { invitationId: invited.body.id })).status).toBe(200)
      const key = await owner.client.post('/api-key/create', { name: 'ci', metadata: { env: 'prod' } })
      expect(key.status).toBe(200)
      expect((await new HttpClient(server.base).post('/request-password-reset', { email: owner.email, redirectTo: '/reset' })).status).toBe(
        200,
      )
    } finally {
      await server.close()
    }
  }, 120_000)

  afterAll(async () => {
    await postgres?.stop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })

  it('copies every table into an empty database, verified, with the same values on both sides', async () => {
    const url = await postgres.createDatabase()
    const run = migrate(['--to', url, '--data-dir', dataDir])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(new RegExp(`Copied and verified \\d+ rows in ${copyOrder().length} tables\\.`))
    // The SQLite file it copied is renamed aside (issue 50 §8): nothing takes the stale copy for the data.
    putBackRetiredSqlite(dataDir, run.stdout)
    expect(copyOrder()).toHaveLength(Object.keys(schema).length)
    for (const key of copyOrder()) {
      const name = getTableName((schema as Record<string, Table>)[key] as Table)
      expect(run.stdout).toMatch(new RegExp(`\\n  ${name} +\\d+ rows  checksum [0-9a-f]{32}  ok\\n`))
    }

    const source = openDatabase(join(dataDir, 'gatehouse.db'))
    const pool = new pg.Pool({ connectionString: url })
    try {
      const target = drizzle({ client: pool, schema: pgSchema })
      const fromSqlite = await dump(async (key) => (await source.db.select().from((schema as never)[key])) as Record<string, unknown>[])
      const fromPostgres = await dump(async (key) => (await target.select().from((pgSchema as never)[key])) as Record<string, unknown>[])
      // Not a vacuous comparison: the run filled these tables.
      for (const key of [
        'user',
        'session',
        'account',
        'organization',
        'member',
        'team',
        'invitation',
        'apikey',
        'auditEvent',
        'verification',
        'mailOutbox',
        'rateLimit',
        'loginThrottle',
      ]) {
        expect(fromSqlite[key]?.length, key).toBeGreaterThan(0)
      }
      expect(fromPostgres).toEqual(fromSqlite)
      const owner = (fromPostgres.user ?? []).find((u) => String(u.name).startsWith('Ówner'))
      expect(owner?.createdAt).toBeInstanceOf(Date)
      expect(typeof owner?.emailVerified).toBe('boolean')
      // The identity counter of auditEvent continues after the copied ids.
      const maxId = Math.max(...(fromSqlite.auditEvent ?? []).map((e) => Number(e.id)))
      const next = await pool.query(`insert into "auditEvent" ("type", "outcome", "createdAt") values ('t', 'success', now()) returning id`)
      expect(Number(next.rows[0].id)).toBe(maxId + 1)
      // The migration journal is there: a server opening this database applies nothing again.
      const journal = await pool.query('select count(*)::int as n from drizzle.__drizzle_migrations')
      expect(journal.rows[0].n).toBeGreaterThan(0)
    } finally {
      source.close()
      await pool.end()
    }
  })

  it('refuses a non-empty target and leaves it untouched', async () => {
    const url = await postgres.createDatabase()
    const pool = new pg.Pool({ connectionString: url })
    try {
      await pool.query('create table "notes" (id int primary key)')
      await pool.query('insert into "notes" values (1)')
      const run = migrate(['--to', url, '--data-dir', dataDir])
      expect(run.code).toBe(1)
      expect(run.stderr).toBe(
        'gatehouse: migrate: the target database is not empty (1 table: public.notes); migrate copies into an empty database only\n',
      )
      const tables = await pool.query("select table_name from information_schema.tables where table_schema = 'public'")
      expect(tables.rows).toEqual([{ table_name: 'notes' }])
    } finally {
      await pool.end()
    }
  })

  it('a failure in the middle rolls everything back: the target stays empty (and a retry then works)', async () => {
    const url = await postgres.createDatabase()
    const pool = new pg.Pool({ connectionString: url })
    let original: { r: number; subject: string } | undefined
    try {
      // A row PostgreSQL will refuse (a NUL byte in text) makes the copy fail after the schema and earlier tables.
      const source = openDatabase(join(dataDir, 'gatehouse.db'))
      original = source.sqlite.prepare('select rowid as r, subject from mailOutbox order by rowid limit 1').get() as {
        r: number
        subject: string
      }
      source.sqlite.prepare("update mailOutbox set subject = 'bad' || char(0) || 'byte' where rowid = ?").run(original.r)
      source.close()
      const run = migrate(['--to', url, '--data-dir', dataDir])
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/^gatehouse: migrate: /)
      const tables = await pool.query(
        "select table_schema, table_name from information_schema.tables where table_schema in ('public', 'drizzle')",
      )
      expect(tables.rows).toEqual([])
    } finally {
      const source = openDatabase(join(dataDir, 'gatehouse.db'))
      if (original) source.sqlite.prepare('update mailOutbox set subject = ? where rowid = ?').run(original.subject, original.r)
      source.close()
      await pool.end()
    }
    const retry = migrate(['--to', url, '--data-dir', dataDir])
    expect(retry.stderr).toBe('')
    expect(retry.code).toBe(0)
    putBackRetiredSqlite(dataDir, retry.stdout)
  })

  it('leaves the SQLite file in place while a server still runs on the data directory, and says so', async () => {
    const url = await postgres.createDatabase()
    // This test process stands for the running server: gatehouse.pid names a live process.
    writeFileSync(join(dataDir, 'gatehouse.pid'), `${process.pid}\n`)
    try {
      const run = migrate(['--to', url, '--data-dir', dataDir])
      expect([run.code, run.stderr]).toEqual([0, ''])
      expect(run.stdout).toContain(`A server still runs on ${dataDir}: stop it, then rename or delete ${join(dataDir, 'gatehouse.db')}`)
      expect(existsSync(join(dataDir, 'gatehouse.db'))).toBe(true)
    } finally {
      rmSync(join(dataDir, 'gatehouse.pid'), { force: true })
    }
  })

  it('usage: --to is required and must be a postgres URL; a missing data directory is refused', () => {
    expect(migrate([]).code).toBe(2)
    expect(migrate([]).stderr).toMatch(/^gatehouse: migrate needs --to postgres:\/\/…/)
    const bad = migrate(['--to', 'mysql://x/y', '--data-dir', dataDir])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe('gatehouse: --to: "mysql://x/y" is not a postgres:// (or postgresql://) URL\n')
    const empty = mkdtempSync(join(tmpdir(), 'gatehouse-migrate-empty-'))
    try {
      const none = migrate(['--to', 'postgres://nobody@127.0.0.1:1/x', '--data-dir', empty])
      expect(none.code).toBe(1)
      expect(none.stderr).toBe(`gatehouse: migrate: no Gatehouse database in ${empty} (expected ${join(empty, 'gatehouse.db')})\n`)
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
