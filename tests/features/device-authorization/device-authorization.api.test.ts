import { deviceAuthorizationClient } from 'better-auth/client/plugins'
import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, deviceCode, session } from '../../../server/db/schema.js'
import { createPanelService } from '../../../server/panel/service.js'
import { CookieJar, HttpClient, signUp } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 27, device authorization (RFC 8628, better-auth's deviceAuthorization plugin): a device
 * asks for a code, a signed-in person opens and approves it, the device's poll gets a session
 * token it uses as a Bearer token, once. The clock is the test's: expiry and slow_down without
 * sleeping.
 */

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ config: { deviceAuthorization: { enabled: true } } })
})
afterAll(async () => {
  await server.close()
})

function officialClient(jar = new CookieJar()) {
  return official(server, { jar, plugins: [deviceAuthorizationClient()] }).client
}

/** A device: no cookies, no Origin (a CLI). */
const device = () => new HttpClient(server.base, { origin: null })

interface Codes {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

async function newCodes(clientId = 'cli', extra: Record<string, unknown> = {}): Promise<Codes> {
  const res = await device().post<Codes>('/device/code', { client_id: clientId, ...extra })
  expect(res.status).toBe(200)
  return res.body
}

const poll = (codes: { device_code: string }, clientId = 'cli') =>
  device().post<Record<string, unknown>>('/device/token', { grant_type: GRANT, device_code: codes.device_code, client_id: clientId })

/** A signed-in person who opened the code (GET /device) and approved it. */
async function approvedBy(codes: Codes) {
  const person = await signUp(server.base)
  expect((await person.client.get(`/device?user_code=${codes.user_code}`)).status).toBe(200)
  expect((await person.client.post('/device/approve', { userCode: codes.user_code })).body).toEqual({ success: true })
  return person
}

describe('device authorization through the official deviceAuthorizationClient', () => {
  it('code → open → approve → token → Bearer get-session', async () => {
    const deviceClient = officialClient()
    const code = await deviceClient.device.code({ client_id: 'tv-app', scope: 'openid profile' })
    expect(code.error).toBeNull()
    const codes = code.data as Codes
    expect(codes.device_code).toMatch(/^[A-Za-z0-9]{40}$/)
    expect(codes.user_code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/)
    expect(codes.verification_uri).toBe(`${server.base}/ui/device`)
    expect(codes.verification_uri_complete).toBe(`${server.base}/ui/device?user_code=${codes.user_code}`)
    expect([codes.expires_in, codes.interval]).toEqual([1800, 5])

    const pending = await deviceClient.device.token({ grant_type: GRANT, device_code: codes.device_code, client_id: 'tv-app' })
    expect(pending.error).toMatchObject({ status: 400, error: 'authorization_pending', error_description: 'Authorization pending' })

    const person = await signUp(server.base)
    const personJar = new CookieJar()
    for (const [k, v] of person.client.jar.cookies) personJar.cookies.set(k, v)
    const browser = officialClient(personJar)
    // Typed with separators and in lower case, as people do.
    const typed = `${codes.user_code.slice(0, 4).toLowerCase()}-${codes.user_code.slice(4)}`
    const opened = await browser.device({ query: { user_code: typed } })
    expect(opened.data).toEqual({ user_code: typed, status: 'pending', client_id: 'tv-app', scope: 'openid profile' })
    const approved = await browser.device.approve({ userCode: codes.user_code })
    expect(approved.data).toEqual({ success: true })
    expect((await browser.device({ query: { user_code: codes.user_code } })).data).toMatchObject({ status: 'approved' })

    server.clock.advanceSeconds(5)
    const token = await deviceClient.device.token({ grant_type: GRANT, device_code: codes.device_code, client_id: 'tv-app' })
    expect(token.error).toBeNull()
    expect(token.data).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      token_type: 'Bearer',
      expires_in: 7 * 24 * 3600,
      scope: 'openid profile',
    })
    const bearer = new HttpClient(server.base, { headers: { authorization: `Bearer ${token.data?.access_token}` } })
    const me = await bearer.get<{ user: { id: string }; session: { userId: string } }>('/get-session')
    expect(me.body.user.id).toBe(person.user.id)
    // A new session of its own, recorded by the sign-in pipeline with the method's name.
    expect(me.body.session).not.toMatchObject({ token: person.token })
    const events = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.actorUserId, person.user.id), eq(auditEvent.type, 'user.sign-in')))
    expect(events.map((e) => e.detail)).toContainEqual({ method: 'device-authorization', clientId: 'tv-app', scope: 'openid profile' })
    const approvals = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.actorUserId, person.user.id), eq(auditEvent.type, 'device.approved')))
    expect(approvals).toHaveLength(1)
  })

  it('the official client reads a refusal: deny → access_denied', async () => {
    const codes = await newCodes()
    const person = await signUp(server.base)
    await person.client.get(`/device?user_code=${codes.user_code}`)
    const jar = new CookieJar()
    for (const [k, v] of person.client.jar.cookies) jar.cookies.set(k, v)
    expect((await officialClient(jar).device.deny({ userCode: codes.user_code })).data).toEqual({ success: true })
    const answer = await officialClient().device.token({ grant_type: GRANT, device_code: codes.device_code, client_id: 'cli' })
    expect(answer.error).toMatchObject({ status: 400, error: 'access_denied', error_description: 'Access denied' })
  })
})

