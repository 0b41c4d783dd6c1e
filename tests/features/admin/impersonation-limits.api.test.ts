import { and, asc, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent } from '../../../server/db/schema.js'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { HttpClient, type SignedUp, signUp } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * An impersonation session acts as the person but leaves no credential behind and does not take
 * the account (issue 47 §4): each such route answers 403 IMPERSONATION_NOT_ALLOWED, and every
 * audit event written meanwhile names the impersonator as actor and the person as subject.
 */

let server: TestServer
let admin: SignedUp
const PASSWORD = 'correct horse battery'
const REFUSED = { code: 'IMPERSONATION_NOT_ALLOWED', message: 'You cannot do this while impersonating a user' }

beforeAll(async () => {
  server = await startTestServer({
    config: {
      twoFactor: { enabled: true },
      passkey: { enabled: true },
      apiKey: { enabled: true },
      emailOTP: { enabled: true, changeEmail: { enabled: true } },
      user: { changeEmail: { enabled: true } },
    },
  })
  admin = await signUp(server.base, { name: 'Admin' })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
  expect((await admin.client.post('/sign-in/email', { email: admin.email, password: PASSWORD })).status).toBe(200)
})
afterAll(() => server?.close())

/** An admin's client switched to an impersonation session of a new person. */
async function impersonating(): Promise<{ person: SignedUp; as: HttpClient }> {
  const person = await signUp(server.base, { name: 'Person' })
  const as = new HttpClient(server.base)
  expect((await as.post('/sign-in/email', { email: admin.email, password: PASSWORD })).status).toBe(200)
  const started = await as.post('/admin/impersonate-user', { userId: person.user.id })
  expect(started.status, started.text).toBe(200)
  const current = await as.get<{ user: { id: string }; session: { impersonatedBy: string } }>('/get-session')
  expect([current.body.user.id, current.body.session.impersonatedBy]).toEqual([person.user.id, admin.user.id])
  return { person, as }
}

describe('an impersonation session', () => {
  it('is refused every route that makes a credential or takes the account, with 403 IMPERSONATION_NOT_ALLOWED', async () => {
    const { person, as } = await impersonating()
    const refused: Array<[string, string, unknown?]> = [
      ['POST', '/app-password/create', { name: 'NAS' }],
      ['POST', '/api-key/create', { name: 'key' }],
      ['GET', '/passkey/generate-register-options'],
      ['POST', '/passkey/verify-registration', { response: { id: 'x', response: {} } }],
      ['POST', '/two-factor/enable', { password: PASSWORD }],
      ['POST', '/two-factor/get-totp-uri', { password: PASSWORD }],
      ['POST', '/two-factor/generate-backup-codes', { password: PASSWORD }],
      ['POST', '/change-password', { currentPassword: PASSWORD, newPassword: 'taken over 123' }],
      ['POST', '/change-email', { newEmail: 'taken@example.com' }],
      ['POST', '/email-otp/request-email-change', { newEmail: 'taken@example.com' }],
      ['POST', '/email-otp/change-email', { newEmail: 'taken@example.com', otp: '123456' }],
    ]
    for (const [method, path, body] of refused) {
      const res = await as.request(method, path, body === undefined ? {} : { body })
      expect([path, res.status, res.body], path).toEqual([path, 403, REFUSED])
    }
    // Nothing was made, nothing changed: the person's own session sees it all as before.
    expect((await person.client.get('/app-password/list')).body).toEqual({ appPasswords: [] })
    expect((await person.client.get('/api-key/list')).body).toEqual({ apiKeys: [], total: 0 })
    expect((await person.client.get<{ user: { email: string; twoFactorEnabled: boolean } }>('/get-session')).body.user).toMatchObject({
      email: person.email,
      twoFactorEnabled: false,
    })
    expect((await new HttpClient(server.base).post('/sign-in/email', { email: person.email, password: PASSWORD })).status).toBe(200)

    // The same routes still serve the person themself.
    const own = await person.client.post('/app-password/create', { name: 'NAS' })
    expect(own.status, own.text).toBe(200)
  })

  it('is audited with the impersonator as actor and the person as subject', async () => {
    const { person, as } = await impersonating()
    // An action the impersonation may take, which the audit records (revoking the person's other sessions).
    const revoked = await as.post('/revoke-other-sessions', {})
    expect(revoked.status, revoked.text).toBe(200)
    const refused = await as.post('/app-password/create', { name: 'NAS' })
    expect(refused.status).toBe(403)
    const stopped = await as.post('/admin/stop-impersonating', {})
    expect(stopped.status, stopped.text).toBe(200)

    const events = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.targetUserId, person.user.id)))
      .orderBy(asc(auditEvent.id))
    const during = events.filter((e) => e.type === 'session.revoked-others')
    expect(during.map((e) => [e.actorUserId, e.targetUserId, e.detail])).toEqual([
      [admin.user.id, person.user.id, expect.objectContaining({ impersonatedBy: admin.user.id, impersonatedUserId: person.user.id })],
    ])
    // No event of the impersonation names the person as the one who acted.
    const since = events.findIndex((e) => e.type === 'admin.impersonate-user')
    expect(events.slice(since).filter((e) => e.actorUserId === person.user.id)).toEqual([])
    expect(events.slice(since).map((e) => e.type)).toEqual(['admin.impersonate-user', 'session.revoked-others', 'admin.stop-impersonating'])
  })
})
