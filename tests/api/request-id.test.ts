import { desc, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent } from '../../server/db/schema.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const GENERATED = /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/

describe('X-Request-Id', () => {
  it('is on every answer (direct, routed, 404, refused), new for each request', async () => {
    const client = new HttpClient(server.base)
    const answers = [
      await client.get('/get-session'),
      await client.get('/get-session?disableRefresh=true'),
      await client.get('/ok'),
      await client.get('/no-such-path'),
      await client.post('/sign-in/email', { email: 'nobody@example.com', password: 'wrong-password' }),
    ]
    const ids = answers.map((a) => a.headers.get('x-request-id'))
    for (const id of ids) expect(id).toMatch(GENERATED)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('takes a well-formed id from a trusted proxy (loopback by default), and replaces it otherwise', async () => {
    const forwarded = (id: string) => new HttpClient(server.base, { headers: { 'x-request-id': id } })
    expect((await forwarded('lb-7f3a9c.42').get('/get-session')).headers.get('x-request-id')).toBe('lb-7f3a9c.42')
    expect((await forwarded('lb-7f3a9c.43').get('/ok')).headers.get('x-request-id')).toBe('lb-7f3a9c.43')
    // Not a charset or length a log line should carry: replaced.
    for (const bad of ['has space', 'x'.repeat(129), 'quote"d', 'new\u00e9line'])
      expect((await forwarded(bad).get('/ok')).headers.get('x-request-id')).toMatch(GENERATED)
    // The peer (127.0.0.1) is no longer a trusted proxy: its id is replaced.
    await server.gatehouse.config.update({ advanced: { ipAddress: { trustedProxies: ['10.9.9.9'] } } })
    try {
      expect((await forwarded('lb-7f3a9c.44').get('/get-session')).headers.get('x-request-id')).toMatch(GENERATED)
      expect((await forwarded('lb-7f3a9c.45').get('/ok')).headers.get('x-request-id')).toMatch(GENERATED)
    } finally {
      await server.gatehouse.config.update({ advanced: { ipAddress: { trustedProxies: ['127.0.0.1', '::1'] } } })
    }
  })

  it("is recorded on that request's audit events", async () => {
    const email = uniqueEmail('rid')
    const client = new HttpClient(server.base)
    const up = await client.post<{ user: { id: string } }>('/sign-up/email', { name: 'Rid', email, password: 'password123' })
    expect(up.status).toBe(200)
    const signUpId = up.headers.get('x-request-id')
    const failed = await new HttpClient(server.base, { headers: { 'x-request-id': 'proxy-req-1' } }).post('/sign-in/email', {
      email,
      password: 'wrong-password',
    })
    expect(failed.status).toBe(401)
    const events = await server.gatehouse.ctx.db
      .select({ type: auditEvent.type, outcome: auditEvent.outcome, requestId: auditEvent.requestId })
      .from(auditEvent)
      .where(eq(auditEvent.targetUserId, up.body.user.id))
      .orderBy(desc(auditEvent.id))
    expect(events).toContainEqual({ type: 'user.sign-up', outcome: 'success', requestId: signUpId })
    expect(events).toContainEqual({ type: 'user.sign-in', outcome: 'failure', requestId: 'proxy-req-1' })
  })
})
