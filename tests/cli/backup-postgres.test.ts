/**
 * Backups on PostgreSQL (issue 50 §8): `gatehouse backup` of a PostgreSQL install writes the same
 * archive as on SQLite (the logical export into a SQLite file, the copy `gatehouse migrate` makes
 * the other way), and `gatehouse restore` puts any archive into SQLite or into PostgreSQL
 * (`--database-url`), every table's rows equal. Refused: a backup of a database that is not the
 * one in use, a restore into a database another session uses.
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { getTableName, type Table } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import '../../server/schema.js' // the tables, handed down to db/ as they load (as gatehouse.ts does first)
import { migrationsFolder, openDatabase } from '../../server/db/index.js'
import { migratePostgres, pgMigrationsFolder } from '../../server/db/pg/storage.js'
import { pgSchema } from '../../server/db/pg/schema.js'
import { schema } from '../../server/schema.js'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { runCli, startServerProcess } from '../helpers/process.js'

const unavailable = postgresUnavailable()
warnSkipped('tests/cli/backup-postgres.test.ts (backups on PostgreSQL)', unavailable)

const PASSWORD = 'password-1234'
/** A bound for one command or one server start, not a speed check: CI's shared machine ran this file's commands 3× slower than this one. */
const CLI_BOUND = 120_000

/**
 * Awaits one step, bounded and named: CI once saw this file's third test run out its 300 s with no
 * step bounded but the commands, so a step that hangs fails with its name (and what it says).
 */