describe('the polling state machine (raw HTTP)', () => {
  it('answers with no-store and accepts a form-encoded request', async () => {
    const res = await device().request<Codes>('POST', '/device/code', {
      raw: 'client_id=form-client&scope=read',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('pragma')).toBe('no-cache')
    const first = await poll(res.body, 'form-client')
    expect(first.headers.get('cache-control')).toBe('no-store')
  })

  it('slow_down when polled within the interval; the interval counts from the last accepted poll', async () => {
    const codes = await newCodes()
    expect((await poll(codes)).body).toEqual({ error: 'authorization_pending', error_description: 'Authorization pending' })
    server.clock.advanceSeconds(4)
    const fast = await poll(codes)
    expect([fast.status, fast.body]).toEqual([400, { error: 'slow_down', error_description: 'Polling too frequently' }])
    server.clock.advanceSeconds(1)
    expect((await poll(codes)).body).toMatchObject({ error: 'authorization_pending' })
    // Two polls at once: one is recorded, the other is too fast.
    server.clock.advanceSeconds(5)
    const both = await Promise.all([poll(codes), poll(codes)])
    expect(both.map((a) => a.body.error).sort()).toEqual(['authorization_pending', 'slow_down'])
  })

  it('access_denied once, then the code is gone (invalid_grant)', async () => {
    const codes = await newCodes()
    const person = await signUp(server.base)
    await person.client.get(`/device?user_code=${codes.user_code}`)
    expect((await person.client.post('/device/deny', { userCode: codes.user_code })).status).toBe(200)
    const denied = await poll(codes)
    expect([denied.status, denied.body]).toEqual([400, { error: 'access_denied', error_description: 'Access denied' }])
    server.clock.advanceSeconds(5)
    expect((await poll(codes)).body).toEqual({ error: 'invalid_grant', error_description: 'Invalid device code' })
    // A denied request cannot be approved afterwards.
    const late = await person.client.post('/device/approve', { userCode: codes.user_code })
    expect([late.status, late.body]).toEqual([400, { error: 'invalid_request', error_description: 'Invalid user code' }])
  })

  it('expired_token after expiresIn, for the device and for the person', async () => {
    const codes = await newCodes()
    const person = await signUp(server.base)
    await person.client.get(`/device?user_code=${codes.user_code}`)
    server.clock.advanceSeconds(1801)
    const opened = await person.client.get(`/device?user_code=${codes.user_code}`)
    expect([opened.status, opened.body]).toEqual([400, { error: 'expired_token', error_description: 'User code has expired' }])
    const approve = await person.client.post('/device/approve', { userCode: codes.user_code })
    expect([approve.status, approve.body]).toEqual([400, { error: 'expired_token', error_description: 'User code has expired' }])
    const polled = await poll(codes)
    expect([polled.status, polled.body]).toEqual([400, { error: 'expired_token', error_description: 'Device code has expired' }])
    // Expired codes are removed when polled.
    const rows = await server.gatehouse.ctx.db.select().from(deviceCode).where(eq(deviceCode.deviceCode, codes.device_code))
    expect(rows).toHaveLength(0)
  })

  it('a request nobody polls is removed one lifetime after it expired, by the next /device/code', async () => {
    const abandoned = await newCodes()
    const rowsOf = (code: string) => server.gatehouse.ctx.db.select().from(deviceCode).where(eq(deviceCode.deviceCode, code))
    server.clock.advanceSeconds(1801)
    await newCodes()
    expect(await rowsOf(abandoned.device_code)).toHaveLength(1)
    expect((await poll(abandoned)).body).toMatchObject({ error: 'expired_token' })
    const later = await newCodes()
    server.clock.advanceSeconds(2 * 1800 + 1)
    await newCodes()
    expect(await rowsOf(later.device_code)).toHaveLength(0)
  })

  it('a device code is exchanged once: the reuse is invalid_grant and leaves one session', async () => {
    const codes = await newCodes()
    const person = await approvedBy(codes)
    const first = await poll(codes)
    expect(first.status).toBe(200)
    server.clock.advanceSeconds(5)
    const again = await poll(codes)
    expect([again.status, again.body]).toEqual([400, { error: 'invalid_grant', error_description: 'Invalid device code' }])
    const sessions = await server.gatehouse.ctx.db.select().from(session).where(eq(session.userId, person.user.id))
    // The person's own session and the device's.
    expect(sessions).toHaveLength(2)
  })

  it('refuses another client, an unknown device code and a wrong grant type', async () => {
    const codes = await newCodes('cli')
    const other = await poll(codes, 'someone-else')
    expect([other.status, other.body]).toEqual([400, { error: 'invalid_grant', error_description: 'Client ID mismatch' }])
    const unknown = await poll({ device_code: 'x'.repeat(40) })
    expect([unknown.status, unknown.body]).toEqual([400, { error: 'invalid_grant', error_description: 'Invalid device code' }])
    const grant = await device().post('/device/token', { grant_type: 'password', device_code: codes.device_code, client_id: 'cli' })
    expect(grant.status).toBe(400)
    expect(grant.body).toMatchObject({ code: 'VALIDATION_ERROR' })
  })

  it('/device/code refuses a missing or empty client_id in RFC 8628 words', async () => {
    const missing = await device().post('/device/code', {})
    expect([missing.status, missing.body]).toEqual([
      400,
      { error: 'invalid_request', error_description: '[body.client_id] Invalid input: expected string, received undefined' },
    ])
    const empty = await device().post('/device/code', { client_id: '' })
    expect([empty.status, empty.body]).toEqual([400, { error: 'invalid_request', error_description: 'client_id is required' }])
  })
})

describe('opening, approving and denying', () => {
  it('a wrong user code: invalid_request for GET /device, approve and deny', async () => {
    const person = await signUp(server.base)
    const opened = await person.client.get('/device?user_code=NOPE2345')
    expect([opened.status, opened.body]).toEqual([400, { error: 'invalid_request', error_description: 'Invalid user code' }])
    for (const path of ['/device/approve', '/device/deny']) {
      const res = await person.client.post(path, { userCode: 'NOPE2345' })
      expect([res.status, res.body]).toEqual([400, { error: 'invalid_request', error_description: 'Invalid user code' }])
    }
  })

  it('signed out: the status only; approve and deny need a session', async () => {
    const codes = await newCodes('kiosk', { scope: 'read' })
    const anon = new HttpClient(server.base)
    expect((await anon.get(`/device?user_code=${codes.user_code}`)).body).toEqual({ user_code: codes.user_code, status: 'pending' })
    const res = await anon.post('/device/approve', { userCode: codes.user_code })
    expect([res.status, res.body]).toEqual([401, { error: 'unauthorized', error_description: 'Authentication required' }])
  })

  it('approve before opening is refused; someone else cannot decide a claimed request', async () => {
    const codes = await newCodes()
    const first = await signUp(server.base)
    const early = await first.client.post('/device/approve', { userCode: codes.user_code })
    expect(early.status).toBe(400)
    expect(early.body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/^Device code has not been claimed/),
    })
    await first.client.get(`/device?user_code=${codes.user_code}`)
    const second = await signUp(server.base)
    // The second person sees the status, not the client.
    expect((await second.client.get(`/device?user_code=${codes.user_code}`)).body).toEqual({
      user_code: codes.user_code,
      status: 'pending',
    })
    const stolen = await second.client.post('/device/approve', { userCode: codes.user_code })
    expect([stolen.status, stolen.body]).toEqual([
      403,
      { error: 'access_denied', error_description: 'You are not authorized to approve this device authorization' },
    ])
    const denied = await second.client.post('/device/deny', { userCode: codes.user_code })
    expect([denied.status, denied.body]).toEqual([
      403,
      { error: 'access_denied', error_description: 'You are not authorized to deny this device authorization' },
    ])
    expect((await first.client.post('/device/approve', { userCode: codes.user_code })).status).toBe(200)
    const twice = await first.client.post('/device/deny', { userCode: codes.user_code })
    expect([twice.status, twice.body]).toEqual([400, { error: 'invalid_request', error_description: 'Device code already processed' }])
  })

  it('approve and deny at once: one decision stands', async () => {
    const codes = await newCodes()
    const person = await signUp(server.base)
    await person.client.get(`/device?user_code=${codes.user_code}`)
    const [a, d] = await Promise.all([
      person.client.post('/device/approve', { userCode: codes.user_code }),
      person.client.post('/device/deny', { userCode: codes.user_code }),
    ])
    expect([a.status, d.status].sort()).toEqual([200, 400])
  })
})

