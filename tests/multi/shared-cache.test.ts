/**
 * The session cache shared through Redis (server/secondary-storage/shared-cache.ts), with two real
 * `gatehouse serve` processes on one PostgreSQL and one Redis:
 * - a session one instance looked up is answered by the other from Redis, not from the database
 *   (shown by removing the row behind the listeners' backs: triggers off, so nobody is notified);
 * - any change an instance is notified of retires every shared entry at once;
 * - revocations, bans, demotions, deletions and password changes made on one instance are refused
 *   by the other on its very next request even though both caches (in memory and in Redis) were
 *   warm;
 * - with Redis gone, the database answers, and a change made meanwhile is never served stale.
 * Needs `npm run build:server` (dist/server/main.mjs).
 */
import { Redis } from 'ioredis'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisSecondaryStorage } from '../../server/secondary-storage/redis.js'
import { SharedChangeEpoch } from '../../server/secondary-storage/shared-cache.js'
import {
  type PostgresServer,
  postgresUnavailable,
  type RedisServer,
  redisUnavailable,
  startPostgres,
  startRedis,
  warnSkipped,
} from '../helpers/engines.js'
import {
  cliAdminOn,
  type Instance,
  MULTI_PASSWORD,
  SHARED_SECRET,
  sessionUserOn,
  signInOn,
  signUpOn,
  startInstance,
} from '../helpers/instances.js'
import { runCli } from '../helpers/process.js'
import { signValue } from '../../server/crypto/sign.js'

const unavailable = postgresUnavailable() ?? redisUnavailable()
warnSkipped('the session cache shared through Redis (tests/multi/shared-cache.test.ts)', unavailable)

const PASSWORD = MULTI_PASSWORD

/** The session token inside a `better-auth.session_token=<token>.<signature>` cookie. */
const tokenOf = (cookie: string): string => decodeURIComponent(cookie.split('=')[1] ?? '').split('.')[0] as string

/** A validly signed cookie for a session that does not exist: a lookup with it syncs the instance. */
const UNKNOWN_SESSION_COOKIE = `better-auth.session_token=${encodeURIComponent(signValue(SHARED_SECRET, 'n'.repeat(32)))}`

