import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AuthContext } from '../../server/core/context.js'
import { Outbox, type OutboxBackoff } from '../../server/core/outbox.js'
import { createClient, getClient } from '../../server/features/oidc-provider/clients.js'
import type { OidcLogoutDeliveryRow } from '../../server/features/oidc-provider/schema.js'
import { listLogoutDeliveries, logoutDeliveryStore, queueLogoutDeliveries } from '../../server/features/oidc-provider/store.js'
import { type Gatehouse, openGatehouse } from '../../server/gatehouse.js'
import { silentLogger, startTestServer, type TestClock, type TestServer, testEngine } from '../helpers/server.js'

/**
 * The outbox engine (server/core/outbox.ts) on the engine of the run (SQLite, and PostgreSQL in
 * the `postgres` project), over a real queue table: back-channel logout's store, with destinations
 * of the test's making (the OIDC provider is off, so nothing else touches the table). The clock
 * and every delivery's time limit are the test's: a limit fires only when the test fires it.
 */

const LEASE_MS = 30_000
const BACKOFF: OutboxBackoff = { firstMs: 10_000, maxMs: 3_600_000 }
const MAX_AGE_MS = 86_400_000
const BATCH = 5

type Behaviour = (row: OidcLogoutDeliveryRow, signal: AbortSignal) => Promise<void>
const answers: Behaviour = async () => {}
/** Never answers, and ignores its signal: only the engine's own time limit ends it. */
const hangs: Behaviour = () => new Promise<void>(() => {})
const refuses: Behaviour = async () => {
  throw new Error('503 Service Unavailable')
}

interface TestEngine {
  outbox: Outbox<OidcLogoutDeliveryRow, string>
  /** Every delivery attempt, in order: [destination, row id]. */
  attempts: Array<[string, string]>
  /** Fires every pending time limit. */
  fireTimeouts(): void
  expired: Array<[string, number]>
}

function engine(ctx: AuthContext, clock: TestClock, behaviour: Map<string, Behaviour>): TestEngine {
  const timers: AbortController[] = []
  const attempts: Array<[string, string]> = []
  const expired: Array<[string, number]> = []
  const outbox = new Outbox<OidcLogoutDeliveryRow, string>(
    {
      store: logoutDeliveryStore(ctx),
      leaseMs: LEASE_MS,
      timeoutMs: 2_500,
      timer: () => {
        const controller = new AbortController()
        timers.push(controller)
        return controller.signal
      },
      batch: BATCH,
      backoff: BACKOFF,
      maxAgeMs: () => MAX_AGE_MS,
      target: async (destination) => destination,
      deliver: (row, destination, signal) => {
        attempts.push([destination, row.id])
        return (behaviour.get(destination) ?? answers)(row, signal)
      },
      expired: (destination, count) => expired.push([destination, count]),
    },
    { clock },
  )
  return {
    outbox,
    attempts,
    expired,
    fireTimeouts: () => {
      for (const timer of timers) if (!timer.signal.aborted) timer.abort(new Error('timed out (test)'))
    },
  }
}

/** Waits for a state (bounded), never a fixed time. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

let server: TestServer
let ctx: AuthContext

beforeEach(async () => {
  server = await startTestServer()
  ctx = server.gatehouse.ctx
})

afterEach(async () => {
  await server?.close()
})

/** A destination: a client (its failing mark is the store's), with `count` rows queued now. */
async function destination(name: string, count: number): Promise<string> {
  const { client } = await createClient(
    ctx,
    {
      name,
      redirectUris: [`http://${name}.example.test/callback`],
      skipConsent: true,
      backchannelLogoutUri: `https://${name}.example.test/bc`,
    },
    { via: 'cli' },
  )
  await queue(client.clientId, name, count)
  return client.clientId
}

async function queue(clientId: string, name: string, count: number): Promise<void> {
  const now = new Date(server.clock.now())
  await queueLogoutDeliveries(
    ctx,
    Array.from({ length: count }, (_, i) => ({
      id: `${name}-${String(i).padStart(3, '0')}`,
      clientId,
      accountId: `user-${i}`,
      sid: `${name}-sid-${i}`,
      attempts: 0,
      nextAttemptAt: now,
      claimedUntil: null,
      sentAt: null,
      lastError: null,
      createdAt: now,
    })),
  )
}

const rowsOf = async (clientId: string) => (await listLogoutDeliveries(ctx)).filter((r) => r.clientId === clientId)

