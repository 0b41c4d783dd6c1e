import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, user } from '../../server/db/schema.js'
import { officialClient } from '../helpers/members.js'
import { uniqueEmail } from '../helpers/http.js'
import { runCli } from '../helpers/process.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

/** `gatehouse user create|set-role` as a real process on a data directory. */

const dirs: string[] = []
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-user-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('on a fresh install, without a server', () => {
  let dataDir: string
  let server: TestServer | null = null
  beforeAll(() => {
    // Not created yet: the first command on a new install creates the data directory.
    dataDir = join(freshDir(), 'data')
  })
  afterAll(async () => {
    await server?.close()
  })

  it('creates the first administrator, who can then sign in and administer', async () => {
    const email = uniqueEmail('first-admin')
    const res = await runCli([
      'user',
      'create',
      '--email',
      email.toUpperCase(),
      '--password',
      'first admin password',
      '--name',
      'First Admin',
      '--role',
      'admin',
      '--data-dir',
      dataDir,
    ])
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(new RegExp(`^Created user ${email.replace(/[.]/g, '\\.')} \\(id [A-Za-z0-9]{32}, role admin\\)\\n$`))

    server = await startTestServer({ dataDir, keepData: true })
    const { client } = officialClient(server)
    const signIn = await client.signIn.email({ email, password: 'first admin password' })
    expect(signIn.error).toBeNull()
    expect(signIn.data?.user).toMatchObject({ email, name: 'First Admin', role: 'admin' })
    const listed = await client.admin.listUsers({ query: {} })
    expect(listed.data?.total).toBe(1)
    const [created] = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.type, 'admin.create-user'))
    expect(created).toMatchObject({ actorUserId: null, targetUserId: signIn.data?.user.id, detail: { via: 'cli', role: 'admin' } })
  })

  it('reads the data directory from GATEHOUSE_DATA_DIR and refuses bad input with exit codes 1 and 2', async () => {
    const dir = freshDir()
    const email = uniqueEmail('env')
    const ok = await runCli(['user', 'create', '--email', email, '--password', 'password1234', '--name', 'Env'], {
      GATEHOUSE_DATA_DIR: dir,
    })
    expect(ok.code).toBe(0)
    const again = await runCli(['user', 'create', '--email', email, '--password', 'password1234', '--name', 'Env', '--data-dir', dir])
    expect(again.code).toBe(1)
    expect(again.stderr).toBe('gatehouse: User already exists (USER_ALREADY_EXISTS)\n')
    const short = await runCli(['user', 'create', '--email', uniqueEmail(), '--password', 'short', '--name', 'S', '--data-dir', dir])
    expect(short.code).toBe(1)
    expect(short.stderr).toBe('gatehouse: Password too short (PASSWORD_TOO_SHORT)\n')
    const role = await runCli(['user', 'set-role', '--email', email, '--role', 'emperor', '--data-dir', dir])
    expect(role.code).toBe(1)
    expect(role.stderr).toContain('YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE')
    const nobody = await runCli(['user', 'set-role', '--email', uniqueEmail('ghost'), '--role', 'admin', '--data-dir', dir])
    expect(nobody.code).toBe(1)
    expect(nobody.stderr).toMatch(/^gatehouse: no user with email ghost/)
    const missing = await runCli(['user', 'create', '--email', uniqueEmail(), '--data-dir', dir])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^gatehouse: user create needs --password, --name\n/)
    const unknown = await runCli(['user', 'promote', '--data-dir', dir])
    expect(unknown.code).toBe(2)
  })

  it('takes the password from standard input with --password-stdin, keeping it out of the process list', async () => {
    const dir = freshDir()
    const email = uniqueEmail('stdin')
    const res = await runCli(
      ['user', 'create', '--email', email, '--password-stdin', '--name', 'Piped', '--data-dir', dir],
      {},
      20_000,
      'piped password 123\n',
    )
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(new RegExp(`^Created user ${email} \\(id [A-Za-z0-9]{32}, role user\\)\n$`))
    server = await startTestServer({ dataDir: dir, keepData: true })
    const { client } = officialClient(server)
    const signIn = await client.signIn.email({ email, password: 'piped password 123' })
    expect(signIn.error).toBeNull()
    await server.close()
    server = null
  })
})

