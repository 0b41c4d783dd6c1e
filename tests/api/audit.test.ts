import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../helpers/http.js'
import { startTestServer, type TestServer, sqliteOf } from '../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

interface AuditRow {
  type: string
  outcome: string
  actorUserId: string | null
  targetUserId: string | null
  ipAddress: string | null
  userAgent: string | null
  detail: string | null
}

const eventsFor = (userId: string) =>
  sqliteOf(server.gatehouse.database)
    .prepare(
      'select type, outcome, actorUserId, targetUserId, ipAddress, userAgent, detail from auditEvent where targetUserId = ? order by id',
    )
    .all(userId) as AuditRow[]

describe('audit log', () => {
  it('records sign-up, failed and successful sign-ins, revocations and sign-out with who, from where and when', async () => {
    const { client, user, email, password } = await signUp(server.base)
    const other = new HttpClient(server.base, { headers: { 'user-agent': 'audit-test/1.0', 'x-forwarded-for': '203.0.113.44' } })
    await other.post('/sign-in/email', { email, password: 'wrong password!' })
    await other.post('/sign-in/email', { email, password })
    await client.post('/revoke-other-sessions')
    await client.post('/sign-out')

    const events = eventsFor(user.id)
    expect(events.map((e) => [e.type, e.outcome])).toEqual([
      ['user.sign-up', 'success'],
      ['user.sign-in', 'failure'],
      ['user.sign-in', 'success'],
      ['session.revoked-others', 'success'],
      ['user.sign-out', 'success'],
    ])
    const failed = events[1] as AuditRow
    expect(failed).toMatchObject({ actorUserId: null, targetUserId: user.id, ipAddress: '203.0.113.44', userAgent: 'audit-test/1.0' })
    expect(JSON.parse(failed.detail ?? '{}')).toMatchObject({ reason: 'INVALID_PASSWORD' })
    expect(events[2]).toMatchObject({ actorUserId: user.id, ipAddress: '203.0.113.44' })
  })

  it('records failures for unknown identities without a target', async () => {
    const email = `nobody-${Date.now()}@example.com`
    await new HttpClient(server.base).post('/sign-in/email', { email, password: 'whatever123' })
    const row = sqliteOf(server.gatehouse.database)
      .prepare("select outcome, targetUserId, detail from auditEvent where type = 'user.sign-in' and detail like ?")
      .get(`%${email}%`) as AuditRow
    expect(row.outcome).toBe('failure')
    expect(row.targetUserId).toBeNull()
    expect(JSON.parse(row.detail ?? '{}')).toEqual({ reason: 'UNKNOWN_USER', email })
  })
})
