import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt } from 'jose'
import { expect } from 'vitest'
import { deliveryTimeout } from '../../../server/features/oidc-provider/backchannel.js'
import { createClient, getClient } from '../../../server/features/oidc-provider/clients.js'
import { runLogoutDeliveries } from '../../../server/features/oidc-provider/index.js'
import { listLogoutDeliveries, queueLogoutDeliveries } from '../../../server/features/oidc-provider/store.js'
import type { TestServer } from '../../helpers/server.js'
import { discover, PASSWORD, signedInJar, signIn, signOutOf, startReceiver } from './rp.js'
import { signUp } from '../../helpers/http.js'
import { eq } from 'drizzle-orm'
import { user } from '../../../server/db/schema.js'

/**
 * A dead RP beside a healthy one (issue 47 §7): the dead one accepts the connection and never
 * answers. The delivery's time limit is the test's (deliveryTimeout), fired by hand: the healthy
 * RP's notice must arrive while every timeout is still pending, i.e. within one timeout whatever
 * the dead RP's queue (400 notices). Shared by the SQLite and PostgreSQL suites.
 */

/** Waits for a condition (bounded); the state it asserts, never a fixed time. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** `instances`: how many instances share the queue (each may run one lane per RP). */
export async function deadBesideHealthy(server: TestServer, instances = 1): Promise<void> {
  const ctx = server.gatehouse.ctx
  const hanging: ServerResponse[] = []
  let deadRequests = 0
  const dead = createServer((_req: IncomingMessage, res: ServerResponse) => {
    deadRequests++
    hanging.push(res)
  })
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
  const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/logout`
  const healthy = await startReceiver()
  const timers: AbortController[] = []
  const realSignal = deliveryTimeout.signal
  deliveryTimeout.signal = () => {
    const controller = new AbortController()
    timers.push(controller)
    return controller.signal
  }
  try {
    const by = { via: 'cli' as const }
    const deadClient = await createClient(
      ctx,
      { name: 'Dead RP', redirectUris: ['http://dead.example.test/callback'], skipConsent: true, backchannelLogoutUri: deadUrl },
      by,
    )
    const healthyClient = await createClient(
      ctx,
      { name: 'Healthy RP', redirectUris: ['http://rp.example.test/callback'], skipConsent: true, backchannelLogoutUri: healthy.url },
      by,
    )
    const queuedAt = new Date(server.clock.now())
    await queueLogoutDeliveries(
      ctx,
      Array.from({ length: 400 }, (_, i) => ({
        id: `dead-${i}`,
        clientId: deadClient.client.clientId,
        accountId: `user-${i}`,
        sid: `dead-sid-${i}`,
        attempts: 0,
        nextAttemptAt: queuedAt,
        claimedUntil: null,
        sentAt: null,
        lastError: null,
        createdAt: queuedAt,
      })),
    )
    // The dead RP's lane starts and hangs.
    const run = runLogoutDeliveries(ctx)
    await until('the dead RP to be asked', () => deadRequests > 0)

    const person = await signUp(server.base, { password: PASSWORD })
    await ctx.db.update(user).set({ emailVerified: true }).where(eq(user.id, person.user.id))
    const jar = await signedInJar(server, person)
    const tokens = await signIn(server, await discover(server, healthyClient.client.clientId, healthyClient.clientSecret as string), jar)
    await signOutOf(server, jar)
    await until('the healthy RP’s notice', () => healthy.received.length > 0)
    await until('its delivery to be recorded', async () =>
      (await listLogoutDeliveries(ctx)).some((r) => r.clientId === healthyClient.client.clientId && r.sentAt !== null),
    )
    // Arrived with no timeout fired: the dead RP is still hanging on its first batch, no more.
    expect(timers.every((t) => !t.signal.aborted)).toBe(true)
    expect(hanging.length).toBeGreaterThan(0)
    expect(deadRequests).toBeLessThanOrEqual(20 * instances)
    expect(healthy.received.map((r) => decodeJwt(r.logoutToken).sid)).toEqual([tokens.claims()?.sid])

    // One timeout later the dead RP's other notices wait for its retry, unattempted.
    const fire = () => {
      for (const timer of timers) if (!timer.signal.aborted) timer.abort(new Error('test timeout'))
    }
    fire()
    await run
    // (The server's own poll, or another instance's, may have been running a lane of the dead RP.)
    await until('the dead RP’s lanes to end', async () => {
      fire()
      return (await listLogoutDeliveries(ctx)).every((r) => r.clientId !== deadClient.client.clientId || r.claimedUntil === null)
    })
    const askedOnce = deadRequests
    expect(askedOnce).toBeLessThanOrEqual(20 * instances)
    const rows = (await listLogoutDeliveries(ctx)).filter((r) => r.clientId === deadClient.client.clientId)
    expect(rows).toHaveLength(400)
    expect(rows.every((r) => r.sentAt === null && r.claimedUntil === null && r.lastError !== null)).toBe(true)
    expect(rows.filter((r) => r.attempts > 0)).toHaveLength(askedOnce)
    expect(new Set(rows.map((r) => r.nextAttemptAt.getTime()))).toEqual(new Set([queuedAt.getTime() + 10_000]))
    // The panel's view: failing since the first failure, with the error.
    const view = await getClient(ctx, deadClient.client.clientId)
    expect(view.backchannelFailingSince).toBe(queuedAt.getTime())
    expect(view.backchannelLastError).toEqual(expect.any(String))
    expect((await getClient(ctx, healthyClient.client.clientId)).backchannelFailingSince).toBeNull()

    // Past backchannelLogout.maxRetryAge (a day) they are given up, without another try.
    server.clock.advanceSeconds(86_400 + 1)
    await runLogoutDeliveries(ctx)
    expect((await listLogoutDeliveries(ctx)).filter((r) => r.clientId === deadClient.client.clientId)).toHaveLength(0)
    expect(deadRequests).toBe(askedOnce)
  } finally {
    deliveryTimeout.signal = realSignal
    for (const res of hanging) res.destroy()
    dead.closeAllConnections()
    await new Promise<void>((resolve) => dead.close(() => resolve()))
    await healthy.close()
  }
}