describe('while a server runs on the same data directory', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(() => server.close())

  it('creates a user the server sees at once, and set-role applies to an existing session', async () => {
    const email = uniqueEmail('live')
    const created = await runCli([
      'user',
      'create',
      '--email',
      email,
      '--password',
      'password1234',
      '--name',
      'Live',
      '--data-dir',
      server.dataDir,
    ])
    expect(created.code).toBe(0)
    const { client } = officialClient(server)
    const signIn = await client.signIn.email({ email, password: 'password1234' })
    expect(signIn.error).toBeNull()
    expect(signIn.data?.user).toMatchObject({ role: 'user' })
    const before = await client.admin.listUsers({ query: {} })
    expect(before.error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS',
      message: 'You are not allowed to list users',
    })

    // A custom role stored in the data directory's config is known to the CLI.
    await server.gatehouse.config.update({ admin: { roles: { support: { user: ['list', 'get'] } } } })
    const promoted = await runCli(['user', 'set-role', '--email', email, '--role', 'support,user', '--data-dir', server.dataDir])
    expect(promoted.stderr).toBe('')
    expect(promoted.code).toBe(0)
    expect(promoted.stdout).toBe(`Set role of ${email} to support,user (was user)\n`)
    const after = await client.admin.listUsers({ query: {} })
    expect(after.error).toBeNull()
    expect(after.data?.users.map((u) => u.email)).toContain(email)
    const banAttempt = await client.admin.banUser({ userId: signIn.data?.user.id as string })
    expect(banAttempt.error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS',
      message: 'You are not allowed to ban users',
    })

    const events = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.type, 'admin.set-role'), eq(auditEvent.targetUserId, signIn.data?.user.id as string)))
    expect(events).toHaveLength(1)
    expect(events[0]?.detail).toEqual({ via: 'cli', before: { role: 'user' }, after: { role: 'support,user' } })
    expect((await server.gatehouse.ctx.db.select().from(user).where(eq(user.email, email)))[0]?.role).toBe('support,user')
  })

  it('invite prints a sign-up link with which the address signs up while signUp.mode is "invitation"', async () => {
    const email = uniqueEmail('invited')
    server.gatehouse.config.update({ signUp: { mode: 'invitation' } })
    try {
      const refused = await officialClient(server).client.signUp.email({ email, password: 'password1234', name: 'Invited' })
      expect(refused.error).toMatchObject({ status: 403, code: 'SIGN_UP_INVITATION_REQUIRED' })
      const res = await runCli([
        'user',
        'invite',
        '--email',
        email,
        '--base-url',
        'https://auth.example.com/',
        '--data-dir',
        server.dataDir,
      ])
      expect(res.stderr).toBe('')
      expect(res.code).toBe(0)
      const escaped = email.replace(/[.]/g, '\\.')
      expect(res.stdout).toMatch(
        new RegExp(
          `^Invited ${escaped} to sign up until \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z:\\nhttps://auth\\.example\\.com/api/auth/ui/sign-up\\?email=${encodeURIComponent(email).replace(/[.]/g, '\\.')}&invitation=[A-Za-z0-9]{32}\\n$`,
        ),
      )
      const signedUp = await officialClient(server).client.signUp.email({ email, password: 'password1234', name: 'Invited' })
      expect(signedUp.error).toBeNull()
      const [audited] = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.type, 'admin.invite-sign-up'))
      expect(audited).toMatchObject({ actorUserId: null, detail: { via: 'cli', email } })
    } finally {
      server.gatehouse.config.update({ signUp: { mode: 'open' } })
    }
  })
})