describe('configuration', () => {
  it('switched off: every path answers 404', async () => {
    const off = await startTestServer()
    try {
      for (const [method, path] of [
        ['POST', '/device/code'],
        ['POST', '/device/token'],
        ['GET', '/device?user_code=X'],
        ['POST', '/device/approve'],
        ['POST', '/device/deny'],
      ] as const) {
        const res = await new HttpClient(off.base, { origin: null }).request(method, path, method === 'POST' ? { body: {} } : {})
        expect([path, res.status]).toEqual([path, 404])
      }
    } finally {
      await off.close()
    }
  })

  it("GET /device has better-auth's rate-limit rule: 5 lookups per code lifetime", async () => {
    const limited = await startTestServer({
      config: { rateLimit: { enabled: true }, deviceAuthorization: { enabled: true, expiresIn: 600 } },
    })
    try {
      const client = new HttpClient(limited.base)
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) statuses.push((await client.get(`/device?user_code=GUESS${i}`)).status)
      expect(statuses).toEqual([400, 400, 400, 400, 400, 429])
      limited.clock.advanceSeconds(300)
      expect((await client.get('/device?user_code=GUESS9')).status).toBe(429)
      limited.clock.advanceSeconds(301)
      expect((await client.get('/device?user_code=GUESS9')).status).toBe(400)
      // The device's own endpoints keep the default rule.
      expect((await client.post('/device/code', { client_id: 'cli' })).status).toBe(200)
    } finally {
      await limited.close()
    }
  })

  it('the OpenAPI document lists the five endpoints with their inputs', async () => {
    const doc = await new HttpClient(server.base).get<{
      paths: Record<string, Record<string, { requestBody?: unknown; parameters: Array<{ name: string }> }>>
    }>('/open-api/generate-schema')
    expect(doc.status).toBe(200)
    const { paths } = doc.body
    expect(
      Object.keys(paths)
        .filter((p) => p === '/device' || p.startsWith('/device/'))
        .sort(),
    ).toEqual(['/device', '/device/approve', '/device/code', '/device/deny', '/device/token'])
    expect(JSON.stringify(paths['/device/code']?.post?.requestBody)).toContain('client_id')
    expect(JSON.stringify(paths['/device/token']?.post?.requestBody)).toContain('urn:ietf:params:oauth:grant-type:device_code')
    expect(paths['/device']?.get?.parameters.map((p) => p.name)).toEqual(['user_code'])
    // Refusals documented in OAuth's words.
    expect(JSON.stringify(paths['/device/token']?.post)).toContain('#/components/schemas/OAuthError')
  })

  it("the panel's Settings switch turns it on live; a duration string reads back as seconds", async () => {
    const off = await startTestServer()
    try {
      const panel = createPanelService({
        gatehouse: off.gatehouse,
        apiURL: () => off.base,
        mode: 'browser',
        version: 'test',
        startedAt: Date.now(),
        logger: silentLogger,
      })
      const bad = await panel.dispatch('settings.update', { patch: { deviceAuthorization: { interval: 'soon' } } })
      expect(bad.ok).toBe(false)
      const changed = await panel.dispatch('settings.update', {
        patch: { deviceAuthorization: { enabled: true, expiresIn: '15m', clientIds: ['cli'] } },
      })
      expect(changed.ok).toBe(true)
      const read = await panel.dispatch('settings.get', {})
      expect(read.ok ? (read.data as { effective: { deviceAuthorization: unknown } }).effective.deviceAuthorization : null).toEqual({
        enabled: true,
        expiresIn: 900,
        interval: 5,
        deviceCodeLength: 40,
        userCodeLength: 8,
        clientIds: ['cli'],
      })
      const res = await new HttpClient(off.base, { origin: null }).post<Codes>('/device/code', { client_id: 'cli' })
      expect([res.status, res.body.expires_in]).toEqual([200, 900])
    } finally {
      await off.close()
    }
  })

  it('expiresIn and interval as better-auth durations, code lengths, verificationUri, clientIds', async () => {
    server.gatehouse.config.update({
      deviceAuthorization: {
        expiresIn: '10m',
        interval: '10s',
        deviceCodeLength: 64,
        userCodeLength: 6,
        verificationUri: '/activate',
        clientIds: ['known'],
      },
    })
    try {
      const unknown = await device().post('/device/code', { client_id: 'stranger' })
      expect([unknown.status, unknown.body]).toEqual([400, { error: 'invalid_client', error_description: 'Invalid client ID' }])
      const codes = await newCodes('known')
      expect(codes.device_code).toHaveLength(64)
      expect(codes.user_code).toHaveLength(6)
      expect([codes.expires_in, codes.interval]).toEqual([600, 10])
      expect(codes.verification_uri).toBe(`${server.origin}/activate`)
      expect(codes.verification_uri_complete).toBe(`${server.origin}/activate?user_code=${codes.user_code}`)
      const stranger = await poll(codes, 'stranger')
      expect(stranger.body).toEqual({ error: 'invalid_client', error_description: 'Invalid client ID' })
      await poll(codes, 'known')
      server.clock.advanceSeconds(9)
      expect((await poll(codes, 'known')).body).toMatchObject({ error: 'slow_down' })
    } finally {
      server.gatehouse.config.update({
        deviceAuthorization: {
          expiresIn: null,
          interval: null,
          deviceCodeLength: null,
          userCodeLength: null,
          verificationUri: null,
          clientIds: null,
        },
      })
    }
  })
})
