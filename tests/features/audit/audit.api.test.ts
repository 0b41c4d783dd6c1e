import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent } from '../../../server/db/schema.js'
import { HttpClient, signUp } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const eventsFor = (userId: string) =>
  server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.targetUserId, userId)).orderBy(auditEvent.id)

describe('audit log', () => {
  it('records sign-up, failed and successful sign-ins, revocations and sign-out with who, from where and when', async () => {
    const { client, user, email, password } = await signUp(server.base)
    const other = new HttpClient(server.base, { headers: { 'user-agent': 'audit-test/1.0', 'x-forwarded-for': '203.0.113.44' } })
    await other.post('/sign-in/email', { email, password: 'wrong password!' })
    await other.post('/sign-in/email', { email, password })
    await client.post('/revoke-other-sessions')
    await client.post('/sign-out')

    const events = await eventsFor(user.id)
    expect(events.map((e) => [e.type, e.outcome])).toEqual([
      ['user.sign-up', 'success'],
      // autoSignIn: the sign-up's session is a sign-in, through the same pipeline.
      ['user.sign-in', 'success'],
      ['user.sign-in', 'failure'],
      ['user.sign-in', 'success'],
      ['session.revoked-others', 'success'],
      ['user.sign-out', 'success'],
    ])
    expect(events[1]?.detail).toEqual({ method: 'email', via: 'sign-up' })
    const failed = events[2]
    expect(failed).toMatchObject({ actorUserId: null, targetUserId: user.id, ipAddress: '203.0.113.44', userAgent: 'audit-test/1.0' })
    expect(failed?.detail).toMatchObject({ method: 'email', reason: 'INVALID_PASSWORD' })
    expect(events[3]).toMatchObject({ actorUserId: user.id, ipAddress: '203.0.113.44', detail: { method: 'email' } })
  })

  it('records failures for unknown identities without a target', async () => {
    const email = `nobody-${Date.now()}@example.com`
    await new HttpClient(server.base).post('/sign-in/email', { email, password: 'whatever123' })
    // The detail column is JSON (text on SQLite, jsonb on PostgreSQL): matched here rather than with LIKE.
    const signIns = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.type, 'user.sign-in'))
    const rows = signIns.filter((e) => e.detail?.email === email)
    expect(rows).toHaveLength(1)
    const row = rows[0]
    expect(row?.outcome).toBe('failure')
    expect(row?.targetUserId).toBeNull()
    expect(row?.detail).toEqual({ method: 'email', reason: 'UNKNOWN_USER', email })
  })
})
