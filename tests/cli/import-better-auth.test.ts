import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import { admin, organization, twoFactor, username } from 'better-auth/plugins'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { HttpClient } from '../helpers/http.js'
import { type RunningServer, runCli, startServerProcess } from '../helpers/process.js'

/**
 * `gatehouse import better-auth` (issue 29) through the built bundle: a real better-auth 1.7.25
 * makes the source database (users with and without usernames, verified or not, an organization
 * with members and a team, a session per user kept as its cookie); after the import, on a
 * Gatehouse running with the app's secret, each user signs in with the old password and each
 * kept cookie is accepted by get-session.
 */

const SECRET = 'the-apps-better-auth-secret-0123456789abcdef'
const PASSWORD = 'old app password 1'

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-import-ba-'))
  dirs.push(dir)
  return dir
}
const servers: RunningServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill('SIGTERM')
    await server.exited
  }
})
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

interface SourceUser {
  id: string
  email: string
  cookie: string
  verified: boolean
  username?: string
}

interface Source {
  /** What `--from` takes: the SQLite file or the postgres:// URL. */
  file: string
  users: SourceUser[]
  organizationId: string
}

/** The app's better-auth database on SQLite, made by better-auth itself. */
async function makeSource(): Promise<Source> {
  const file = join(tempDir(), 'app.db')
  const sqlite = new Database(file)
  const source = await fillSource(sqlite, async (id) => {
    sqlite.prepare('update user set emailVerified = 1 where id = ?').run(id)
  })
  sqlite.close()
  return { file, ...source }
}

/** The app's better-auth database on PostgreSQL (better-auth's own pg dialect and migrations). */
async function makePostgresSource(url: string): Promise<Source> {
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  try {
    const source = await fillSource(pool, async (id) => {
      await pool.query('update "user" set "emailVerified" = true where id = $1', [id])
    })
    // better-auth's PostgreSQL columns: booleans and timestamps are native types (not SQLite's integers and text).
    const types = await pool.query<{ column_name: string; data_type: string }>(
      `select column_name, data_type from information_schema.columns where table_name = 'user' and column_name in ('emailVerified', 'createdAt')`,
    )
    expect(Object.fromEntries(types.rows.map((r) => [r.column_name, r.data_type]))).toEqual({
      emailVerified: 'boolean',
      createdAt: 'timestamp with time zone',
    })
    const counts = await pool.query<{ users: string; accounts: string; sessions: string }>(
      `select (select count(*) from "user") as users, (select count(*) from account where password is not null) as accounts, (select count(*) from session) as sessions`,
    )
    expect(counts.rows[0]).toEqual({ users: '3', accounts: '3', sessions: '3' })
    return { file: url, ...source }
  } finally {
    await pool.end()
  }
}

