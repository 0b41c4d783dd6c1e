/**
 * Issue 27's single-use rule across instances: an approved device code (RFC 8628) is exchanged
 * for a session token exactly once when the device polls both instances on one PostgreSQL at once;
 * the code is asked for on one instance, opened and approved on the other.
 * Needs `npm run build:server` (dist/server/main.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { type Instance, signUpOn, startInstance } from '../helpers/instances.js'

const noPostgres = postgresUnavailable()
warnSkipped('device authorization on two instances (tests/multi)', noPostgres)

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

describe.skipIf(noPostgres)('device codes on two instances of one PostgreSQL', () => {
  let postgres: PostgresServer
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    postgres = await startPostgres()
    const databaseUrl = await postgres.createDatabase('device')
    const config = { rateLimit: { enabled: false }, deviceAuthorization: { enabled: true, interval: 1 } }
    a = await startInstance('a', { databaseUrl, config })
    b = await startInstance('b', { databaseUrl, config })
  }, 120_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await postgres?.stop()
  })

  it('approved on b, polled on a and b at once, several times each: one token, one device session', async () => {
    for (let round = 0; round < 5; round++) {
      const person = await signUpOn(a)
      const code = await a.client().post<{ device_code: string; user_code: string }>('/device/code', { client_id: 'cli' })
      expect(code.status).toBe(200)
      const { device_code, user_code } = code.body
      expect((await b.client(person.cookie).get(`/device?user_code=${user_code}`)).status).toBe(200)
      expect((await b.client(person.cookie).post('/device/approve', { userCode: user_code })).status).toBe(200)

      const answers = await Promise.all(
        [a, b, a, b, a, b].map((on) =>
          on.client().post<Record<string, unknown>>('/device/token', { grant_type: GRANT, device_code, client_id: 'cli' }),
        ),
      )
      const granted = answers.filter((r) => r.status === 200)
      expect(granted).toHaveLength(1)
      for (const refused of answers.filter((r) => r.status !== 200)) {
        expect(refused.status).toBe(400)
        expect(['slow_down', 'invalid_grant']).toContain(refused.body.error)
      }
      // The token is a session on both instances, and the person now has exactly two sessions.
      const token = granted[0]?.body.access_token as string
      for (const on of [a, b]) {
        const me = await on.client(undefined, { authorization: `Bearer ${token}` }).get<{ user: { id: string } }>('/get-session')
        expect(me.body.user.id).toBe(person.id)
      }
      const sessions = await a.client(person.cookie).get<unknown[]>('/list-sessions')
      expect(sessions.body).toHaveLength(2)

      // The spent code is gone on either instance (deleted: no slow_down to wait out).
      const reuse = await b.client().post('/device/token', { grant_type: GRANT, device_code, client_id: 'cli' })
      expect([reuse.status, reuse.body]).toEqual([400, { error: 'invalid_grant', error_description: 'Invalid device code' }])
    }
  })
})
