import { admin, bearer, deviceAuthorization, organization, twoFactor, username } from 'better-auth/plugins'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBetterAuthPeer } from '../../helpers/better-auth-peer.js'
import { shape } from '../../helpers/differential.js'
import { deviceCode } from '../../../server/db/schema.js'
import { type Answer, HttpClient, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 27: the same device authorization steps (RFC 8628) to a real better-auth 1.7.25 with its
 * deviceAuthorization plugin and to Gatehouse with deviceAuthorization.enabled, compared on
 * status, `error`/`error_description` (or `code`/`message`), body shape, Set-Cookie and the
 * no-store headers. Time passes on each side its own way: Gatehouse's clock is the test's; on
 * better-auth's the row's lastPolledAt / expiresAt is moved back in its database (no sleeping).
 */

const SECRET = 'differential-secret-0123456789-abcdefghij'
const PASSWORD = 'correct horse battery'
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

interface Target {
  base: string
  /** As if the polling interval had passed for this device code. */
  intervalPassed(code: string): Promise<void>
  /** As if the device code had expired. */
  expire(code: string): Promise<void>
}

let peer: Target & { close(): Promise<void> }
let gatehouse: TestServer
let ours: Target

beforeAll(async () => {
  // The plugins Gatehouse always ships (their user and session columns), as in differential.test.ts.
  const ba = await startBetterAuthPeer(
    SECRET,
    [organization({ teams: { enabled: true } }), admin(), username(), twoFactor(), bearer(), deviceAuthorization()],
    { advanced: { disableOriginCheck: false } },
  )
  peer = {
    base: ba.base,
    close: ba.close,
    intervalPassed: async (code) => void ba.sqlite.prepare('update deviceCode set lastPolledAt = null where deviceCode = ?').run(code),
    expire: async (code) =>
      void ba.sqlite
        .prepare('update deviceCode set expiresAt = ? where deviceCode = ?')
        .run(new Date(Date.now() - 1000).toISOString(), code),
  }
  gatehouse = await startTestServer({ secret: SECRET, config: { deviceAuthorization: { enabled: true } } })
  ours = {
    base: gatehouse.base,
    intervalPassed: async () => gatehouse.clock.advanceSeconds(5),
    expire: async (code) => {
      await gatehouse.gatehouse.ctx.db
        .update(deviceCode)
        .set({ expiresAt: new Date(gatehouse.clock.now() - 1000) })
        .where(eq(deviceCode.deviceCode, code))
    },
  }
})
afterAll(async () => {
  await gatehouse.close()
  await peer.close()
})

function summary(a: Answer) {
  const body = a.body as Record<string, unknown> | null
  const error = a.status >= 400
  return {
    status: a.status,
    ...(error
      ? body && 'error' in body
        ? { error: body.error, error_description: body.error_description }
        : { code: body?.code, message: body?.message }
      : { shape: shape(a.body) }),
    cookies: a.cookies.map((c) => c.slice(0, c.indexOf('='))).sort(),
    cacheControl: a.headers.get('cache-control'),
    pragma: a.headers.get('pragma'),
  }
}

async function scenario(target: Target): Promise<Record<string, ReturnType<typeof summary>>> {
  const { base } = target
  const seen: Record<string, ReturnType<typeof summary>> = {}
  const origin = new URL(base).origin
  const step = async <T = Record<string, unknown>>(name: string, answer: Promise<Answer<T>>) => {
    const a = await answer
    seen[name] = summary(a as Answer)
    return a
  }
  const device = new HttpClient(base, { origin: null })
  const token = (code: string, clientId = 'cli') =>
    device.post('/device/token', { grant_type: GRANT, device_code: code, client_id: clientId })

  const codes = (
    await step<{ device_code: string; user_code: string }>('code', device.post('/device/code', { client_id: 'cli', scope: 'read' }))
  ).body
  await step('code without client_id', device.post('/device/code', {}))
  await step('code with empty client_id', device.post('/device/code', { client_id: '' }))
  await step('token pending', token(codes.device_code))
  await step('token too fast', token(codes.device_code))
  await step('token of another client', token(codes.device_code, 'other'))
  await step('token of an unknown code', token('x'.repeat(40)))
  await step('token with a wrong grant type', device.post('/device/token', { grant_type: 'password', device_code: 'x', client_id: 'cli' }))
  await step('open signed out', device.get(`/device?user_code=${codes.user_code}`))
  await step('open an unknown code', device.get('/device?user_code=ZZZZZZZZ'))
  await step('open without user_code', device.get('/device'))

  const person = new HttpClient(base, { origin })
  await step('sign-up', person.post('/sign-up/email', { email: uniqueEmail('device'), password: PASSWORD, name: 'Person' }))
  await step('approve signed out', new HttpClient(base, { origin }).post('/device/approve', { userCode: codes.user_code }))
  await step('approve before opening', person.post('/device/approve', { userCode: codes.user_code }))
  const typed = `${codes.user_code.slice(0, 4).toLowerCase()}-${codes.user_code.slice(4)}`
  await step('open signed in (typed loosely)', person.get(`/device?user_code=${typed}`))
  await step('approve an unknown code', person.post('/device/approve', { userCode: 'ZZZZZZZZ' }))
  const other = new HttpClient(base, { origin })
  await other.post('/sign-up/email', { email: uniqueEmail('other'), password: PASSWORD, name: 'Other' })
  await step('open by someone else', other.get(`/device?user_code=${codes.user_code}`))
  await step('approve by someone else', other.post('/device/approve', { userCode: codes.user_code }))
  await step('deny by someone else', other.post('/device/deny', { userCode: codes.user_code }))
  await step('approve', person.post('/device/approve', { userCode: codes.user_code }))
  await step('deny after approving', person.post('/device/deny', { userCode: codes.user_code }))
  await step('open approved', person.get(`/device?user_code=${codes.user_code}`))
  await target.intervalPassed(codes.device_code)
  const issued = (await step('token', token(codes.device_code))) as Answer<{ access_token: string }>
  await step(
    'get-session by the access token',
    new HttpClient(base, { origin: null, headers: { authorization: `Bearer ${issued.body.access_token}` } }).get('/get-session'),
  )
  await step('token again', token(codes.device_code))

  const denied = (await device.post<{ device_code: string; user_code: string }>('/device/code', { client_id: 'cli' })).body
  await person.get(`/device?user_code=${denied.user_code}`)
  await step('deny', person.post('/device/deny', { userCode: denied.user_code }))
  await step('token denied', token(denied.device_code))
  await target.intervalPassed(denied.device_code)
  await step('token denied again', token(denied.device_code))

  const late = (await device.post<{ device_code: string; user_code: string }>('/device/code', { client_id: 'cli' })).body
  await person.get(`/device?user_code=${late.user_code}`)
  await target.expire(late.device_code)
  await step('open expired', person.get(`/device?user_code=${late.user_code}`))
  await step('approve expired', person.post('/device/approve', { userCode: late.user_code }))
  await step('token expired', token(late.device_code))
  await target.intervalPassed(late.device_code)
  await step('token expired again', token(late.device_code))
  return seen
}

describe('device authorization against better-auth 1.7.25', () => {
  it('answers alike, step by step', async () => {
    const theirs = await scenario(peer)
    const mine = await scenario(ours)
    // Not this feature's: better-auth's get-session also sends `Pragma: no-cache`; Gatehouse's
    // core get-session sends Cache-Control only. Compared here on status, body and cookies.
    for (const side of [theirs, mine]) {
      const answer = side['get-session by the access token']
      if (answer) answer.pragma = null
    }
    expect(Object.keys(mine)).toEqual(Object.keys(theirs))
    expect(Object.keys(theirs).length).toBeGreaterThan(30)
    for (const name of Object.keys(theirs)) expect({ step: name, ...mine[name] }).toEqual({ step: name, ...theirs[name] })
  })
})
