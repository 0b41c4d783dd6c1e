import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Gatehouse, openGatehouse } from '../../../server/gatehouse.js'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { runLogoutDeliveries } from '../../../server/features/oidc-provider/index.js'
import { listLogoutDeliveries, queueLogoutDeliveries } from '../../../server/features/oidc-provider/store.js'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../../helpers/engines.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { serverLog, silentLogger, TestClock, type TestServer } from '../../helpers/server.js'
import { deadBesideHealthy, until } from './backchannel-isolation.js'
import { discover, PASSWORD, type Receiver, signedInJar, signIn, signOutOf, startReceiver } from './rp.js'

/**
 * Back-channel logout with two instances on one PostgreSQL database: the queue is shared, each
 * notice is claimed by one instance and sent once, whichever instance ended the session; an
 * instance waiting on another's claim of a notice does not claim it too (issue 51).
 */
const unavailable = postgresUnavailable()
warnSkipped('tests/features/oidc-provider/backchannel-postgres.test.ts (back-channel logout on two instances)', unavailable)

let postgres: PostgresServer
let databaseUrl: string
let receiver: Receiver
const instances: { gatehouse: Gatehouse; server: TestServer }[] = []
const dirs: string[] = []

async function instance(databaseUrl: string, clock: TestClock): Promise<{ gatehouse: Gatehouse; server: TestServer }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bc-'))
  dirs.push(dataDir)
  const gatehouse = await openGatehouse({
    engine: { databaseUrl },
    dataDir,
    port: 0,
    host: '127.0.0.1',
    secret: 'two-instances-secret-0123456789abcdef',
    config: { rateLimit: { enabled: false }, oidcProvider: { enabled: true } },
    clock,
    logger: silentLogger,
  })
  const base = await gatehouse.listen()
  const server = { base, origin: new URL(base).origin, clock, gatehouse, dataDir, databaseUrl, close: () => gatehouse.close() }
  return { gatehouse, server }
}