describe('set-role --config: a role declared in the file serve reads', () => {
  it('knows the roles of the --config file (or GATEHOUSE_CONFIG), as serve --config does; without it the role is unknown', async () => {
    // docs/LDAP.md's setup: the ldap-reader role declared in a --config file, not in the stored config.
    const dir = freshDir()
    const dataDir = join(dir, 'data')
    const configFile = join(dir, 'gatehouse.json')
    const config = {
      admin: { roles: { 'ldap-reader': { user: [] } } },
      ldap: { enabled: false, searchRoles: ['admin', 'ldap-reader'] },
    }
    writeFileSync(configFile, JSON.stringify(config))
    const email = uniqueEmail('ldap-reader')
    const created = await runCli([
      'user',
      'create',
      '--email',
      email,
      '--password',
      'password1234',
      '--name',
      'Reader',
      '--data-dir',
      dataDir,
    ])
    expect(created.code).toBe(0)

    // Before: set-role read only the stored config, so a role only the --config file declares was refused.
    const without = await runCli(['user', 'set-role', '--email', email, '--role', 'ldap-reader', '--data-dir', dataDir])
    expect(without.code).toBe(1)
    expect(without.stderr).toContain('YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE')

    const withFile = await runCli([
      'user',
      'set-role',
      '--email',
      email,
      '--role',
      'ldap-reader',
      '--config',
      configFile,
      '--data-dir',
      dataDir,
    ])
    expect(withFile.stderr).toBe('')
    expect(withFile.code).toBe(0)
    expect(withFile.stdout).toBe(`Set role of ${email} to ldap-reader (was user)\n`)

    const fromEnv = await runCli(['user', 'set-role', '--email', email, '--role', 'ldap-reader,user', '--data-dir', dataDir], {
      GATEHOUSE_CONFIG: configFile,
    })
    expect(fromEnv.stderr).toBe('')
    expect(fromEnv.stdout).toBe(`Set role of ${email} to ldap-reader,user (was ldap-reader)\n`)

    // The stored config is untouched (the file is read, never written into the data directory).
    const stored = await runCli(['user', 'set-role', '--email', email, '--role', 'ldap-reader', '--data-dir', dataDir])
    expect(stored.code).toBe(1)

    // A --config file that cannot be read or is not a valid config: exit 2, one line, nothing changed.
    const missing = await runCli([
      'user',
      'set-role',
      '--email',
      email,
      '--role',
      'user',
      '--config',
      join(dir, 'nope.json'),
      '--data-dir',
      dataDir,
    ])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe(`gatehouse: config file ${join(dir, 'nope.json')}: cannot be read (ENOENT)\n`)
    const badFile = join(dir, 'bad.json')
    writeFileSync(badFile, JSON.stringify({ ldap: { searchRoles: ['nobody-declared-this'] } }))
    const bad = await runCli(['user', 'set-role', '--email', email, '--role', 'user', '--config', badFile, '--data-dir', dataDir])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^gatehouse: .*searchRoles/)

    // The server started with the same file sees the role set.
    const server = await startTestServer({ dataDir, keepData: true, config })
    try {
      const { client } = officialClient(server)
      const signIn = await client.signIn.email({ email, password: 'password1234' })
      expect(signIn.error).toBeNull()
      expect(signIn.data?.user).toMatchObject({ role: 'ldap-reader,user' })
      const events = await server.gatehouse.ctx.db
        .select()
        .from(auditEvent)
        .where(and(eq(auditEvent.type, 'admin.set-role'), eq(auditEvent.targetUserId, signIn.data?.user.id as string)))
      expect(events.map((e) => e.detail)).toEqual([
        { via: 'cli', before: { role: 'user' }, after: { role: 'ldap-reader' } },
        { via: 'cli', before: { role: 'ldap-reader' }, after: { role: 'ldap-reader,user' } },
      ])
    } finally {
      await server.close()
    }
  })
})