/** Users (passwords, sessions as cookies), an organization with members and a team, made through better-auth's API. */
async function fillSource(database: unknown, verify: (id: string) => Promise<void>): Promise<Omit<Source, 'file'>> {
  const options = {
    database: database as Database.Database,
    baseURL: 'http://127.0.0.1:3000',
    secret: SECRET,
    emailAndPassword: { enabled: true },
    telemetry: { enabled: false },
    logger: { disabled: true },
    user: { additionalFields: { plan: { type: 'string' as const, required: false } } },
    plugins: [organization({ teams: { enabled: true } }), admin(), username(), twoFactor()],
  }
  const { runMigrations } = await getMigrations(options)
  await runMigrations()
  const auth = betterAuth(options)
  const users: SourceUser[] = []
  const people = [
    { email: 'alice@example.com', name: 'Alice', username: 'alice_app', verified: true, plan: 'pro' },
    { email: 'bob@example.com', name: 'Bob', verified: false },
    { email: 'carol@example.com', name: 'Carol', username: 'Carol.C', verified: true },
  ]
  for (const p of people) {
    const res = await auth.api.signUpEmail({
      body: {
        email: p.email,
        password: PASSWORD,
        name: p.name,
        ...(p.username ? { username: p.username } : {}),
        ...(p.plan ? { plan: p.plan } : {}),
      } as never,
      asResponse: true,
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { user: { id: string } }
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string
    expect(cookie).toMatch(/^better-auth\.session_token=/)
    if (p.verified) await verify(body.user.id)
    users.push({ id: body.user.id, email: p.email, cookie, verified: p.verified, username: p.username })
  }
  const [alice, bob, carol] = users as [SourceUser, SourceUser, SourceUser]
  const headers = new Headers({ cookie: alice.cookie })
  const org = await auth.api.createOrganization({ body: { name: 'Acme', slug: 'acme' }, headers })
  const organizationId = (org as { id: string }).id
  await auth.api.addMember({ body: { userId: bob.id, role: 'member', organizationId } })
  await auth.api.addMember({ body: { userId: carol.id, role: 'admin', organizationId } })
  const team = (await auth.api.createTeam({ body: { name: 'Core', organizationId }, headers })) as { id: string }
  await auth.api.addTeamMember({ body: { teamId: team.id, userId: bob.id }, headers })
  return { users, organizationId }
}

/** `dataDir` holds the stored config (user.additionalFields: plan), which the server and the CLI both read. */
async function checkImported(dataDir: string, engineArgs: string[], source: Source) {
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ user: { additionalFields: { plan: { type: 'string' } } } }))
  engineArgs = ['--data-dir', dataDir, ...engineArgs]
  const server = await startServerProcess(['--port', '0', '--rate-limit', 'off', ...engineArgs], {
    GATEHOUSE_SECRET: SECRET,
  })
  servers.push(server)

  const dry = await runCli(['import', 'better-auth', '--from', source.file, '--dry-run', '--json', ...engineArgs], {
    GATEHOUSE_SECRET: SECRET,
  })
  expect([dry.code, dry.stderr, JSON.parse(dry.stdout)]).toEqual([
    0,
    '',
    { users: 3, accounts: 3, sessions: 3, organizations: 1, skipped: [], errors: [] },
  ])
  const origin = new URL(server.url).origin
  expect((await new HttpClient(server.url, { origin }).get('/get-session', { cookie: source.users[0]?.cookie as string })).body).toBeNull()

  const run = await runCli(['import', 'better-auth', '--from', source.file, '--json', ...engineArgs], { GATEHOUSE_SECRET: SECRET })
  expect([run.code, run.stderr, JSON.parse(run.stdout)]).toEqual([
    0,
    '',
    { users: 3, accounts: 3, sessions: 3, organizations: 1, skipped: [], errors: [] },
  ])

  for (const u of source.users) {
    // The app's cookie is a Gatehouse session now: same token, same secret.
    const kept = await new HttpClient(server.url, { origin }).get<{ user: Record<string, unknown> }>('/get-session', { cookie: u.cookie })
    expect([u.email, kept.status, kept.body?.user?.id, kept.body?.user?.emailVerified]).toEqual([u.email, 200, u.id, u.verified])
    expect(kept.body?.user?.username ?? null).toBe(u.username ? u.username.toLowerCase() : null)
    // The old password signs in.
    const client = new HttpClient(server.url, { origin })
    const signedIn = await client.post<{ user: { id: string } }>('/sign-in/email', { email: u.email, password: PASSWORD })
    expect([u.email, signedIn.status, signedIn.body.user?.id]).toEqual([u.email, 200, u.id])
  }
  const alice = new HttpClient(server.url, { origin })
  const aliceSession = await alice.get<{ user: Record<string, unknown> }>('/get-session', { cookie: source.users[0]?.cookie as string })
  expect(aliceSession.body.user.plan).toBe('pro')
  const full = await alice.get<{ members: Array<{ userId: string; role: string }>; name: string }>(
    `/organization/get-full-organization?organizationId=${source.organizationId}`,
    { cookie: source.users[0]?.cookie as string },
  )
  expect([full.status, full.body.name]).toEqual([200, 'Acme'])
  expect(full.body.members.map((m) => [m.userId, m.role]).sort()).toEqual(
    [
      [source.users[0]?.id, 'owner'],
      [source.users[1]?.id, 'member'],
      [source.users[2]?.id, 'admin'],
    ].sort(),
  )
  const teams = await alice.get<Array<{ name: string }>>(`/organization/list-teams?organizationId=${source.organizationId}`, {
    cookie: source.users[0]?.cookie as string,
  })
  // better-auth made a default team named after the organization, then ours.
  expect([teams.status, teams.body.map((t) => t.name).sort()]).toEqual([200, ['Acme', 'Core']])

  // Again: nothing imported, the users reported as existing.
  const again = await runCli(['import', 'better-auth', '--from', source.file, '--json', ...engineArgs], { GATEHOUSE_SECRET: SECRET })
  expect([again.code, JSON.parse(again.stdout)]).toEqual([
    0,
    {
      users: 0,
      accounts: 0,
      sessions: 0,
      organizations: 0,
      skipped: source.users.map((u) => ({ id: u.id, email: u.email, reason: 'exists' })).sort((a, b) => (a.id < b.id ? -1 : 1)),
      errors: [],
    },
  ])
}

