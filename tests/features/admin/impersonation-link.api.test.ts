import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createImpersonationLink, setRole, systemActor, userActor } from '../../../server/features/admin/index.js'
import { eq } from 'drizzle-orm'
import { findUserById } from '../../../server/core/users.js'
import { auditEvent } from '../../../server/db/schema.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { HttpClient, signUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

let server: TestServer
let panel: PanelService
beforeAll(async () => {
  server = await startTestServer({
    config: {
      trustedOrigins: ['https://app.example.com'],
      // A role that may impersonate administrators too (the built-in admin role may not).
      admin: { roles: { superadmin: { user: ['impersonate', 'impersonate-admins'] } }, adminRoles: ['admin', 'superadmin'] },
    },
  })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => server.close())

async function linkFor(userId: string): Promise<string> {
  const result = await panel.dispatch('users.impersonationLink', { userId })
  if (!result.ok) throw new Error(JSON.stringify(result.error))
  const { url, expiresAt } = result.data as { url: string; expiresAt: number }
  expect(url).toMatch(new RegExp(`^${server.base}/admin/impersonation-link\\?token=[A-Za-z0-9]{32}$`))
  expect(expiresAt).toBe(server.clock.now() + 60_000)
  return url
}

describe('impersonation link from the control panel', () => {
  it('signs the browser that opens it in as the user, once, with a short impersonation session', async () => {
    const target = await signUp(server.base)
    const url = await linkFor(target.user.id)
    const browser = new HttpClient(server.base, { origin: null })

    const opened = await browser.get(url.slice(server.base.length))
    expect(opened.status).toBe(302)
    expect(opened.headers.get('location')).toBe('https://app.example.com/')
    const cookie = opened.cookies.find((c) => c.startsWith('better-auth.session_token='))
    // A browser-session cookie (no Max-Age), like every impersonation.
    expect(cookie).toMatch(/^better-auth\.session_token=[A-Za-z0-9]{32}\.[^;]+; Path=\/; HttpOnly; SameSite=Lax$/)
    expect(opened.cookies.some((c) => c.startsWith('better-auth.dont_remember=true.'))).toBe(true)

    const session = await browser.get<{ session: { impersonatedBy: string; expiresAt: string }; user: { id: string } }>('/get-session')
    expect(session.body.user.id).toBe(target.user.id)
    expect(session.body.session.impersonatedBy).toBe('gatehouse:panel')
    expect(new Date(session.body.session.expiresAt).getTime()).toBe(server.clock.now() + 3_600_000)
    // The user does not see it among their own sessions.
    const own = await target.client.get<Array<{ impersonatedBy: string | null; token: string }>>('/list-sessions')
    expect(own.status).toBe(200)
    expect(own.body.map((s) => [s.token, s.impersonatedBy])).toEqual([[target.token, null]])

    const replay = await new HttpClient(server.base, { origin: null }).get(url.slice(server.base.length))
    expect(replay.status).toBe(302)
    expect(replay.headers.get('location')).toBe(`${server.base}/error?error=invalid_token`)
    expect(replay.cookies).toEqual([])
  })

  it('expires after a minute and refuses an untrusted callbackURL', async () => {
    const target = await signUp(server.base)
    const url = await linkFor(target.user.id)
    const bad = await new HttpClient(server.base).get(
      `${url.slice(server.base.length)}&callbackURL=${encodeURIComponent('https://evil.example/')}`,
    )
    expect(bad.status).toBe(403)
    expect(bad.body).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })

    server.clock.advanceSeconds(61)
    const late = await new HttpClient(server.base).get(url.slice(server.base.length))
    expect(late.headers.get('location')).toBe(`${server.base}/error?error=invalid_token`)
  })

  it('stop-impersonating ends a panel-link session and signs the browser out', async () => {
    const target = await signUp(server.base)
    const url = await linkFor(target.user.id)
    const browser = new HttpClient(server.base)
    await browser.get(`${url.slice(server.base.length)}&callbackURL=%2Fdone`)
    const stopped = await browser.post('/admin/stop-impersonating')
    expect(stopped.status).toBe(200)
    expect(stopped.body).toEqual({ session: null, user: null })
    expect(stopped.cookies).toContain('better-auth.session_token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax')
    expect((await browser.get('/get-session')).body).toBeNull()
  })

  it('refuses a link to an administrator for an administrator without user:impersonate-admins; the audit log says so', async () => {
    const admin = await signUp(server.base)
    const otherAdmin = await signUp(server.base)
    const plain = await signUp(server.base)
    const superAdmin = await signUp(server.base)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: otherAdmin.user.id, role: 'admin' }, null)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: superAdmin.user.id, role: 'superadmin' }, null)
    const actorOf = async (id: string) => {
      const row = await findUserById(server.gatehouse.ctx, id)
      if (!row) throw new Error('user missing')
      return userActor(row)
    }

    await expect(createImpersonationLink(server.gatehouse.ctx, await actorOf(admin.user.id), otherAdmin.user.id, null)).rejects.toThrow(
      expect.objectContaining({ status: 403, code: 'YOU_CANNOT_IMPERSONATE_ADMINS' }),
    )
    // Nothing was issued: the refusal is the only admin.impersonation-link entry for that target.
    const entries = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.targetUserId, otherAdmin.user.id))
    expect(entries.filter((e) => e.type === 'admin.impersonation-link').map((e) => e.outcome)).toEqual(['failure'])

    // The same administrator may open a link to a regular user, and a role holding impersonate-admins to an administrator.
    const toPlain = await createImpersonationLink(server.gatehouse.ctx, await actorOf(admin.user.id), plain.user.id, null)
    expect(toPlain.token).toMatch(/^[A-Za-z0-9]{32}$/)
    const toAdmin = await createImpersonationLink(server.gatehouse.ctx, await actorOf(superAdmin.user.id), otherAdmin.user.id, null)
    const opened = await new HttpClient(server.base, { origin: null }).get(`/admin/impersonation-link?token=${toAdmin.token}`)
    expect(opened.status).toBe(302)
  })

  it('follows the impersonation permission for user actors', async () => {
    const regular = await signUp(server.base)
    const target = await signUp(server.base)
    const row = await findUserById(server.gatehouse.ctx, regular.user.id)
    if (!row) throw new Error('user missing')
    await expect(createImpersonationLink(server.gatehouse.ctx, userActor(row), target.user.id, null)).rejects.toThrow(
      expect.objectContaining({
        status: 403,
        code: 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS',
        message: 'You are not allowed to impersonate users',
      }),
    )
  })
})