describe.skipIf(unavailable)('the session cache shared through Redis', () => {
  let postgres: PostgresServer
  let redis: RedisServer
  let databaseUrl: string
  let a: Instance
  let b: Instance
  let sql: pg.Client
  let inspect: Redis

  beforeAll(async () => {
    postgres = await startPostgres()
    redis = await startRedis()
    databaseUrl = await postgres.createDatabase('shared_cache')
    const config = { rateLimit: { enabled: false } }
    a = await startInstance('cache-a', { databaseUrl, config, redisUrl: redis.url })
    b = await startInstance('cache-b', { databaseUrl, config, redisUrl: redis.url })
    sql = new pg.Client({ connectionString: databaseUrl })
    await sql.connect()
    inspect = new Redis(redis.url)
  }, 120_000)

  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await sql?.end()
    inspect?.disconnect()
    await redis?.stop()
    await postgres?.stop()
  })

  const user = (on: Instance) => signUpOn(on)
  const signIn = signInOn
  const sessionUser = sessionUserOn

  /** Deletes a session row without notifying anyone (triggers off for this statement's session). */
  async function deleteUnnoticed(token: string): Promise<void> {
    await sql.query('BEGIN')
    await sql.query('SET LOCAL session_replication_role = replica')
    const deleted = await sql.query('DELETE FROM "session" WHERE token = $1', [token])
    await sql.query('COMMIT')
    expect(deleted.rowCount).toBe(1)
  }

  it('a session looked up on one instance is answered by the other from Redis, until any change retires it', async () => {
    const u = await user(a)
    const token = tokenOf(u.cookie)
    // b takes in the sign-up's change notification first (a lookup waits for what was committed
    // before it): taken in later, under load, it would retire the entry a is about to share.
    expect((await b.client(UNKNOWN_SESSION_COOKIE).get('/get-session')).body).toBeNull()
    expect((await sessionUser(a, u.cookie))?.id).toBe(u.id)
    const stored = await inspect.get(`gatehouse:cache:session:${token}`)
    expect(stored).not.toBeNull()
    const ttl = await inspect.ttl(`gatehouse:cache:session:${token}`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(300)

    // The row is gone but nobody was told: b has never seen this session, so only Redis can answer.
    await deleteUnnoticed(token)
    const fromRedis = await b
      .client(u.cookie)
      .get<{ user: { id: string; email: string; createdAt: string }; session: { expiresAt: string } }>('/get-session')
    expect(fromRedis.status).toBe(200)
    expect(fromRedis.body.user).toMatchObject({ id: u.id, email: u.email })
    // Dates come back as dates (serialised as ISO strings on the wire, as from the database).
    expect(fromRedis.body.session.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(new Date(fromRedis.body.user.createdAt).getTime()).not.toBeNaN()

    // Any notified write (here another user's sign-up on a) retires every shared entry.
    await user(a)
    expect(await sessionUser(b, u.cookie)).toBeNull()
    expect(await sessionUser(a, u.cookie)).toBeNull()
  })

  it('revocation, ban, demotion, deletion and password change are refused at once with both caches warm', async () => {
    const adminCookie = await cliAdminOn(a, databaseUrl)
    const revoked = await user(a)
    const banned = await user(b)
    const demoted = await user(b)
    const deleted = await user(a)
    const changer = await user(a)
    const changerOther = await signIn(b, changer.email)
    expect((await a.client(adminCookie).post('/admin/set-role', { userId: demoted.id, role: 'admin' })).status).toBe(200)
    const warm = async () => {
      // Both instances look every session up, so each holds it in memory and Redis holds it too.
      for (const on of [a, b]) {
        for (const u of [revoked, banned, deleted]) expect((await sessionUser(on, u.cookie))?.id).toBe(u.id)
        expect((await sessionUser(on, demoted.cookie))?.role).toBe('admin')
        expect((await sessionUser(on, changerOther))?.id).toBe(changer.id)
      }
      expect(await inspect.exists(`gatehouse:cache:session:${tokenOf(revoked.cookie)}`)).toBe(1)
    }

    await warm()
    expect((await a.client(revoked.cookie).post('/revoke-session', { token: tokenOf(revoked.cookie) })).status).toBe(200)
    expect(await sessionUser(b, revoked.cookie)).toBeNull()

    for (const on of [a, b]) expect((await sessionUser(on, banned.cookie))?.id).toBe(banned.id)
    expect((await a.client(adminCookie).post('/admin/ban-user', { userId: banned.id })).status).toBe(200)
    expect(await sessionUser(b, banned.cookie)).toBeNull()

    for (const on of [a, b]) expect((await sessionUser(on, demoted.cookie))?.role).toBe('admin')
    expect((await a.client(adminCookie).post('/admin/set-role', { userId: demoted.id, role: 'user' })).status).toBe(200)
    expect((await sessionUser(b, demoted.cookie))?.role).toBe('user')
    expect((await b.client(demoted.cookie).get('/admin/list-users?limit=1')).status).toBe(403)

    for (const on of [a, b]) expect((await sessionUser(on, deleted.cookie))?.id).toBe(deleted.id)
    expect((await a.client(adminCookie).post('/admin/remove-user', { userId: deleted.id })).status).toBe(200)
    expect(await sessionUser(b, deleted.cookie)).toBeNull()

    for (const on of [a, b]) expect((await sessionUser(on, changerOther))?.id).toBe(changer.id)
    const changed = await a.client(changer.cookie).post('/change-password', {
      currentPassword: PASSWORD,
      newPassword: 'another horse battery',
      revokeOtherSessions: true,
    })
    expect(changed.status).toBe(200)
    expect(await sessionUser(b, changerOther)).toBeNull()
  })

  it('a CLI change (no instance wrote it) retires the shared entries too', async () => {
    const u = await user(b)
    for (const on of [a, b]) expect((await sessionUser(on, u.cookie))?.role).toBe('user')
    const set = await runCli(['user', 'set-role', '--email', u.email, '--role', 'admin', '--data-dir', a.dataDir], {
      GATEHOUSE_DATABASE_URL: databaseUrl,
      GATEHOUSE_SECRET: SHARED_SECRET,
    })
    expect(set.code).toBe(0)
    expect((await sessionUser(a, u.cookie))?.role).toBe('admin')
    expect((await sessionUser(b, u.cookie))?.role).toBe('admin')
  })
})

describe.skipIf(unavailable)('the shared epoch when Redis fails', () => {
  let redis: RedisServer

  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    await redis?.stop()
  })

  it('a bump that could not reach Redis makes the shared cache untrusted until a bump gets through', async () => {
    const storage = await redisSecondaryStorage(redis.url)
    try {
      const epoch = new SharedChangeEpoch(storage)
      const first = await epoch.current()
      expect(first).toMatch(/^[0-9a-f-]{36}$/)
      expect(await epoch.current()).toBe(first)
      epoch.bump()
      const second = await epoch.current()
      expect(second).not.toBe(first)

      // Redis unreachable: commands fail at once (no offline queue), so the bump is lost.
      storage.client.disconnect()
      epoch.bump()
      expect(await epoch.current()).toBeNull()

      // Back: the next read first replaces the epoch, so nothing tagged before the lost bump matches.
      // disconnect() still reads 'ready' until the socket has closed: wait for 'end', then connect.
      const deadline = Date.now() + 5_000
      while (storage.client.status !== 'end' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
      await storage.client.connect()
      expect(storage.client.status).toBe('ready')
      const third = await epoch.current()
      expect(third).not.toBeNull()
      expect(third).not.toBe(second)
    } finally {
      await storage.close()
    }
  })

  it('an epoch lost with Redis (a flush, a restart) is replaced by a new random one, never an old value', async () => {
    const storage = await redisSecondaryStorage(redis.url)
    try {
      const epoch = new SharedChangeEpoch(storage)
      const before = await epoch.current()
      await storage.client.flushall()
      const after = await epoch.current()
      expect(after).not.toBeNull()
      expect(after).not.toBe(before)
    } finally {
      await storage.close()
    }
  })
})