const noPostgres = postgresUnavailable()
warnSkipped('tests/cli/import-better-auth.test.ts into PostgreSQL', noPostgres)

describe('gatehouse import better-auth', () => {
  let source: Source
  let postgres: PostgresServer | undefined
  beforeAll(async () => {
    source = await makeSource()
    if (!noPostgres) postgres = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    await postgres?.stop()
  })

  it('from a SQLite file into SQLite: passwords, sessions (the app secret), organization, members and team carry over', async () => {
    await checkImported(join(tempDir(), 'data'), [], source)
  }, 120_000)

  it('refuses a better-auth database of another schema version, naming the table and column', async () => {
    const old = join(tempDir(), 'old.db')
    const db = new Database(old)
    // better-auth before 1.0: the session id was the token.
    db.exec(`create table "user" (id text primary key, name text not null, email text not null, emailVerified integer not null, image text, createdAt date not null, updatedAt date not null);
      create table account (id text primary key, accountId text not null, providerId text not null, userId text not null, password text, createdAt date not null, updatedAt date not null);
      create table session (id text primary key, userId text not null, expiresAt date not null, ipAddress text, userAgent text);
      insert into "user" values ('u1', 'Old', 'old@example.com', 1, null, '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z');`)
    db.close()
    const dataDir = join(tempDir(), 'data')
    const run = await runCli(['import', 'better-auth', '--from', old, '--json', '--data-dir', dataDir])
    expect([run.code, JSON.parse(run.stdout)]).toEqual([
      1,
      {
        users: 0,
        accounts: 0,
        sessions: 0,
        organizations: 0,
        skipped: [],
        errors: [
          {
            line: 'schema',
            field: 'session.token',
            reason:
              'a better-auth database of another schema version: table session has no column token (Gatehouse imports better-auth 1.x)',
          },
        ],
      },
    ])
    // Refused: nothing left behind, not even the data directory (issue 37 §13).
    expect(existsSync(dataDir)).toBe(false)
    // A file that is not there is a usage error.
    expect((await runCli(['import', 'better-auth', '--from', join(dataDir, 'missing.db'), '--data-dir', dataDir])).code).toBe(2)
  }, 60_000)

  it.skipIf(noPostgres)(
    'from a SQLite file into PostgreSQL (--database-url): the same checks',
    async () => {
      const url = await (postgres as PostgresServer).createDatabase()
      await checkImported(join(tempDir(), 'data'), ['--database-url', url], source)
    },
    120_000,
  )

  it.skipIf(noPostgres)(
    'from a better-auth PostgreSQL database (postgres:// URL) into SQLite and into PostgreSQL: the old password signs in, the old session is kept',
    async () => {
      const server = postgres as PostgresServer
      const pgSource = await makePostgresSource(await server.createDatabase())
      await checkImported(join(tempDir(), 'data'), [], pgSource)
      await checkImported(join(tempDir(), 'data'), ['--database-url', await server.createDatabase()], pgSource)
    },
    180_000,
  )
})
