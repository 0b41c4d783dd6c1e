import { execFileSync } from 'node:child_process'
import { pbkdf2Sync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hash as argon2Hash } from '@node-rs/argon2'
import bcrypt from 'bcryptjs'
import { hashPassword as betterAuthHash } from 'better-auth/crypto'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { HttpClient } from '../helpers/http.js'
import { type RunningServer, runCli, startServerProcess } from '../helpers/process.js'

/**
 * `gatehouse import users` (issue 29) through the built bundle (bin/gatehouse.js), on the data
 * directory of a server process that keeps running: the server sees the imported users at once,
 * each signs in with the password of its old system (hashes made by independent libraries), and
 * that sign-in leaves scrypt in the row.
 */

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-import-'))
  dirs.push(dir)
  return dir
}
const servers: RunningServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill('SIGTERM')
    await server.exited
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const SCRYPT = /^[0-9a-f]{32}:[0-9a-f]{128}$/
const opensslSha512 = (password: string, salt: string) =>
  execFileSync('openssl', ['passwd', '-6', '-salt', salt, password], { encoding: 'utf8' }).trim()
const djangoPbkdf2 = (password: string, salt: string, iterations: number) =>
  `pbkdf2_sha256$${iterations}$${salt}$${pbkdf2Sync(password, salt, iterations, 32, 'sha256').toString('base64')}`

interface Row {
  email: string
  password?: string
  [field: string]: unknown
}

/** One user per hash format, each hash made by an independent library. */
async function foreignUsers(prefix: string): Promise<Row[]> {
  const b = bcrypt.hashSync('bcrypt password', 6)
  return [
    { email: `${prefix}-2b@Example.com`, name: 'Bcrypt B', password: 'bcrypt password', passwordHash: b },
    { email: `${prefix}-2a@example.com`, name: 'Bcrypt A', password: 'bcrypt password', passwordHash: `$2a$${b.slice(4)}` },
    { email: `${prefix}-2y@example.com`, name: 'Bcrypt Y', password: 'bcrypt password', passwordHash: `$2y$${b.slice(4)}` },
    {
      email: `${prefix}-argon2id@example.com`,
      name: 'Argon id',
      password: 'argon2 pässword',
      passwordHash: await argon2Hash('argon2 pässword', { algorithm: 2, memoryCost: 4096, timeCost: 2 }),
    },
    {
      email: `${prefix}-argon2i@example.com`,
      name: 'Argon i',
      password: 'argon2i password',
      passwordHash: await argon2Hash('argon2i password', { algorithm: 1, memoryCost: 4096, timeCost: 3 }),
    },
    {
      email: `${prefix}-django@example.com`,
      name: 'Django',
      password: 'django password',
      passwordHash: djangoPbkdf2('django password', 'q9Zt2b7LrXy1', 1000),
    },
    {
      email: `${prefix}-crypt@example.com`,
      name: 'Shadow',
      password: 'shadow password',
      passwordHash: opensslSha512('shadow password', 'rounds=6000$Sa1tSa1t'),
    },
    {
      email: `${prefix}-scrypt@example.com`,
      name: 'Better Auth',
      password: 'better-auth password',
      passwordHash: await betterAuthHash('better-auth password'),
    },
    {
      email: `${prefix}-admin@example.com`,
      name: 'Admin',
      username: 'Admin_One',
      role: 'admin',
      emailVerified: true,
      createdAt: '2021-03-04T05:06:07.000Z',
    },
  ]
}

const fileRows = (rows: Row[]) => rows.map(({ password: _p, ...fields }) => fields)

async function startOn(args: string[]): Promise<HttpClient> {
  const server = await startServerProcess(['--port', '0', '--rate-limit', 'off', ...args], { GATEHOUSE_SECRET: '' })
  servers.push(server)
  return new HttpClient(server.url, { origin: new URL(server.url).origin })
}

