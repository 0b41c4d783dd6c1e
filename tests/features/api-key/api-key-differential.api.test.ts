import { apiKey } from '@better-auth/api-key'
import Database from 'better-sqlite3'
import { betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import { jwt, twoFactor } from 'better-auth/plugins'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPanelService } from '../../../server/panel/service.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * The same requests against better-auth 1.7 with @better-auth/api-key and jwt (the oracle, run
 * in-process) and against Gatehouse: statuses, error codes and messages, and answer fields agree.
 */

type Answer = { status: number; body: unknown; headers: Headers }
type Caller = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>

let server: TestServer
let oracle: Caller
let ours: Caller

const ORACLE_ORIGIN = 'http://localhost:3000'

beforeAll(async () => {
  server = await startTestServer()
  const panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
  await panel.dispatch('apiKey.configure', { patch: { enabled: true, enableSessionForAPIKeys: true, enableMetadata: true } })
  await panel.dispatch('jwt.configure', { patch: { enabled: true } })

  const options = {
    database: new Database(':memory:'),
    baseURL: ORACLE_ORIGIN,
    secret: 'oracle-secret-0123456789-abcdefghijkl',
    emailAndPassword: { enabled: true },
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    logger: { disabled: true },
    // twoFactor: Gatehouse always ships it, so users (and JWT claims) carry twoFactorEnabled.
    plugins: [apiKey({ enableSessionForAPIKeys: true, enableMetadata: true }), jwt(), twoFactor()],
  }
  const { runMigrations } = await getMigrations(options)
  await runMigrations()
  const auth = betterAuth(options)
  const make =
    (origin: string, fetcher: (r: Request) => Promise<Response>): Caller =>
    async (method, path, body, headers = {}) => {
      const response = await fetcher(
        new Request(`${origin}/api/auth${path}`, {
          method,
          headers: { 'content-type': 'application/json', origin, ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      )
      const text = await response.text()
      return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers }
    }
  oracle = make(ORACLE_ORIGIN, (r) => auth.handler(r))
  ours = make(server.origin, (r) => fetch(r))
})
afterAll(() => server.close())

interface Side {
  call: Caller
  cookie: string
  other: string
}

async function user(call: Caller, email: string): Promise<string> {
  const res = await call('POST', '/sign-up/email', { name: 'Diff', email, password: 'password1234' })
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
}

const errorOf = (a: Answer) => ({
  status: a.status,
  code: (a.body as { code?: string })?.code,
  message: (a.body as { message?: string })?.message,
})

describe('api-key and jwt against better-auth', () => {
  it('the same statuses, codes, messages and fields', async () => {
    const sides: Side[] = []
    for (const call of [oracle, ours]) {
      const stamp = `${Date.now()}${sides.length}`
      sides.push({ call, cookie: await user(call, `diff${stamp}@example.com`), other: await user(call, `other${stamp}@example.com`) })
    }
    const both = async (run: (s: Side) => Promise<Answer>) => (await Promise.all(sides.map(run))) as [Answer, Answer]

    const [baCreated, ghCreated] = await both((s) =>
      s.call('POST', '/api-key/create', { name: 'diff', metadata: { a: 1 } }, { cookie: s.cookie }),
    )
    expect(ghCreated.status).toBe(baCreated.status)
    expect(Object.keys(ghCreated.body as object).sort()).toEqual(Object.keys(baCreated.body as object).sort())
    const keys = [baCreated.body as { id: string; key: string }, ghCreated.body as { id: string; key: string }]
    expect(keys[1]?.key.length).toBe(keys[0]?.key.length)

    const cases: Array<[string, (s: Side, i: number) => Promise<Answer>]> = [
      ['create without session', (s) => s.call('POST', '/api-key/create', { name: 'x' })],
      ['server-only property', (s) => s.call('POST', '/api-key/create', { remaining: 3 }, { cookie: s.cookie })],
      ['expiresIn too small', (s) => s.call('POST', '/api-key/create', { expiresIn: 60 }, { cookie: s.cookie })],
      ['expiresIn too large', (s) => s.call('POST', '/api-key/create', { expiresIn: 400 * 86_400 }, { cookie: s.cookie })],
      ['prefix too long', (s) => s.call('POST', '/api-key/create', { prefix: 'p'.repeat(40) }, { cookie: s.cookie })],
      ['name too long', (s) => s.call('POST', '/api-key/create', { name: 'n'.repeat(40) }, { cookie: s.cookie })],
      ['metadata not an object', (s) => s.call('POST', '/api-key/create', { metadata: 'x' }, { cookie: s.cookie })],
      ['get: not found', (s) => s.call('GET', '/api-key/get?id=nope', undefined, { cookie: s.cookie })],
      ["get: another user's key", (s, i) => s.call('GET', `/api-key/get?id=${keys[i]?.id}`, undefined, { cookie: s.other })],
      ["delete: another user's key", (s, i) => s.call('POST', '/api-key/delete', { keyId: keys[i]?.id }, { cookie: s.other })],
      ['update: nothing', (s, i) => s.call('POST', '/api-key/update', { keyId: keys[i]?.id }, { cookie: s.cookie })],
      ['update: server-only', (s, i) => s.call('POST', '/api-key/update', { keyId: keys[i]?.id, remaining: 4 }, { cookie: s.cookie })],
      ['update: no session', (s, i) => s.call('POST', '/api-key/update', { keyId: keys[i]?.id, name: 'z' })],
      ['list: no session', (s) => s.call('GET', '/api-key/list')],
      ['unknown key', (s) => s.call('GET', '/get-session', undefined, { 'x-api-key': 'Z'.repeat(64) })],
      ['short key', (s) => s.call('GET', '/get-session', undefined, { 'x-api-key': 'short' })],
      ['token: no session', (s) => s.call('GET', '/token')],
    ]
    for (const [name, run] of cases) {
      const [ba, gh] = await Promise.all(sides.map((s, i) => run(s, i)))
      expect((ba as Answer).status, name).toBeGreaterThanOrEqual(400)
      expect((ba as Answer).body, name).toHaveProperty('code')
      expect(errorOf(gh as Answer), name).toEqual(errorOf(ba as Answer))
    }

    // A key acting as its owner; then disabled.
    const [baSession, ghSession] = (await Promise.all(
      sides.map((s, i) => s.call('GET', '/get-session', undefined, { 'x-api-key': keys[i]?.key as string })),
    )) as [Answer, Answer]
    expect(ghSession.status).toBe(200)
    expect((ghSession.body as { session: { id: string } }).session.id).toBe(keys[1]?.id)
    expect((baSession.body as { session: { id: string } }).session.id).toBe(keys[0]?.id)
    await Promise.all(sides.map((s, i) => s.call('POST', '/api-key/update', { keyId: keys[i]?.id, enabled: false }, { cookie: s.cookie })))
    const [baDisabled, ghDisabled] = (await Promise.all(
      sides.map((s, i) => s.call('GET', '/get-session', undefined, { 'x-api-key': keys[i]?.key as string })),
    )) as [Answer, Answer]
    expect(errorOf(ghDisabled)).toEqual({ status: 401, code: 'KEY_DISABLED', message: 'API Key is disabled' })
    expect(errorOf(ghDisabled)).toEqual(errorOf(baDisabled))

    const [baList, ghList] = await both((s) => s.call('GET', '/api-key/list', undefined, { cookie: s.cookie }))
    expect(Object.keys(ghList.body as object).sort()).toEqual(Object.keys(baList.body as object).sort())
    const field = (a: Answer) => Object.keys((a.body as { apiKeys: object[] }).apiKeys[0] as object).sort()
    expect(field(ghList)).toEqual(field(baList))

    // JWT: same claims and header fields (values differ: users, keys and times).
    const [baToken, ghToken] = await both((s) => s.call('GET', '/token', undefined, { cookie: s.cookie }))
    const claims = (a: Answer) =>
      Object.keys(JSON.parse(Buffer.from((a.body as { token: string }).token.split('.')[1] as string, 'base64url').toString())).sort()
    expect(
      claims(ghToken).filter((c) => !['role', 'banned', 'banReason', 'banExpires', 'username', 'displayUsername'].includes(c)),
    ).toEqual(claims(baToken))
    const [baJwks, ghJwks] = await both((s) => s.call('GET', '/jwks'))
    const jwkFields = (a: Answer) => Object.keys((a.body as { keys: object[] }).keys[0] as object).sort()
    expect(jwkFields(ghJwks)).toEqual(jwkFields(baJwks))
  })
})