describe.skipIf(unavailable)('back-channel logout on two instances (PostgreSQL)', () => {
  beforeAll(async () => {
    postgres = await startPostgres()
    databaseUrl = await postgres.createDatabase()
    const clock = new TestClock()
    instances.push(await instance(databaseUrl, clock))
    instances.push(await instance(databaseUrl, clock))
    receiver = await startReceiver()
  }, 60_000)

  afterAll(async () => {
    for (const { gatehouse } of instances) await gatehouse.close()
    await receiver?.close()
    await postgres?.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('a session signed in on one instance and signed out on the other: one token', async () => {
    const [one, two] = instances as [(typeof instances)[0], (typeof instances)[0]]
    const { client, clientSecret } = await createClient(
      one.gatehouse.ctx,
      { name: 'Shared RP', redirectUris: ['http://rp.example.test/callback'], skipConsent: true, backchannelLogoutUri: receiver.url },
      { via: 'cli' },
    )
    const person = await verifiedSignUp(one.server, { password: PASSWORD })
    const jar = await signedInJar(one.server, person)
    const tokens = await signIn(one.server, await discover(one.server, client.clientId, clientSecret as string), jar)
    const sid = tokens.claims()?.sid as string
    await signOutOf(two.server, jar)
    const received = await receiver.waitFor(1)
    expect(received.map((r) => decodeJwt(r.logoutToken).sid)).toEqual([sid])
    await Promise.all([runLogoutDeliveries(one.gatehouse.ctx), runLogoutDeliveries(two.gatehouse.ctx)])
    expect(receiver.received).toHaveLength(1)
  })

  it('many notices delivered by both instances at once: each sent exactly once', async () => {
    const [one, two] = instances as [(typeof instances)[0], (typeof instances)[0]]
    const before = receiver.received.length
    const clientId = (await listLogoutDeliveries(one.gatehouse.ctx))[0]?.clientId as string
    const now = new Date(one.server.clock.now())
    const sids = Array.from({ length: 60 }, (_, i) => `sid-${i}`)
    await queueLogoutDeliveries(
      one.gatehouse.ctx,
      sids.map((sid, i) => ({
        id: `row-${i}`,
        clientId,
        accountId: `user-${i}`,
        sid,
        attempts: 0,
        nextAttemptAt: now,
        claimedUntil: null,
        sentAt: null,
        lastError: null,
        createdAt: now,
      })),
    )
    const runs = await Promise.all([
      runLogoutDeliveries(one.gatehouse.ctx),
      runLogoutDeliveries(two.gatehouse.ctx),
      runLogoutDeliveries(one.gatehouse.ctx),
      runLogoutDeliveries(two.gatehouse.ctx),
    ])
    const received = await receiver.waitFor(before + sids.length)
    // The background polls of both instances raced the runs too: once no row is claimed (a claim
    // ends when its POST does), nothing is in flight and what the receiver holds is final.
    await expect
      .poll(
        async () =>
          (await listLogoutDeliveries(two.gatehouse.ctx)).filter((r) => r.sid.startsWith('sid-')).every((r) => r.claimedUntil === null),
        {
          timeout: 15_000,
        },
      )
      .toBe(true)
    const got = received.slice(before).map((r) => decodeJwt(r.logoutToken).sid as string)
    expect(got.sort()).toEqual([...sids].sort())
    expect(runs.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(sids.length)
    const rows = (await listLogoutDeliveries(two.gatehouse.ctx)).filter((r) => r.sid.startsWith('sid-'))
    expect(rows.every((r) => r.sentAt !== null && r.attempts === 1)).toBe(true)
  })

  it('a notice claimed by one instance, its claim held open: the other instance waits on its rows and does not claim them too', async () => {
    const [one, two] = instances as [(typeof instances)[0], (typeof instances)[0]]
    const sql = new pg.Client({ connectionString: databaseUrl })
    const gate = new pg.Client({ connectionString: databaseUrl })
    await sql.connect()
    await gate.connect()
    // Claims of these notices stop in a BEFORE UPDATE trigger until the gate opens: a row trigger
    // runs with its row locked, so the first claim holds its rows inside its open transaction.
    await sql.query(`CREATE FUNCTION held_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.sid LIKE 'held-%' THEN PERFORM pg_advisory_xact_lock_shared(51); END IF;
        RETURN NEW;
      END $$`)
    await sql.query('CREATE TRIGGER held_claim BEFORE UPDATE ON "oidcLogoutDelivery" FOR EACH ROW EXECUTE FUNCTION held_claim()')
    await gate.query('SELECT pg_advisory_lock(51)')
    let gateOpen = false
    const openGate = async () => {
      if (!gateOpen) await gate.query('SELECT pg_advisory_unlock(51)')
      gateOpen = true
    }
    /** Claims of the queue waiting now on a lock of kind `events` (the advisory gate, or another transaction's row). */
    const waitingClaims = async (events: string[]) =>
      (
        await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = ANY($1) AND query ILIKE 'update "oidcLogoutDelivery"%'`,
          [events],
        )
      ).rows[0]?.n ?? 0
    try {
      const before = receiver.received.length
      const { client } = await createClient(
        one.gatehouse.ctx,
        { name: 'Held RP', redirectUris: ['http://held.example.test/callback'], skipConsent: true, backchannelLogoutUri: receiver.url },
        { via: 'cli' },
      )
      const now = new Date(one.server.clock.now())
      const sids = Array.from({ length: 5 }, (_, i) => `held-${i}`)
      await queueLogoutDeliveries(
        one.gatehouse.ctx,
        sids.map((sid, i) => ({
          id: `held-row-${i}`,
          clientId: client.clientId,
          accountId: `held-user-${i}`,
          sid,
          attempts: 0,
          nextAttemptAt: now,
          claimedUntil: null,
          sentAt: null,
          lastError: null,
          createdAt: now,
        })),
      )
      // One instance claims (or its background poll does) and is held; then the other's claim,
      // which saw the same rows due, waits on that transaction's row locks.
      const first = runLogoutDeliveries(one.gatehouse.ctx)
      await until('a claim held at the gate', async () => (await waitingClaims(['advisory'])) === 1)
      const second = runLogoutDeliveries(two.gatehouse.ctx)
      await until('the other instance’s claim waiting on its rows', async () => (await waitingClaims(['transactionid', 'tuple'])) === 1)
      expect(receiver.received).toHaveLength(before)
      await openGate()
      const runs = await Promise.all([first, second])
      // The held claim is sent; the waiting one found the rows claimed and took none. (A background
      // poll may have been either claim: once no row is claimed, nothing is in flight.)
      await until('the notices to be sent and no row claimed', async () =>
        (await listLogoutDeliveries(two.gatehouse.ctx))
          .filter((r) => r.sid.startsWith('held-'))
          .every((r) => r.sentAt !== null && r.claimedUntil === null),
      )
      expect(await Promise.all([runLogoutDeliveries(one.gatehouse.ctx), runLogoutDeliveries(two.gatehouse.ctx)])).toEqual([0, 0])
      const rows = (await listLogoutDeliveries(two.gatehouse.ctx)).filter((r) => r.sid.startsWith('held-'))
      expect(rows.map((r) => ({ sid: r.sid, attempts: r.attempts })).sort((a, b) => a.sid.localeCompare(b.sid))).toEqual(
        sids.map((sid) => ({ sid, attempts: 1 })),
      )
      const got = receiver.received.slice(before).map((r) => decodeJwt(r.logoutToken).sid as string)
      expect(got.sort()).toEqual([...sids].sort())
      expect(runs.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(sids.length)
    } finally {
      await openGate()
      await sql.query('DROP TRIGGER IF EXISTS held_claim ON "oidcLogoutDelivery"')
      await sql.query('DROP FUNCTION IF EXISTS held_claim()')
      await gate.end()
      await sql.end()
    }
  })

  it('a dead RP beside a healthy one: the healthy notice arrives within one timeout (the shared queue)', async () => {
    serverLog.allowWarning(/^Back-channel logout to client/)
    await deadBesideHealthy(instances[0]?.server as TestServer, instances.length)
  })
})