async function signIn(client: HttpClient, email: string, password: string): Promise<number> {
  return (await client.post('/sign-in/email', { email, password })).status
}

/** The whole scenario on one engine: `engine` is the server's flags and the CLI's, `query` reads the database. */
async function scenario(engineArgs: string[], query: (sql: string, ...params: unknown[]) => Promise<Array<Record<string, unknown>>>) {
  const dir = tempDir()
  const client = await startOn(engineArgs)
  const rows = await foreignUsers('move')
  const file = join(dir, 'users.json')
  writeFileSync(file, JSON.stringify(fileRows(rows)))

  // A dry run first: the same report, nothing written.
  const dry = await runCli(['import', 'users', '--file', file, '--dry-run', '--json', ...engineArgs])
  expect([dry.code, JSON.parse(dry.stdout)]).toEqual([0, { users: 9, accounts: 8, sessions: 0, organizations: 0, skipped: [], errors: [] }])
  expect(await signIn(client, 'move-2b@example.com', 'bcrypt password')).toBe(401)

  const run = await runCli(['import', 'users', '--file', file, '--json', ...engineArgs])
  expect([run.code, JSON.parse(run.stdout), run.stderr]).toEqual([
    0,
    { users: 9, accounts: 8, sessions: 0, organizations: 0, skipped: [], errors: [] },
    '',
  ])

  // Emails lower-cased, defaults applied, fields kept.
  const admin = (await query(`select * from "user" where email = $1`, 'move-admin@example.com'))[0]
  expect(admin).toMatchObject({ name: 'Admin', username: 'admin_one', displayUsername: 'Admin_One', role: 'admin' })
  expect(Boolean(admin?.emailVerified)).toBe(true)
  expect(new Date(admin?.createdAt as string | number).toISOString()).toBe('2021-03-04T05:06:07.000Z')
  const plain = (await query(`select * from "user" where email = $1`, 'move-django@example.com'))[0]
  expect([plain?.role, Boolean(plain?.emailVerified)]).toEqual(['user', false])

  // The running server signs each one in with the old password; the row then holds scrypt.
  for (const row of rows.filter((r) => r.password)) {
    const email = row.email.toLowerCase()
    expect([email, await signIn(client, email, `${row.password}!`)]).toEqual([email, 401])
    const before = (await query(`select a.password from account a join "user" u on u.id = a."userId" where u.email = $1`, email))[0]
    expect(before?.password).toBe(row.passwordHash)
    expect([email, await signIn(client, email, row.password as string)]).toEqual([email, 200])
    const after = (await query(`select a.password from account a join "user" u on u.id = a."userId" where u.email = $1`, email))[0]
    expect(after?.password as string).toMatch(SCRYPT)
    if (row.passwordHash !== undefined && !SCRYPT.test(row.passwordHash as string)) expect(after?.password).not.toBe(row.passwordHash)
    expect([email, await signIn(client, email, row.password as string)]).toEqual([email, 200])
  }
  // No hash: no password sign-in until a reset.
  expect(await signIn(client, 'move-admin@example.com', 'anything at all')).toBe(401)

  // The same import again: nothing imported, every row reported as existing, nothing overwritten.
  const again = await runCli(['import', 'users', '--file', file, '--json', ...engineArgs])
  const report = JSON.parse(again.stdout)
  expect([again.code, report.users, report.accounts, report.errors]).toEqual([0, 0, 0, []])
  expect(report.skipped).toEqual(rows.map((r, i) => ({ line: i + 1, email: r.email.toLowerCase(), reason: 'exists' })))
  const kept = (
    await query(`select a.password from account a join "user" u on u.id = a."userId" where u.email = $1`, 'move-2b@example.com')
  )[0]
  expect(kept?.password as string).toMatch(SCRYPT)

  // An email that belongs to a user who signed up on Gatehouse is a problem of its row, named by its
  // email: it refuses the import...
  expect((await client.post('/sign-up/email', { name: 'Taken', email: 'taken@example.com', password: 'password-1234' })).status).toBe(200)
  const clash = join(dir, 'clash.json')
  writeFileSync(clash, JSON.stringify([{ email: 'fresh@example.com' }, { email: 'TAKEN@example.com', name: 'Other' }]))
  const conflict = {
    line: 2,
    field: 'email',
    email: 'taken@example.com',
    reason: 'the email taken@example.com belongs to another Gatehouse user',
  }
  const refused = await runCli(['import', 'users', '--file', clash, '--json', ...engineArgs])
  expect([refused.code, JSON.parse(refused.stdout)]).toEqual([
    1,
    { users: 0, accounts: 0, sessions: 0, organizations: 0, skipped: [], errors: [conflict] },
  ])
  expect(await query(`select id from "user" where email = $1`, 'fresh@example.com')).toEqual([])
  // ...and --skip-invalid leaves it out, imports the rest and says so.
  const skipping = await runCli(['import', 'users', '--file', clash, '--skip-invalid', '--json', ...engineArgs])
  expect([skipping.code, JSON.parse(skipping.stdout)]).toEqual([
    0,
    { users: 1, accounts: 0, sessions: 0, organizations: 0, skipped: [], errors: [conflict] },
  ])
  expect(await query(`select name from "user" where email = $1`, 'fresh@example.com')).toEqual([{ name: '' }])
  expect(await query(`select name from "user" where email = $1`, 'taken@example.com')).toEqual([{ name: 'Taken' }])
  // In words: the row by its line and email, and how many were left out.
  const clash2 = join(dir, 'clash2.json')
  writeFileSync(clash2, JSON.stringify([{ email: 'fresh2@example.com' }, { email: 'taken@example.com' }]))
  const human = await runCli(['import', 'users', '--file', clash2, '--skip-invalid', ...engineArgs])
  expect(human.code).toBe(0)
  expect(human.stderr).toContain('line 2, email: the email taken@example.com belongs to another Gatehouse user\n')
  expect(human.stdout).toContain('Imported 1 users, 0 accounts, 0 sessions, 0 organizations; 1 rows with problems left out (listed above)')

  // One audit event per import that wrote, with its counts.
  const events = await query(`select detail from "auditEvent" where type = $1`, 'users.imported')
  const details = events.map((e) => (typeof e.detail === 'string' ? JSON.parse(e.detail) : e.detail))
  expect(details).toHaveLength(3)
  expect(details).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ via: 'cli', users: 9, accounts: 8, skipped: 0, errors: 0 }),
      expect.objectContaining({ via: 'cli', users: 1, accounts: 0, skipped: 0, errors: 1 }),
    ]),
  )
}

describe('gatehouse import users on SQLite, a server running on the data directory', () => {
  it('imports every hash format; each user signs in with the old password and then holds scrypt; a re-run skips; an existing email refuses', async () => {
    const dataDir = join(tempDir(), 'data')
    await scenario(['--data-dir', dataDir], async (sql, ...params) => {
      const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true })
      try {
        return db.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as Array<Record<string, unknown>>
      } finally {
        db.close()
      }
    })
  }, 120_000)
})

const noPostgres = postgresUnavailable()
warnSkipped('tests/cli/import-users.test.ts on PostgreSQL', noPostgres)

describe.skipIf(noPostgres)('gatehouse import users on PostgreSQL, a server running on the database', () => {
  let postgres: PostgresServer
  beforeAll(async () => {
    postgres = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    await postgres?.stop()
  })

  it('the same scenario on --database-url', async () => {
    const url = await postgres.createDatabase()
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    try {
      await scenario(['--data-dir', join(tempDir(), 'data'), '--database-url', url], async (sql, ...params) => {
        return (await pool.query(sql, params)).rows
      })
    } finally {
      await pool.end()
    }
  }, 120_000)
})
