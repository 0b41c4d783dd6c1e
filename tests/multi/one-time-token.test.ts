/**
 * Issue 27's single-use rule across instances: a one-time token generated on one `gatehouse serve`
 * is accepted exactly once when both instances on one PostgreSQL are asked for it at once.
 * Needs `npm run build:server` (dist/server/main.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { type Instance, signUpOn, startInstance } from '../helpers/instances.js'

const noPostgres = postgresUnavailable()
warnSkipped('one-time tokens on two instances (tests/multi)', noPostgres)

describe.skipIf(noPostgres)('one-time tokens on two instances of one PostgreSQL', () => {
  let postgres: PostgresServer
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    postgres = await startPostgres()
    const databaseUrl = await postgres.createDatabase('ott')
    const config = { rateLimit: { enabled: false }, oneTimeToken: { enabled: true } }
    a = await startInstance('a', { databaseUrl, config })
    b = await startInstance('b', { databaseUrl, config })
  }, 120_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await postgres?.stop()
  })

  it('made on a, asked of a and b at once, several times each: accepted once', async () => {
    for (let round = 0; round < 5; round++) {
      const user = await signUpOn(a)
      const generated = await a.client(user.cookie).get<{ token: string }>('/one-time-token/generate')
      expect(generated.status).toBe(200)
      const answers = await Promise.all(
        [a, b, a, b, a, b].map((on) => on.client().post('/one-time-token/verify', { token: generated.body.token })),
      )
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1)
      for (const refused of answers.filter((r) => r.status !== 200))
        expect([refused.status, refused.body]).toEqual([400, { message: 'Invalid token' }])
    }
  })
})
