import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Gatehouse, openGatehouse } from '../../../server/gatehouse.js'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { runLogoutDeliveries } from '../../../server/features/oidc-provider/index.js'
import { listLogoutDeliveries, queueLogoutDeliveries } from '../../../server/features/oidc-provider/store.js'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../../helpers/engines.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { serverLog, silentLogger, TestClock, type TestServer } from '../../helpers/server.js'
import { deadBesideHealthy } from './backchannel-isolation.js'
import { discover, PASSWORD, type Receiver, signedInJar, signIn, signOutOf, startReceiver } from './rp.js'

/**
 * Back-channel logout with two instances on one PostgreSQL database: the queue is shared, each
 * notice is claimed by one instance and sent once, whichever instance ended the session.
 */
const unavailable = postgresUnavailable()
warnSkipped('tests/features/oidc-provider/backchannel-postgres.test.ts (back-channel logout on two instances)', unavailable)

let postgres: PostgresServer
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
    const url = await postgres.createDatabase()
    const clock = new TestClock()
    instances.push(await instance(url, clock))
    instances.push(await instance(url, clock))
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

  it('a dead RP beside a healthy one: the healthy notice arrives within one timeout (the shared queue)', async () => {
    serverLog.allowWarning(/^Back-channel logout to client/)
    await deadBesideHealthy(instances[0]?.server as TestServer, instances.length)
  })
})