async function step<T>(name: string, work: Promise<T>, detail: () => string = () => '', ms = 90_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: not done within ${ms} ms${detail() ? `\n${detail()}` : ''}`)), ms)
  })
  try {
    return await Promise.race([work, bound])
  } finally {
    clearTimeout(timer)
  }
}

/** Stops a server process: SIGTERM, then SIGKILL if it has not exited within the bound (its output in the failure). */
async function stopServer(server: Awaited<ReturnType<typeof startServerProcess>>): Promise<void> {
  server.child.kill('SIGTERM')
  try {
    await step('the server’s stop after SIGTERM', server.exited, () => server.output().split('\n').slice(-30).join('\n'), 60_000)
  } catch (error) {
    server.child.kill('SIGKILL')
    await server.exited
    throw error
  }
}
type Dump = Record<string, Record<string, unknown>[]>

/** Every row of every table through a drizzle mirror, sorted by primary key. */
async function dump(read: (key: string) => Promise<Record<string, unknown>[]>): Promise<Dump> {
  const out: Dump = {}
  for (const key of Object.keys(schema)) {
    const rows = await read(key)
    const id = (r: Record<string, unknown>) => `${r.kind ?? ''}/${r.id ?? r.key ?? r.userId ?? ''}`
    out[key] = rows.sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0))
  }
  return out
}

async function dumpPostgres(url: string): Promise<Dump> {
  const pool = new pg.Pool({ connectionString: url })
  pool.on('error', () => {}) // an idle client's end at shutdown; a query's failure rejects its await
  try {
    const db = drizzle({ client: pool, schema: pgSchema })
    return await dump(async (key) => (await db.select().from((pgSchema as never)[key])) as Record<string, unknown>[])
  } finally {
    await pool.end()
  }
}

async function dumpSqlite(file: string): Promise<Dump> {
  const opened = openDatabase(file)
  try {
    return await dump(async (key) => (await opened.db.select().from((schema as never)[key])) as Record<string, unknown>[])
  } finally {
    opened.close()
  }
}

/** Signs a few people up and one of them in once wrongly, on a server process; stopped before it returns. */
async function fill(dataDir: string, env: Record<string, string>): Promise<string[]> {
  const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'], env, CLI_BOUND)
  const client = new HttpClient(server.url, { origin: new URL(server.url).origin })
  const emails: string[] = []
  try {
    for (let i = 0; i < 3; i++) {
      const email = uniqueEmail('pgb')
      const res = await step(
        `sign-up ${i + 1} of 3`,
        client.post('/sign-up/email', { name: i === 0 ? 'Ówner "Quoted" 名前' : 'Member', email, password: PASSWORD }),
        server.output,
      )
      expect(res.status).toBe(200)
      emails.push(email)
    }
    const org = await step(
      'organization/create',
      client.post('/organization/create', { name: 'Acme', slug: `acme-${Date.now()}` }),
      server.output,
    )
    expect(org.status).toBe(200)
    expect(
      (await step('a wrong sign-in', client.post('/sign-in/email', { email: emails[1], password: 'wrong password!' }), server.output))
        .status,
    ).toBe(401)
  } finally {
    await stopServer(server)
  }
  return emails
}

describe.skipIf(unavailable)('backups on PostgreSQL', () => {
  let postgres: PostgresServer
  const dirs: string[] = []
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pgbackup-'))
    dirs.push(dir)
    return dir
  }

  beforeAll(async () => {
    postgres = await startPostgres()
  }, 120_000)
  afterAll(async () => {
    await postgres?.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('backs up PostgreSQL into the usual archive; it restores into SQLite and into PostgreSQL with every row equal', async () => {
    const url = await postgres.createDatabase()
    const dataDir = join(tempDir(), 'data')
    // The install names its database in config.json, as `serve` reads it.
    const emails = await fill(dataDir, { GATEHOUSE_DATABASE_URL: url })
    const configFile = join(dataDir, 'config.json')
    const stored = existsSync(configFile) ? JSON.parse(readFileSync(configFile, 'utf8')) : {}
    writeFileSync(configFile, JSON.stringify({ ...stored, database: { url } }))

    const archive = join(tempDir(), 'pg.tar.gz')
    const backup = await runCli(['backup', '--data-dir', dataDir, '--out', archive], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)
    expect(backup.stderr).toBe('')
    expect(backup.code).toBe(0)
    expect(backup.stdout).toContain(`Backup written: ${archive}`)
    expect(backup.stdout).toMatch(/from postgres:\/\/gatehouse@127\.0\.0\.1:\d+\/\w+, schema version \d+, created .*, 3 users/)

    const original = await dumpPostgres(url)
    for (const key of ['user', 'account', 'session', 'organization', 'member', 'auditEvent', 'loginThrottle']) {
      expect(original[key]?.length, key).toBeGreaterThan(0)
    }

    // Into SQLite: the data directory's file, and a config that no longer names the PostgreSQL database.
    const intoSqlite = join(tempDir(), 'sqlite')
    const restored = await runCli(['restore', archive, '--data-dir', intoSqlite], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)
    expect([restored.code, restored.stderr]).toEqual([0, ''])
    expect(await dumpSqlite(join(intoSqlite, 'gatehouse.db'))).toEqual(original)
    expect(JSON.parse(readFileSync(join(intoSqlite, 'config.json'), 'utf8')).database?.url).toBeUndefined()

    // Into PostgreSQL: an empty database, then the same one again (a restore replaces what it holds).
    const target = await postgres.createDatabase()
    const intoPostgres = join(tempDir(), 'pgdata')
    for (let round = 0; round < 2; round++) {
      const run = await runCli(['restore', archive, '--data-dir', intoPostgres, '--database-url', target], {}, CLI_BOUND)
      expect([run.code, run.stderr]).toEqual([0, ''])
      expect(run.stdout).toContain('into postgres://gatehouse@127.0.0.1')
      expect(await dumpPostgres(target)).toEqual(original)
    }
    expect(existsSync(join(intoPostgres, 'gatehouse.db'))).toBe(false)
    expect(JSON.parse(readFileSync(join(intoPostgres, 'config.json'), 'utf8')).database.url).toBe(target)

    // The restored database serves: a person of the backup signs in.
    const server = await startServerProcess(['--port', '0', '--data-dir', intoPostgres, '--rate-limit', 'off'], {}, CLI_BOUND)
    try {
      const signIn = await new HttpClient(server.url, { origin: new URL(server.url).origin }).post('/sign-in/email', {
        email: emails[0],
        password: PASSWORD,
      })
      expect(signIn.status).toBe(200)
    } finally {
      await stopServer(server)
    }
  }, 300_000)

  it('restores a SQLite install’s archive into PostgreSQL with every row equal', async () => {
    const dataDir = join(tempDir(), 'data')
    await fill(dataDir, { GATEHOUSE_DATABASE_URL: '' })
    const archive = join(tempDir(), 'sqlite.tar.gz')
    const backup = await runCli(['backup', '--data-dir', dataDir, '--out', archive], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)
    expect([backup.code, backup.stderr]).toEqual([0, ''])
    const target = await postgres.createDatabase()
    const run = await runCli(['restore', archive, '--data-dir', join(tempDir(), 'pg'), '--database-url', target], {}, CLI_BOUND)
    expect([run.code, run.stderr]).toEqual([0, ''])
    const fromSqlite = await dumpSqlite(join(dataDir, 'gatehouse.db'))
    expect(fromSqlite.user).toHaveLength(3)
    expect(await dumpPostgres(target)).toEqual(fromSqlite)
  }, 300_000)

  it('refuses a backup of a database that is not the one in use, and a restore into a database in use', async () => {
    const url = await postgres.createDatabase()
    const dataDir = join(tempDir(), 'data')
    await fill(dataDir, { GATEHOUSE_DATABASE_URL: '' })

    // The config names a PostgreSQL database the data was never migrated into: its SQLite file is the data in use.
    const configFile = join(dataDir, 'config.json')
    const stored = existsSync(configFile) ? JSON.parse(readFileSync(configFile, 'utf8')) : {}
    writeFileSync(configFile, JSON.stringify({ ...stored, database: { url } }))
    const empty = await runCli(['backup', '--data-dir', dataDir], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)
    expect(empty.code).toBe(1)
    expect(empty.stderr).toMatch(/^gatehouse: .* holds no Gatehouse database .*, while .*gatehouse\.db holds a Gatehouse database/)
    expect(empty.stderr.trim().split('\n')).toHaveLength(1)
    writeFileSync(configFile, JSON.stringify(stored))

    // Migrated to PostgreSQL (the SQLite file renamed aside), then backed up without naming the database.
    renameSync(join(dataDir, 'gatehouse.db'), join(dataDir, 'gatehouse.db.migrated-2026-12-01T10-00-00.000Z'))
    const stale = await runCli(['backup', '--data-dir', dataDir], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)
    expect(stale.code).toBe(1)
    expect(stale.stderr).toBe(
      `gatehouse: the data in ${dataDir} was migrated to PostgreSQL (its SQLite file is now ${join(dataDir, 'gatehouse.db.migrated-2026-12-01T10-00-00.000Z')}, a stale copy): back up the database in use with --database-url postgres://…\n`,
    )
    // No archive was written by either refusal.
    expect(existsSync(join(dataDir, 'backups')) ? readdirSync(join(dataDir, 'backups')) : []).toEqual([])
    renameSync(join(dataDir, 'gatehouse.db.migrated-2026-12-01T10-00-00.000Z'), join(dataDir, 'gatehouse.db'))

    // A restore into a database another session uses (a running instance) changes nothing.
    const archive = join(tempDir(), 'a.tar.gz')
    expect((await runCli(['backup', '--data-dir', dataDir, '--out', archive], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)).code).toBe(0)
    const busy = await step('CREATE DATABASE', postgres.createDatabase())
    const holder = new pg.Client({ connectionString: busy })
    let holderError = ''
    holder.on('error', (error) => {
      holderError = String(error)
    })
    await step('the holder’s connect', holder.connect(), () => `holder: ${holderError || 'no error'}`)
    try {
      await step(
        'the holder’s create table',
        holder.query('create table "notes" (id int primary key)'),
        () => `holder: ${holderError || 'no error'}`,
      )
      const run = await runCli(['restore', archive, '--data-dir', join(tempDir(), 'x'), '--database-url', busy], {}, CLI_BOUND)
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(
        /^gatehouse: restore into PostgreSQL: 1 other session is connected to postgres:\/\/gatehouse@127\.0\.0\.1:\d+\/\w+ \(a running Gatehouse\?\): stop every instance before restoring into it\n$/,
      )
      const tables = await step(
        'the holder’s list of tables',
        holder.query("select table_name from information_schema.tables where table_schema = 'public'"),
      )
      expect(tables.rows).toEqual([{ table_name: 'notes' }])
    } finally {
      await step('the holder’s end', holder.end())
    }
  }, 300_000)

  it('refuses a backup of the SQLite file while the server on the data directory runs on PostgreSQL given by its variable, and backs up that database', async () => {
    const url = await postgres.createDatabase()
    const dataDir = join(tempDir(), 'data')
    await fill(dataDir, { GATEHOUSE_DATABASE_URL: '' })
    // The same directory served from PostgreSQL by GATEHOUSE_DATABASE_URL alone: its config names no database.
    const server = await startServerProcess(
      ['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'],
      { GATEHOUSE_DATABASE_URL: url },
      60_000,
    )
    try {
      const at = new URL(url)
      const identity = `postgres://${at.hostname}:${at.port}${at.pathname}`
      const recorded = readFileSync(join(dataDir, 'gatehouse.engine.json'), 'utf8')
      expect(JSON.parse(recorded)).toEqual({ pid: server.child.pid, database: identity })
      expect(recorded).not.toContain('@')
      const stale = await runCli(['backup', '--data-dir', dataDir], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)
      expect([stale.code, stale.stderr]).toEqual([
        1,
        `gatehouse: the server running on ${dataDir} (pid ${server.child.pid}) uses ${identity}, but this backup would read sqlite:${join(dataDir, 'gatehouse.db')}: give it that database's URL with --database-url\n`,
      ])
      expect(existsSync(join(dataDir, 'backups')) ? readdirSync(join(dataDir, 'backups')) : []).toEqual([])
      const same = await runCli(['backup', '--data-dir', dataDir, '--database-url', url], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)
      expect([same.code, same.stderr]).toEqual([0, ''])
    } finally {
      await stopServer(server)
    }
  }, 300_000)

  it('serve backs PostgreSQL up before applying migrations: at the earlier schema, in the usual archive, the last three kept; it restores', async () => {
    // An earlier release's database: this build's pg migrations but the last three, and a person in it.
    const url = await postgres.createDatabase()
    const earlier = join(tempDir(), 'pg-migrations')
    const journal = JSON.parse(readFileSync(join(pgMigrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
      entries: Array<{ tag: string; when: number }>
    }
    const applied = journal.entries.slice(0, -3)
    mkdirSync(join(earlier, 'meta'), { recursive: true })
    writeFileSync(join(earlier, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: applied }))
    for (const e of applied) copyFileSync(join(pgMigrationsFolder, `${e.tag}.sql`), join(earlier, `${e.tag}.sql`))
    const pool = new pg.Pool({ connectionString: url })
    pool.on('error', () => {})
    let columnsBefore: Set<string>
    try {
      await migratePostgres(pool, earlier)
      const fixtureFile = join(tempDir(), 'release-0.5.0.db')
      writeFileSync(fixtureFile, gunzipSync(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'release-0.5.0', 'gatehouse.db.gz'))))
      const fixture = new Database(fixtureFile, { readonly: true })
      const alice = fixture.prepare("SELECT * FROM user WHERE email = 'alice@example.lan'").get() as Record<string, unknown>
      const account = fixture.prepare('SELECT * FROM account WHERE userId = ?').get(alice.id) as Record<string, unknown>
      fixture.close()
      await pool.query(
        'insert into "user" (id, name, email, "emailVerified", "createdAt", "updatedAt") values ($1, $2, $3, false, to_timestamp($4 / 1000.0), to_timestamp($4 / 1000.0))',
        [alice.id, alice.name, alice.email, alice.createdAt],
      )
      await pool.query(
        'insert into account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt") values ($1, $2, $3, $4, $5, now(), now())',
        [account.id, account.accountId, account.providerId, account.userId, account.password],
      )
      const { rows } = await pool.query<{ t: string; c: string }>(
        "select table_name as t, column_name as c from information_schema.columns where table_schema = 'public'",
      )
      columnsBefore = new Set(rows.map((r) => `${r.t}.${r.c}`))
    } finally {
      await pool.end()
    }

    const dataDir = join(tempDir(), 'data')
    const backups = join(dataDir, 'backups')
    mkdirSync(backups, { recursive: true })
    const old = ['20260101-000000-000', '20260102-000000-000', '20260103-000000-000'].map((t) => `gatehouse-backup-${t}-pre-upgrade.tar.gz`)
    for (const name of old) writeFileSync(join(backups, name), 'old')
    const server = await startServerProcess(
      ['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'],
      { GATEHOUSE_DATABASE_URL: url },
      60_000,
    )
    try {
      const signIn = await new HttpClient(server.url, { origin: new URL(server.url).origin }).post('/sign-in/email', {
        email: 'alice@example.lan',
        password: PASSWORD,
      })
      expect(signIn.status).toBe(200)
    } finally {
      await stopServer(server)
    }
    const made = readdirSync(backups)
      .filter((n) => n.endsWith('-pre-upgrade.tar.gz'))
      .sort()
    expect(made.slice(0, 2)).toEqual(old.slice(1))
    expect(made).toHaveLength(3)
    const backup = join(backups, made[2] as string)
    const line = new RegExp(
      `Pre-upgrade backup written: ${backup.replaceAll('.', '\\.')} \\(schema version (\\d+), 3 PostgreSQL migrations to apply\\); to go back: gatehouse restore ${backup.replaceAll('.', '\\.')} --data-dir ${dataDir} --database-url postgres://gatehouse@127\\.0\\.0\\.1:\\d+/\\w+`,
    )
    expect(server.output()).toMatch(line)
    const schemaVersion = Number(line.exec(server.output())?.[1])
    const sqliteKnown = (JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] })
      .entries.length
    expect(schemaVersion).toBeGreaterThan(0)
    expect(schemaVersion).toBeLessThan(sqliteKnown)

    // Nothing pending at the next start: no other backup.
    const second = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_DATABASE_URL: url }, CLI_BOUND)
    await stopServer(second)
    expect(readdirSync(backups).filter((n) => n.endsWith('-pre-upgrade.tar.gz')).length).toBe(3)

    // The archive's database is at that earlier SQLite schema, each of its columns one PostgreSQL had.
    const staging = tempDir()
    execFileSync('tar', ['xzf', backup, '-C', staging, 'manifest.json', 'gatehouse.db'])
    expect(JSON.parse(readFileSync(join(staging, 'manifest.json'), 'utf8'))).toMatchObject({ schemaVersion, rowCounts: { user: 1 } })
    const file = new Database(join(staging, 'gatehouse.db'), { readonly: true })
    try {
      expect(file.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(schemaVersion)
      for (const table of Object.values(schema).map((t) => getTableName(t as Table))) {
        for (const { name } of file.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]) {
          expect(columnsBefore.has(`${table}.${name}`), `${table}.${name}`).toBe(true)
        }
      }
    } finally {
      file.close()
    }

    // It restores (this build migrates it on the way) into SQLite and into PostgreSQL.
    const intoSqlite = join(tempDir(), 'sqlite')
    expect((await runCli(['restore', backup, '--data-dir', intoSqlite], { GATEHOUSE_DATABASE_URL: '' }, CLI_BOUND)).code).toBe(0)
    const restored = await dumpSqlite(join(intoSqlite, 'gatehouse.db'))
    expect(restored.user?.map((u) => u.email)).toEqual(['alice@example.lan'])
    const target = await postgres.createDatabase()
    const run = await runCli(['restore', backup, '--data-dir', join(tempDir(), 'pg'), '--database-url', target], {}, CLI_BOUND)
    expect([run.code, run.stderr]).toEqual([0, ''])
    expect((await dumpPostgres(target)).user?.map((u) => u.email)).toEqual(['alice@example.lan'])
  }, 300_000)
})