describe(`the outbox engine (${testEngine})`, () => {
  it('a destination that never answers delays no other: the other’s whole queue goes out while the hanging one waits for its time limit', async () => {
    // The dead destination comes first in the order runs take destinations in (their ids').
    const [dead, healthy] = (await Promise.all([destination('a', 0), destination('b', 0)])).sort() as [string, string]
    await queue(dead, 'dead', 40)
    await queue(healthy, 'healthy', 3 * BATCH + 2)
    const behaviour = new Map([[dead, hangs]])
    const e = engine(ctx, server.clock, behaviour)
    const run = e.outbox.run()
    // Every healthy row is sent (four batches of its lane) with no time limit fired: the dead lane
    // is still on its first batch.
    await until('the healthy queue to be sent', async () => (await rowsOf(healthy)).every((r) => r.sentAt !== null))
    const inFlight = await rowsOf(dead)
    expect(inFlight.filter((r) => r.claimedUntil !== null && r.lastError === null)).toHaveLength(BATCH)
    expect(inFlight.every((r) => r.lastError === null && r.sentAt === null)).toBe(true)
    expect(e.attempts.filter(([d]) => d === dead)).toHaveLength(BATCH)
    expect((await rowsOf(healthy)).every((r) => r.attempts === 1 && r.lastError === null)).toBe(true)
    // A second run leaves the dead destination to its lane (no second lane of it in one instance).
    expect(await e.outbox.run()).toBe(0)
    expect(e.attempts.filter(([d]) => d === dead)).toHaveLength(BATCH)

    // One time limit later (the deliver function ignored its signal: the engine cut it off), the
    // dead destination is failing and its whole queue waits for one retry, unattempted.
    e.fireTimeouts()
    expect(await run).toBe(3 * BATCH + 2)
    const rows = await rowsOf(dead)
    expect(rows.filter((r) => r.attempts === 1)).toHaveLength(BATCH)
    expect(rows.every((r) => r.sentAt === null && r.claimedUntil === null && r.lastError === 'timed out (test)')).toBe(true)
    expect(new Set(rows.map((r) => r.nextAttemptAt.getTime()))).toEqual(new Set([server.clock.now() + BACKOFF.firstMs]))
    expect((await getClient(ctx, dead)).backchannelFailingSince).toBe(server.clock.now())
    await e.outbox.stop()
  })

  it('a row queued while its destination’s lane is at work is taken by that lane before it ends, not left for a later run', async () => {
    const dest = await destination('busy', 1)
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const e = engine(ctx, server.clock, new Map([[dest, (row) => (row.id === 'busy-000' ? held : Promise.resolve())]]))
    const run = e.outbox.run()
    await until('the first row in flight', () => e.attempts.length === 1)
    await queue(dest, 'late', 1)
    // The lane of that destination runs here already: this run leaves the row to it.
    expect(await e.outbox.run()).toBe(0)
    release()
    expect(await run).toBe(2)
    expect(e.attempts.map(([, id]) => id)).toEqual(['busy-000', 'late-000'])
    expect((await rowsOf(dest)).every((r) => r.sentAt !== null)).toBe(true)
  })

  it('a lease that lapsed (its instance stopped mid-delivery) is claimed again, by any engine; not a moment before', async () => {
    const dest = await destination('crashed', 3)
    const first = engine(ctx, server.clock, new Map([[dest, hangs]]))
    const firstRun = first.outbox.run()
    await until('the first engine to hold the rows', () => first.attempts.length === 3)
    const second = engine(ctx, server.clock, new Map())
    server.clock.advance(LEASE_MS - 1)
    expect(await second.outbox.run()).toBe(0)
    expect(second.attempts).toHaveLength(0)
    server.clock.advance(1)
    expect(await second.outbox.run()).toBe(3)
    const rows = await rowsOf(dest)
    expect(rows.every((r) => r.sentAt?.getTime() === server.clock.now() && r.attempts === 2 && r.claimedUntil === null)).toBe(true)
    // The first engine stops: its cut-off deliveries are not recorded over the second's.
    await first.outbox.stop()
    expect(await firstRun).toBe(0)
    expect(await rowsOf(dest)).toEqual(rows)
  })

  it('backoff follows how long the destination has been failing (10 s, then as long, at most hourly); past the max age rows are given up untried', async () => {
    const dest = await destination('failing', 2)
    const e = engine(ctx, server.clock, new Map([[dest, refuses]]))
    const start = server.clock.now()
    const nextAttempts = async () => new Set((await rowsOf(dest)).map((r) => r.nextAttemptAt.getTime() - server.clock.now()))
    expect(await e.outbox.run()).toBe(0)
    expect(await nextAttempts()).toEqual(new Set([10_000]))
    expect((await rowsOf(dest)).every((r) => r.attempts === 1 && r.lastError === '503 Service Unavailable')).toBe(true)
    // Not due yet: nothing is tried.
    server.clock.advance(9_999)
    await e.outbox.run()
    expect(e.attempts).toHaveLength(2)
    const delays: number[] = []
    for (const wait of [1, 10_000, 20_000, 40_000]) {
      server.clock.advance(wait)
      await e.outbox.run()
      delays.push([...(await nextAttempts())][0] as number)
    }
    // Failing for 10 s, 20 s, 40 s, 80 s since the first failure.
    expect(delays).toEqual([10_000, 20_000, 40_000, 80_000])
    expect(e.attempts).toHaveLength(2 * 5)
    expect((await getClient(ctx, dest)).backchannelFailingSince).toBe(start)
    // Failing for two hours: the delay stays at the hour.
    server.clock.advance(2 * 3_600_000)
    await e.outbox.run()
    expect(await nextAttempts()).toEqual(new Set([3_600_000]))
    const tried = e.attempts.length
    // Past the max age (a day since they were queued) they are given up, without another try.
    server.clock.advance(MAX_AGE_MS - 2 * 3_600_000 - 70_000)
    expect(await e.outbox.run()).toBe(0)
    expect(await rowsOf(dest)).toHaveLength(0)
    expect(e.attempts).toHaveLength(tried)
    expect(e.expired).toEqual([[dest, 2]])
  })

  it('two engines on one database never claim the same row: each of 150 rows is delivered once', async () => {
    const dests = await Promise.all(['one', 'two', 'three', 'four', 'five'].map((name) => destination(name, 30)))
    // On PostgreSQL the second engine is another instance (its own pool) on the same database.
    const other = testEngine === 'postgres' ? await secondInstance() : undefined
    try {
      const delivered = new Map<string, number>()
      // Each delivery takes a few turns of the event loop, so claims and deliveries interleave.
      const slow: Behaviour = async (row) => {
        delivered.set(row.id, (delivered.get(row.id) ?? 0) + 1)
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r))
      }
      const behaviour = new Map(dests.map((d) => [d, slow]))
      const engines = [engine(ctx, server.clock, behaviour), engine(other?.ctx ?? ctx, server.clock, behaviour)]
      const counts = await Promise.all([0, 1, 2].flatMap(() => engines.map((e) => e.outbox.run())))
      expect(counts.reduce((a, b) => a + b, 0)).toBe(150)
      expect(delivered.size).toBe(150)
      expect([...delivered.values()].every((n) => n === 1)).toBe(true)
      const rows = (await listLogoutDeliveries(ctx)).filter((r) => dests.includes(r.clientId))
      expect(rows.every((r) => r.sentAt !== null && r.attempts === 1)).toBe(true)
      // Both engines took part.
      expect(engines.every((e) => e.attempts.length > 0)).toBe(true)
    } finally {
      await other?.close()
    }
  })

  it.skipIf(testEngine !== 'postgres')(
    'two instances on one PostgreSQL, a claim held open: the other’s claim of the same rows waits for it, then takes none',
    async () => {
      const dest = await destination('held', 0)
      await queue(dest, 'gate', 5)
      const other = await secondInstance()
      const sql = new pg.Client({ connectionString: server.databaseUrl })
      const gate = new pg.Client({ connectionString: server.databaseUrl })
      await sql.connect()
      await gate.connect()
      // A claim of these rows stops in a BEFORE UPDATE trigger until the gate opens, its rows locked
      // inside its open statement.
      await sql.query(`CREATE FUNCTION held_claim() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.sid LIKE 'gate-%' THEN PERFORM pg_advisory_xact_lock_shared(6151); END IF;
          RETURN NEW;
        END $$`)
      await sql.query('CREATE TRIGGER held_claim BEFORE UPDATE ON "oidcLogoutDelivery" FOR EACH ROW EXECUTE FUNCTION held_claim()')
      await gate.query('SELECT pg_advisory_lock(6151)')
      let open = false
      const openGate = async () => {
        if (!open) await gate.query('SELECT pg_advisory_unlock(6151)')
        open = true
      }
      const waiting = async (events: string[]) =>
        (
          await sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = ANY($1) AND query ILIKE 'update "oidcLogoutDelivery"%'`,
            [events],
          )
        ).rows[0]?.n ?? 0
      try {
        const delivered = new Map<string, number>()
        const count: Behaviour = async (row) => {
          delivered.set(row.id, (delivered.get(row.id) ?? 0) + 1)
        }
        const behaviour = new Map([[dest, count]])
        const first = engine(ctx, server.clock, behaviour)
        const second = engine(other.ctx, server.clock, behaviour)
        const firstRun = first.outbox.run()
        await until('the first claim held at the gate', async () => (await waiting(['advisory'])) === 1)
        const secondRun = second.outbox.run()
        await until('the second claim waiting on the first’s rows', async () => (await waiting(['transactionid', 'tuple'])) === 1)
        await openGate()
        expect(await Promise.all([firstRun, secondRun])).toEqual([5, 0])
        expect(second.attempts).toHaveLength(0)
        expect([...delivered.values()]).toEqual([1, 1, 1, 1, 1])
        expect((await rowsOf(dest)).every((r) => r.attempts === 1 && r.sentAt !== null)).toBe(true)
      } finally {
        await openGate()
        await sql.query('DROP TRIGGER IF EXISTS held_claim ON "oidcLogoutDelivery"')
        await sql.query('DROP FUNCTION IF EXISTS held_claim()')
        await gate.end()
        await sql.end()
        await other.close()
      }
    },
  )
})

/** Another instance on the test server's PostgreSQL database (its own pool; nothing started). */
async function secondInstance(): Promise<{ ctx: AuthContext; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-outbox-'))
  const gatehouse: Gatehouse = await openGatehouse({
    engine: { databaseUrl: server.databaseUrl as string },
    dataDir,
    secret: 'test-secret-0123456789-abcdefghijkl',
    clock: server.clock,
    logger: silentLogger,
  })
  return {
    ctx: gatehouse.ctx,
    async close() {
      await gatehouse.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
