import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgres, type PostgresDatabase } from '../../server/db/pg/storage.js'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'

/**
 * Issue 14: a scheduled job runs on one instance at a time. Two pools on one database stand for
 * two instances; `storage.exclusive(job, body)` holds a transaction-scoped advisory lock.
 */
const unavailable = postgresUnavailable()
warnSkipped('tests/multi/exclusive.test.ts (scheduled jobs on several instances)', unavailable)

let server: PostgresServer
let one: PostgresDatabase
let two: PostgresDatabase

describe.skipIf(unavailable)('storage.exclusive across instances', () => {
  beforeAll(async () => {
    server = await startPostgres()
    const url = await server.createDatabase()
    one = await openPostgres(url)
    two = await openPostgres(url)
  }, 60_000)
  afterAll(async () => {
    await one?.close()
    await two?.close()
    await server?.stop()
  })

  it('while one instance runs a job the other is refused it, and gets it once the first is done', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => {
      release = r
    })
    let started!: () => void
    const running = new Promise<void>((r) => {
      started = r
    })
    const first = one.storage.exclusive('cleanup', async () => {
      started()
      await gate
    })
    await running
    let ranOnTwo = false
    expect(
      await two.storage.exclusive('cleanup', async () => {
        ranOnTwo = true
      }),
    ).toBe(false)
    expect(ranOnTwo).toBe(false)
    // Another job name is not blocked.
    expect(await two.storage.exclusive('other-job', async () => {})).toBe(true)
    release()
    expect(await first).toBe(true)
    expect(
      await two.storage.exclusive('cleanup', async () => {
        ranOnTwo = true
      }),
    ).toBe(true)
    expect(ranOnTwo).toBe(true)
  })

  it('20 parallel attempts on two instances: the body never runs twice at once', async () => {
    let active = 0
    let most = 0
    let runs = 0
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? one : two).storage.exclusive('race', async () => {
          active++
          most = Math.max(most, active)
          runs++
          await new Promise((r) => setTimeout(r, 20))
          active--
        }),
      ),
    )
    expect(most).toBe(1)
    expect(runs).toBe(outcomes.filter(Boolean).length)
    expect(runs).toBeGreaterThanOrEqual(1)
  })
})
