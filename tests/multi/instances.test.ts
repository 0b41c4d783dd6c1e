/**
 * Issue 14's guarantees of several instances, each with real `gatehouse serve` processes on one
 * throwaway PostgreSQL (tests/helpers/engines.ts), requests alternating between them:
 * - a revocation, ban, demotion, deletion or password change (revokeOtherSessions) made on one
 *   instance is refused by the other on its very next request (no sleep in between);
 * - a change through the CLI reaches the running instances at once;
 * - the per-account lockout and the rate limits (database and Redis storage) are shared;
 * - races stay exact: the last free seat of an organization, one email signed up 50 times at once;
 * - the outbox delivers each message once with both instances draining it;
 * - config edited in one instance's panel applies on the other without a restart;
 * - the audit log read on either instance is one log;
 * - a SIGKILLed instance under write load loses no acknowledged write; the others keep serving.
 * Needs `npm run build:server` (dist/server/main.mjs).
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type PostgresServer,
  postgresUnavailable,
  type RedisServer,
  redisUnavailable,
  startPostgres,
  startRedis,
  warnSkipped,
} from '../helpers/engines.js'
import { uniqueEmail } from '../helpers/http.js'
import {
  cliAdminOn,
  eventually,
  type Instance,
  MULTI_PASSWORD,
  sessionUserOn,
  signInOn,
  signUpOn,
  startInstance,
} from '../helpers/instances.js'
import { runCli } from '../helpers/process.js'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp.js'

const noPostgres = postgresUnavailable()
warnSkipped('several instances on PostgreSQL (tests/multi)', noPostgres)

const PASSWORD = MULTI_PASSWORD

describe.skipIf(noPostgres)('several instances on one PostgreSQL', () => {
  let postgres: PostgresServer
  let databaseUrl: string
  let smtp: SmtpSink
  let a: Instance
  let b: Instance
  const started: Instance[] = []

  beforeAll(async () => {
    postgres = await startPostgres()
    databaseUrl = await postgres.createDatabase('shared')
    smtp = await startSmtpSink()
    const config = { rateLimit: { enabled: false }, emailAndPassword: { sendResetPassword: true }, organization: { membershipLimit: 2 } }
    // Started one after the other: the second finds the migrations applied (advisory lock).
    a = await startInstance('a', { databaseUrl, config, smtpUrl: smtp.url })
    b = await startInstance('b', { databaseUrl, config, smtpUrl: smtp.url })
    started.push(a, b)
  }, 120_000)

  afterAll(async () => {
    for (const instance of started) await instance.stop()
    await smtp?.close()
    await postgres?.stop()
  })

  const user = (on: Instance, email?: string) => signUpOn(on, email)
  const signIn = signInOn
  const sessionUser = sessionUserOn
  const admin = (on: Instance) => cliAdminOn(on, databaseUrl)

  it('a revoked session is refused by the other instance on its next request', async () => {
    const u = await user(a)
    expect((await sessionUser(b, u.cookie))?.id).toBe(u.id)
    const token = decodeURIComponent(u.cookie.split('=')[1] ?? '').split('.')[0]
    expect((await a.client(u.cookie).post('/revoke-session', { token })).status).toBe(200)
    expect(await sessionUser(b, u.cookie)).toBeNull()
  })

  it('a ban, a demotion and a deletion on one instance are refused by the other at once', async () => {
    const adminCookie = await admin(a)
    const banned = await user(b)
    const demoted = await user(b)
    const deleted = await user(b)
    // The demoted user is an admin first, using admin routes on b.
    expect((await a.client(adminCookie).post('/admin/set-role', { userId: demoted.id, role: 'admin' })).status).toBe(200)
    const demotedCookie = await signIn(b, demoted.email)
    expect((await b.client(demotedCookie).get('/admin/list-users?limit=1')).status).toBe(200)
    for (const u of [banned, deleted]) expect((await sessionUser(b, u.cookie))?.id).toBe(u.id)

    expect((await a.client(adminCookie).post('/admin/ban-user', { userId: banned.id })).status).toBe(200)
    expect(await sessionUser(b, banned.cookie)).toBeNull()
    expect((await b.client().post('/sign-in/email', { email: banned.email, password: PASSWORD })).status).toBe(403)

    expect((await a.client(adminCookie).post('/admin/set-role', { userId: demoted.id, role: 'user' })).status).toBe(200)
    expect((await b.client(demotedCookie).get('/admin/list-users?limit=1')).status).toBe(403)

    expect((await a.client(adminCookie).post('/admin/remove-user', { userId: deleted.id })).status).toBe(200)
    expect(await sessionUser(b, deleted.cookie)).toBeNull()
  })

  it('a password change with revokeOtherSessions ends the other sessions on every instance', async () => {
    const u = await user(a)
    const other = await signIn(b, u.email)
    expect((await sessionUser(b, other))?.id).toBe(u.id)
    const changed = await a.client(u.cookie).post('/change-password', {
      currentPassword: PASSWORD,
      newPassword: 'another horse battery',
      revokeOtherSessions: true,
    })
    expect(changed.status).toBe(200)
    expect(await sessionUser(b, other)).toBeNull()
    expect(await sessionUser(a, other)).toBeNull()
  })

  it('a role set through the CLI reaches both running instances at once', async () => {
    const u = await user(a)
    const onB = await signIn(b, u.email)
    expect((await b.client(onB).get('/admin/list-users?limit=1')).status).toBe(403)
    const set = await runCli(['user', 'set-role', '--email', u.email, '--role', 'admin', '--data-dir', a.dataDir], {
      GATEHOUSE_DATABASE_URL: databaseUrl,
    })
    expect(set.code).toBe(0)
    expect((await b.client(onB).get('/admin/list-users?limit=1')).status).toBe(200)
    expect((await a.client(u.cookie).get('/admin/list-users?limit=1')).status).toBe(200)
  })

  it('10 failed sign-ins alternating between instances lock the account on both', async () => {
    const u = await user(a)
    for (let i = 0; i < 10; i++) {
      const on = i % 2 === 0 ? a : b
      expect((await on.client().post('/sign-in/email', { email: u.email, password: 'wrong-password' })).status).toBe(401)
    }
    for (const on of [a, b]) expect((await on.client().post('/sign-in/email', { email: u.email, password: PASSWORD })).status).toBe(429)
  })

  it('50 parallel sign-ups with one email across both instances create exactly one user', async () => {
    const email = uniqueEmail('race')
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).client().post('/sign-up/email', { email, password: PASSWORD, name: 'Race' })),
    )
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1)
    expect(answers.filter((r) => r.status !== 200).every((r) => r.status === 422)).toBe(true)
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    const { rows } = await client.query('select count(*)::int as n from "user" where email = $1', [email])
    await client.end()
    expect(rows[0].n).toBe(1)
  })

  it('20 parallel accepts of the last free seat, across instances, admit exactly one', async () => {
    const owner = await user(a)
    const created = await a
      .client(owner.cookie)
      .post<{ id: string }>('/organization/create', { name: 'Seats', slug: `seats-${Date.now()}` })
    expect(created.status).toBe(200)
    const invitees = await Promise.all(Array.from({ length: 20 }, (_, i) => user(i % 2 ? a : b)))
    const invitations: string[] = []
    for (const invitee of invitees) {
      const invited = await a
        .client(owner.cookie)
        .post<{ id: string }>('/organization/invite-member', { email: invitee.email, role: 'member', organizationId: created.body.id })
      expect(invited.status).toBe(200)
      invitations.push(invited.body.id)
    }
    const accepts = await Promise.all(
      invitees.map((invitee, i) =>
        (i % 2 ? b : a).client(invitee.cookie).post('/organization/accept-invitation', { invitationId: invitations[i] }),
      ),
    )
    expect(accepts.filter((r) => r.status === 200)).toHaveLength(1)
    const members = await a.client(owner.cookie).get<{ members: unknown[] }>(`/organization/list-members?organizationId=${created.body.id}`)
    expect(members.body.members).toHaveLength(2)
  })

  it('the outbox delivers each message exactly once while both instances drain it', async () => {
    const users = await Promise.all(Array.from({ length: 12 }, (_, i) => user(i % 2 ? a : b, uniqueEmail('outbox'))))
    const addresses = new Set(users.map((u) => u.email))
    await Promise.all(
      users.map((u, i) => (i % 2 ? b : a).client().post('/request-password-reset', { email: u.email, redirectTo: '/reset' })),
    )
    const resets = () => smtp.inbox.filter((m) => m.to.some((t) => addresses.has(t)) && /reset/i.test(m.subject))
    expect(await eventually(async () => resets().length >= users.length, 15_000)).toBe(true)
    // A second delivery would come from an instance's outbox loop still at work. The panel's test
    // mail answers once that instance's loop is idle (sendTestEmail awaits mailer.whenIdle()), so
    // after it has answered on both, every delivery either instance started has been made.
    for (const instance of [a, b]) {
      const probe = await instance.panelCall<{ status: string }>('email.sendTest', { to: uniqueEmail('idle') })
      expect([probe.status, probe.body.status]).toEqual([200, 'sent'])
    }
    const perAddress = new Map<string, number>()
    for (const m of resets()) for (const t of m.to) perAddress.set(t, (perAddress.get(t) ?? 0) + 1)
    expect([...perAddress.values()]).toEqual(users.map(() => 1))
  })

  it('a config change written while the instances were not listening is applied once they listen again', async () => {
    const admin = new pg.Client({ connectionString: databaseUrl })
    await admin.connect()
    const listeners = async () =>
      (
        await admin.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where application_name = 'gatehouse-listen' and datname = current_database()`,
        )
      ).rows[0]?.n
    const signUpStatus = async (on: Instance) =>
      (await on.client().post('/sign-up/email', { email: uniqueEmail(), password: PASSWORD, name: 'X' })).status
    try {
      expect(await listeners()).toBe(2)
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'gatehouse-listen' and datname = current_database()`,
      )
      expect(await eventually(async () => (await listeners()) === 0)).toBe(true)
      // Written by hand while nobody listens: its notification reaches no one.
      await admin.query(`update "gatehouseConfig" set "config" = "config" || '{"disabledPaths": ["/sign-up/email"]}'::jsonb where "id" = 1`)
      expect(await listeners()).toBe(0)
      expect(await eventually(async () => (await signUpStatus(a)) === 404 && (await signUpStatus(b)) === 404)).toBe(true)
      expect(await listeners()).toBe(2)
      expect((await a.panelCall('settings.update', { patch: { disabledPaths: null } })).status).toBe(200)
      expect(await eventually(async () => (await signUpStatus(b)) === 200)).toBe(true)
    } finally {
      await admin.end()
    }
  })

  it('config edited in the panel of one instance applies on the other without a restart', async () => {
    const email = uniqueEmail()
    // Earlier tests of this file change disabledPaths too: only this test's changes are counted below.
    const auditedChanges = async () =>
      (
        await b.panelCall<{ events: Array<{ id: number; detail: { keys?: string[]; via?: string } }> }>('audit.list', {
          type: 'config.changed',
          limit: 50,
        })
      ).body.events.filter((e) => e.detail.keys?.includes('disabledPaths'))
    const before = new Set((await auditedChanges()).map((e) => e.id))
    expect((await b.client().post('/sign-up/email', { email, password: PASSWORD, name: 'Before' })).status).toBe(200)
    const updated = await a.panelCall('settings.update', { patch: { disabledPaths: ['/sign-up/email'] } })
    expect(updated.status).toBe(200)
    expect(
      await eventually(
        async () => (await b.client().post('/sign-up/email', { email: uniqueEmail(), password: PASSWORD, name: 'X' })).status === 404,
      ),
    ).toBe(true)
    expect((await b.panelCall<{ stored: { disabledPaths?: string[] } }>('settings.get')).body.stored.disabledPaths).toEqual([
      '/sign-up/email',
    ])
    expect((await a.panelCall('settings.update', { patch: { disabledPaths: null } })).status).toBe(200)
    expect(
      await eventually(
        async () => (await b.client().post('/sign-up/email', { email: uniqueEmail(), password: PASSWORD, name: 'X' })).status === 200,
      ),
    ).toBe(true)
    // Each change is audited once, by the instance it was made on (issue 31 §2), not again by the one that applied it.
    const ofDisabledPaths = (await auditedChanges()).filter((e) => !before.has(e.id))
    expect(ofDisabledPaths.map((e) => e.detail.via)).toEqual(['panel', 'panel'])
  })

  it('the audit log read on either instance holds the events of both', async () => {
    const onA = await user(a, uniqueEmail('audit-a'))
    const onB = await user(b, uniqueEmail('audit-b'))
    for (const instance of [a, b]) {
      const listed = await instance.panelCall<{ events: { detail: unknown; targetUserId: string | null }[] }>('audit.list', { limit: 500 })
      expect(listed.status).toBe(200)
      const targets = new Set(listed.body.events.map((e) => e.targetUserId))
      expect([targets.has(onA.id), targets.has(onB.id)]).toEqual([true, true])
    }
  })

  it('a SIGKILLed instance under write load loses no acknowledged write, and the others keep serving', async () => {
    const c = await startInstance('c', { databaseUrl, config: { rateLimit: { enabled: false } } })
    started.push(c)
    const acknowledged: string[] = []
    let killed = false
    const writer = async (on: Instance) => {
      for (let i = 0; i < 15; i++) {
        if (on === c && killed) return
        const email = uniqueEmail('load')
        try {
          const res = await on.client().post('/sign-up/email', { email, password: PASSWORD, name: 'Load' })
          if (res.status === 200) acknowledged.push(email)
        } catch {
          // The killed instance's connection was cut: not acknowledged.
        }
      }
    }
    const load = Promise.all([writer(a), writer(c), writer(c), writer(b)])
    await eventually(async () => acknowledged.length >= 6, 20_000)
    c.server.child.kill('SIGKILL')
    killed = true
    await load
    expect(acknowledged.length).toBeGreaterThan(6)
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    const { rows } = await client.query<{ email: string }>('select email from "user" where email = any($1)', [acknowledged])
    await client.end()
    expect(rows.map((r) => r.email).sort()).toEqual([...acknowledged].sort())
    for (const on of [a, b]) expect((await on.client().get('/ok')).status).toBe(200)
    expect((await (await user(b)).cookie).length).toBeGreaterThan(0)
  })
})

describe.skipIf(noPostgres)('rate limits shared by several instances', () => {
  const noRedis = redisUnavailable()
  warnSkipped('the Redis rate-limit storage across instances', noRedis)
  let postgres: PostgresServer
  let redis: RedisServer | undefined
  const started: Instance[] = []

  beforeAll(async () => {
    postgres = await startPostgres()
    if (!noRedis) redis = await startRedis()
  }, 60_000)
  afterAll(async () => {
    for (const instance of started) await instance.stop()
    await redis?.stop()
    await postgres?.stop()
  })

  // Issue 31 §5: with --database-url, an unset rateLimit.storage is shared too ("database", or
  // "secondary-storage" with --redis-url), so the documented limit holds across instances by default.
  const cases: Array<{ label: string; storage?: 'database' | 'secondary-storage'; redis: boolean; table: boolean }> = [
    { label: 'unset: the database by default', redis: false, table: true },
    { label: 'database', storage: 'database', redis: false, table: true },
    ...(noRedis
      ? []
      : [
          { label: 'secondary-storage', storage: 'secondary-storage' as const, redis: true, table: false },
          { label: 'unset with --redis-url: Redis by default', redis: true, table: false },
        ]),
  ]
  // Each case its own client addresses: the Redis cases share one Redis.
  for (const [n, { label, storage, redis: withRedis, table }] of cases.entries()) {
    it(`3 sign-ins per 10 s from one client across two instances (${label}), also in parallel`, async () => {
      const databaseUrl = await postgres.createDatabase(`limits_${label.replace(/[^a-z]+/g, '_')}`)
      const config = { rateLimit: { enabled: true, ...(storage ? { storage } : {}) } }
      const redisUrl = withRedis ? redis?.url : undefined
      const a = await startInstance('rl-a', { databaseUrl, config, redisUrl })
      const b = await startInstance('rl-b', { databaseUrl, config, redisUrl })
      started.push(a, b)
      const body = { email: uniqueEmail(), password: 'wrong-password' }
      const from = (on: Instance, ip: string) => on.client(undefined, { 'x-forwarded-for': ip })
      const sequential = [a, b, a, b].map((on) => from(on, `203.0.113.${20 + 2 * n}`))
      const statuses: number[] = []
      for (const client of sequential) statuses.push((await client.post('/sign-in/email', body)).status)
      expect(statuses).toEqual([401, 401, 401, 429])
      const parallel = await Promise.all(
        Array.from({ length: 20 }, (_, i) => from(i % 2 ? a : b, `203.0.113.${21 + 2 * n}`).post('/sign-in/email', body)),
      )
      expect(parallel.filter((r) => r.status === 401)).toHaveLength(3)
      expect(parallel.filter((r) => r.status === 429)).toHaveLength(17)
      // Where the counters went: the database's rateLimit table, or Redis (the table stays empty).
      const client = new pg.Client({ connectionString: databaseUrl })
      await client.connect()
      const { rows } = await client.query<{ n: string }>('select count(*) as n from "rateLimit"')
      await client.end()
      expect(Number(rows[0]?.n) > 0).toBe(table)
      for (const on of [a, b]) expect(on.server.output()).not.toContain('rateLimit.storage is "memory"')
    })
  }

  it('an explicit "memory" on PostgreSQL warns at start and counts per instance', async () => {
    const databaseUrl = await postgres.createDatabase('limits_memory')
    const config = { rateLimit: { enabled: true, storage: 'memory' } }
    const a = await startInstance('rl-mem-a', { databaseUrl, config })
    const b = await startInstance('rl-mem-b', { databaseUrl, config })
    started.push(a, b)
    for (const on of [a, b]) expect(on.server.output()).toContain('rateLimit.storage is "memory" on PostgreSQL')
    const body = { email: uniqueEmail(), password: 'wrong-password' }
    const statuses: number[] = []
    for (const on of [a, b, a, b, a, b, a, b])
      statuses.push((await on.client(undefined, { 'x-forwarded-for': '203.0.113.11' }).post('/sign-in/email', body)).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429])
  })
})
