import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiURLOf } from '../../server/panel/index.js'
import { createPanelService, type PanelService } from '../../server/panel/service.js'
import { HttpClient, rawRequest, signUp } from '../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js'

/** The panel operations behind the overview checklist, people in audit rows and the provider test (no browser). */

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer({ config: { forwardAuth: { enabled: true, rules: [{ domain: '*.apps.lan', policy: 'bypass' }] } } })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: apiURLOf(server.gatehouse),
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => server?.close())

async function op(name: string, input: unknown = {}) {
  return panel.dispatch(name, input)
}
async function data<T = Record<string, unknown>>(name: string, input: unknown = {}): Promise<T> {
  const result = await op(name, input)
  if (!result.ok) throw new Error(`${name}: ${result.error.code}`)
  return result.data as T
}

type Step = { id: string; done: boolean; value: string | null }

describe('panel operations for the product views', () => {
  it('the first administrator step ticks for adminUserIds as well as for an admin role', async () => {
    const steps = async () => (await data<{ setup: Step[] }>('overview.get', { range: 'hours' })).setup
    expect((await steps()).find((s) => s.id === 'admin')).toEqual({ id: 'admin', done: false, value: null })
    const someone = await signUp(server.base)
    server.gatehouse.config.update({ admin: { adminUserIds: [someone.user.id] } })
    expect((await steps()).find((s) => s.id === 'admin')).toEqual({ id: 'admin', done: true, value: someone.email })
    server.gatehouse.config.update({ admin: { adminUserIds: null } } as never)
    expect((await steps()).find((s) => s.id === 'admin')?.done).toBe(false)
    // A custom role listed as an administrator role counts too.
    server.gatehouse.config.update({ admin: { adminRoles: ['admin', 'ops'], roles: { ops: { user: ['list'] } } } })
    await data('users.setRole', { userId: someone.user.id, role: 'ops' })
    expect((await steps()).find((s) => s.id === 'admin')).toMatchObject({ done: true, value: someone.email })
  })

  it('audit rows name their people; a deleted user is simply absent', async () => {
    const gone = await signUp(server.base, { name: 'Soon Gone' })
    const kept = await signUp(server.base, { name: 'Still Here' })
    await data('users.remove', { userId: gone.user.id })
    const list = await data<{ events: Array<{ targetUserId: string | null }>; people: Record<string, unknown> }>('audit.list', {
      limit: 500,
    })
    expect(list.people[kept.user.id]).toEqual({ id: kept.user.id, name: 'Still Here', email: kept.email })
    expect(list.people[gone.user.id]).toBeUndefined()
    expect(list.events.some((e) => e.targetUserId === gone.user.id)).toBe(true)
    const detail = await data<{ people: Record<string, unknown> }>('users.get', { userId: kept.user.id })
    expect(detail.people[kept.user.id]).toMatchObject({ email: kept.email })
  })

  it('user operations name the field an error concerns (the form shows it there), and keep the wire code and message', async () => {
    const taken = await signUp(server.base)
    const create = (input: Record<string, unknown>) =>
      op('users.create', { name: 'Second', email: taken.email, password: 'a long enough password', ...input })
    expect(await create({})).toEqual({
      ok: false,
      error: { code: 'USER_ALREADY_EXISTS', message: 'User already exists', status: 400, field: 'email' },
    })
    expect(await create({ email: 'not an email' })).toEqual({
      ok: false,
      error: { code: 'INVALID_EMAIL', message: 'Invalid email', status: 400, field: 'email' },
    })
    expect(await create({ email: 'fresh-field@example.com', password: 'short' })).toEqual({
      ok: false,
      error: { code: 'PASSWORD_TOO_SHORT', message: 'Password too short', status: 400, field: 'password' },
    })
    expect(await create({ email: 'fresh-field@example.com', role: 'admin, nobody' })).toEqual({
      ok: false,
      error: {
        code: 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE',
        message: 'You are not allowed to set a non-existent role value',
        status: 400,
        field: 'role',
      },
    })
    expect(await op('users.setRole', { userId: taken.user.id, role: 'nobody' })).toMatchObject({ ok: false, error: { field: 'role' } })
    expect(await op('users.setPassword', { userId: taken.user.id, newPassword: 'short' })).toMatchObject({
      ok: false,
      error: { code: 'PASSWORD_TOO_SHORT', field: 'newPassword' },
    })
    // Nothing was created by the refused calls; a valid one with several roles stores them joined.
    const created = await data<{ user: { email: string; role: string } }>('users.create', {
      name: 'Fresh',
      email: 'fresh-field@example.com',
      password: 'a long enough password',
      role: ' admin , user ,',
    })
    expect(created.user).toMatchObject({ email: 'fresh-field@example.com', role: 'admin,user' })
  })

  it('a test sign-in needs a client id, and its state signs nobody in', async () => {
    const missing = await op('providers.testSignIn', { id: 'gitlab' })
    expect(missing).toEqual({
      ok: false,
      error: { code: 'PROVIDER_NOT_CONFIGURED', message: 'Set a client id for GitLab first', status: 400 },
    })
    expect(await op('providers.testSignIn', { id: 'nope' })).toMatchObject({
      ok: false,
      error: { code: 'PROVIDER_NOT_FOUND', status: 404 },
    })

    // Configured but off: it can be tried, and it stays off for real sign-ins.
    await data('providers.update', {
      id: 'gitlab',
      enabled: false,
      clientId: 'gl-client',
      clientSecret: 'gl-secret',
      scopes: [],
      trustedForLinking: false,
      overrides: {},
    })
    expect((await data<Array<{ id: string; status: string }>>('providers.list')).find((p) => p.id === 'gitlab')?.status).toBe('configured')
    const started = await data<{ url: string; testId: string }>('providers.testSignIn', { id: 'gitlab' })
    const url = new URL(started.url)
    expect(url.searchParams.get('state')).toBe(started.testId)
    expect(url.searchParams.get('redirect_uri')).toBe(`${server.base}/callback/gitlab`)
    expect(await data('providers.testResult', { testId: started.testId })).toEqual({ status: 'pending', code: null, profile: null })
    expect((await new HttpClient(server.base).post('/sign-in/social', { provider: 'gitlab', callbackURL: '/' })).status).toBe(404)

    // The provider refuses: the error code is the result; no cookie, no session.
    const back = await fetch(`${server.base}/callback/gitlab?state=${started.testId}&error=access_denied`, { redirect: 'manual' })
    expect(back.status).toBe(302)
    expect(back.headers.get('location')).toBe(`${server.base}/error?error=access_denied`)
    expect(back.headers.get('set-cookie')).toBeNull()
    expect(await data('providers.testResult', { testId: started.testId })).toEqual({
      status: 'failure',
      code: 'access_denied',
      profile: null,
    })
    // Single use.
    const replay = await fetch(`${server.base}/callback/gitlab?state=${started.testId}&code=x`, { redirect: 'manual' })
    expect(replay.headers.get('location')).toBe(`${server.base}/error?error=state_mismatch`)
  })
})

describe('forward auth on the overview', () => {
  it('shows allowed requests per protected app over the last 24 hours, busiest first', async () => {
    const ask = (host: string) =>
      rawRequest(`${server.base}/forward-auth/auth-request`, { headers: { 'x-original-url': `https://${host}/x` } })
    for (let i = 0; i < 3; i++) expect((await ask('wiki.apps.lan')).status).toBe(200)
    expect((await ask('grafana.apps.lan')).status).toBe(200)
    const { protectedApps } = await data<{ protectedApps: { app: string; allowed: number }[] }>('overview.get', { range: 'hours' })
    expect(protectedApps).toEqual([
      { app: 'wiki.apps.lan', allowed: 3 },
      { app: 'grafana.apps.lan', allowed: 1 },
    ])
    // A day later they have left the window.
    server.clock.advanceSeconds(25 * 3600)
    expect((await data<{ protectedApps: unknown[] }>('overview.get', { range: 'hours' })).protectedApps).toEqual([])
  })
})
