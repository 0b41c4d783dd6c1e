import { apiKeyClient } from '@better-auth/api-key/client'
import { defaultKeyHasher } from '@better-auth/api-key'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apikey, auditEvent } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { CookieJar, HttpClient, type SignedUp, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer()
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
  // Off by default; switched on live from the panel, as an operator would.
  expect((await anonymous().post('/api-key/create', {})).status).toBe(404)
  await op('apiKey.configure', { patch: { enabled: true, enableSessionForAPIKeys: true, enableMetadata: true } })
})
afterAll(() => server.close())

type Wire = Record<string, unknown> & { id: string; key: string }

async function op<T = Record<string, unknown>>(name: string, input: unknown): Promise<T> {
  const result = await panel.dispatch(name, input)
  if (!result.ok) throw Object.assign(new Error(result.error.message), result.error)
  return result.data as T
}

/** A key made on the server side (the panel), which may set quotas, limits and permissions. */
async function serverKey(userId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await op<{ key: string }>('apiKey.create', { userId, ...extra })
  return created.key
}

const anonymous = () => new HttpClient(server.base, { origin: null })
const withKey = (key: string) =>
  anonymous().get<{ user: { id: string }; session: { id: string } } | null>('/get-session', { 'x-api-key': key })

function officialClient(jar = new CookieJar()) {
  return official(server, { jar, plugins: [apiKeyClient()] }).client
}

describe('API keys through the official apiKeyClient', () => {
  it('create → get → list → update → delete, key shown once, stored as the plugin hashes it', async () => {
    const client = officialClient()
    const email = uniqueEmail('keys')
    const signedUp = await client.signUp.email({ name: 'Keys', email, password: 'password1234' })
    const userId = signedUp.data?.user.id as string

    const created = await client.apiKey.create({ name: 'ci', prefix: 'gh_', metadata: { team: 'ops' } })
    expect(created.error).toBeNull()
    const data = created.data as unknown as Wire
    expect(data.key).toMatch(/^gh_[A-Za-z]{64}$/)
    expect(data.start).toBe(data.key.slice(0, 6))
    expect(data.prefix).toBe('gh_')
    expect(data.referenceId).toBe(userId)
    expect(data.configId).toBe('default')
    expect(data.enabled).toBe(true)
    expect(data.rateLimitEnabled).toBe(true)
    expect(data.rateLimitMax).toBe(10)
    expect(data.rateLimitTimeWindow).toBe(86_400_000)
    expect(data.remaining).toBeNull()
    expect(data.metadata).toEqual({ team: 'ops' })
    expect(data.permissions).toBeNull()

    // Only the SHA-256 (base64url, the official hasher's form) is stored.
    const row = await firstRow(server.gatehouse.ctx.db.select().from(apikey).where(eq(apikey.id, data.id)))
    expect(row?.key).toBe(await defaultKeyHasher(data.key))
    expect(JSON.stringify(row)).not.toContain(data.key)

    const got = await client.apiKey.get({ query: { id: data.id } })
    expect(got.error).toBeNull()
    expect(got.data).not.toHaveProperty('key')
    expect(got.data?.name).toBe('ci')
    expect(got.data?.metadata).toEqual({ team: 'ops' })

    await client.apiKey.create({ name: 'second' })
    const page = await client.apiKey.list({ query: { offset: 1, sortBy: 'name', sortDirection: 'asc' } })
    expect(page.data?.total).toBe(2)
    expect(page.data?.apiKeys.map((k) => k.name)).toEqual(['second'])
    const firstOnly = await client.apiKey.list({ query: { limit: 1, sortBy: 'name', sortDirection: 'desc' } })
    expect(firstOnly.data?.apiKeys.map((k) => k.name)).toEqual(['second'])
    await client.apiKey.delete({ keyId: page.data?.apiKeys[0]?.id as string })
    const list = await client.apiKey.list()
    expect(list.data?.total).toBe(1)
    expect(list.data?.apiKeys.map((k) => k.id)).toEqual([data.id])
    expect(list.data?.apiKeys[0]).not.toHaveProperty('key')

    const updated = await client.apiKey.update({ keyId: data.id, name: 'ci-2', enabled: false })
    expect(updated.error).toBeNull()
    expect(updated.data?.name).toBe('ci-2')
    expect(updated.data?.enabled).toBe(false)

    const deleted = await client.apiKey.delete({ keyId: data.id })
    expect(deleted.data).toEqual({ success: true })
    const gone = await client.apiKey.get({ query: { id: data.id } })
    expect(gone.error?.status).toBe(404)
    expect(gone.error?.code).toBe('KEY_NOT_FOUND')
    expect(gone.error?.message).toBe('API Key not found')
  })
})

describe('API key errors, by status and code', () => {
  let owner: SignedUp
  let other: SignedUp
  beforeAll(async () => {
    owner = await signUp(server.base)
    other = await signUp(server.base)
  })

  const expectError = (res: { status: number; body: unknown }, status: number, code: string, message: string) => {
    expect(res.status).toBe(status)
    expect(res.body).toEqual({ code, message })
  }

  it('creation rules', async () => {
    expectError(await anonymous().post('/api-key/create', { name: 'x' }), 401, 'UNAUTHORIZED_SESSION', 'Unauthorized or invalid session')
    for (const body of [
      { remaining: 5 },
      { permissions: { files: ['read'] } },
      { rateLimitMax: 3 },
      { refillAmount: 1, refillInterval: 1000 },
    ]) {
      expectError(
        await owner.client.post('/api-key/create', body),
        400,
        'SERVER_ONLY_PROPERTY',
        "The property you're trying to set can only be set from the server auth instance only.",
      )
    }
    expectError(
      await owner.client.post('/api-key/create', { userId: other.user.id }),
      401,
      'UNAUTHORIZED_SESSION',
      'Unauthorized or invalid session',
    )
    expectError(
      await owner.client.post('/api-key/create', { expiresIn: 3600 }),
      400,
      'EXPIRES_IN_IS_TOO_SMALL',
      'The expiresIn is smaller than the predefined minimum value.',
    )
    expectError(
      await owner.client.post('/api-key/create', { expiresIn: 366 * 86_400 }),
      400,
      'EXPIRES_IN_IS_TOO_LARGE',
      'The expiresIn is larger than the predefined maximum value.',
    )
    expectError(
      await owner.client.post('/api-key/create', { prefix: 'p'.repeat(33) }),
      400,
      'INVALID_PREFIX_LENGTH',
      'The prefix length is either too large or too small.',
    )
    expectError(
      await owner.client.post('/api-key/create', { name: 'n'.repeat(33) }),
      400,
      'INVALID_NAME_LENGTH',
      'The name length is either too large or too small.',
    )
    expectError(
      await owner.client.post('/api-key/create', { metadata: 'text' }),
      400,
      'INVALID_METADATA_TYPE',
      'metadata must be an object or undefined',
    )
    await expect(op('apiKey.create', { userId: owner.user.id, refillAmount: 5 })).rejects.toMatchObject({
      status: 400,
      code: 'REFILL_AMOUNT_AND_INTERVAL_REQUIRED',
      message: 'refillAmount is required when refillInterval is provided',
    })
    await expect(op('apiKey.create', { userId: owner.user.id, refillInterval: 5000 })).rejects.toMatchObject({
      status: 400,
      code: 'REFILL_INTERVAL_AND_AMOUNT_REQUIRED',
      message: 'refillInterval is required when refillAmount is provided',
    })
  })

  it("owner-only reading and changes; another user's key is 404", async () => {
    const created = await owner.client.post<Wire>('/api-key/create', { name: 'mine' })
    const id = created.body.id
    expectError(await other.client.get(`/api-key/get?id=${id}`), 404, 'KEY_NOT_FOUND', 'API Key not found')
    expectError(await other.client.post('/api-key/delete', { keyId: id }), 404, 'KEY_NOT_FOUND', 'API Key not found')
    expectError(await other.client.post('/api-key/update', { keyId: id, name: 'theirs' }), 404, 'KEY_NOT_FOUND', 'API Key not found')
    expectError(await owner.client.post('/api-key/update', { keyId: id }), 400, 'NO_VALUES_TO_UPDATE', 'No values to update.')
    expectError(
      await owner.client.post('/api-key/update', { keyId: id, remaining: 3 }),
      400,
      'SERVER_ONLY_PROPERTY',
      "The property you're trying to set can only be set from the server auth instance only.",
    )
    expectError(
      await anonymous().post('/api-key/update', { keyId: id, name: 'x' }),
      401,
      'UNAUTHORIZED_SESSION',
      'Unauthorized or invalid session',
    )
    expect((await anonymous().get('/api-key/list')).status).toBe(401)
    const refusals = (await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.actorUserId, other.user.id)))
      .filter((e) => e.type === 'api-key.refused')
      .map((e) => e.detail)
    expect(refusals).toEqual(
      expect.arrayContaining([
        { code: 'KEY_NOT_FOUND', path: '/api-key/get' },
        { code: 'KEY_NOT_FOUND', path: '/api-key/delete' },
        { code: 'KEY_NOT_FOUND', path: '/api-key/update' },
      ]),
    )
  })

  it('verification: invalid, short, disabled, expired, usage, rate limit, permissions', async () => {
    expectError(await withKey('A'.repeat(64)), 401, 'INVALID_API_KEY', 'Invalid API key.')
    expectError(await withKey('short'), 403, 'INVALID_API_KEY', 'Invalid API key.')

    const disabledKey = await serverKey(owner.user.id)
    const { keys } = await op<{ keys: Array<{ id: string; start: string }> }>('apiKey.list', { userId: owner.user.id })
    const disabledId = keys.find((k) => disabledKey.startsWith(k.start))?.id as string
    await op('apiKey.setEnabled', { keyId: disabledId, enabled: false })
    expectError(await withKey(disabledKey), 401, 'KEY_DISABLED', 'API Key is disabled')

    const expiring = await owner.client.post<Wire>('/api-key/create', { expiresIn: 86_400 })
    expect((await withKey(expiring.body.key)).status).toBe(200)
    server.clock.advanceSeconds(86_401)
    expectError(await withKey(expiring.body.key), 401, 'KEY_EXPIRED', 'API Key has expired')
    // An expired key is deleted, as upstream does.
    expectError(await withKey(expiring.body.key), 401, 'INVALID_API_KEY', 'Invalid API key.')

    const limited = await serverKey(owner.user.id, { remaining: 1, rateLimitEnabled: false })
    expect((await withKey(limited)).status).toBe(200)
    expectError(await withKey(limited), 429, 'USAGE_EXCEEDED', 'API Key has reached its usage limit')

    const throttled = await serverKey(owner.user.id, { rateLimitMax: 2, rateLimitTimeWindow: 60_000 })
    expect((await withKey(throttled)).status).toBe(200)
    expect((await withKey(throttled)).status).toBe(200)
    const refused = await withKey(throttled)
    expectError(refused, 429, 'RATE_LIMITED', 'Rate limit exceeded.')
    expect(refused.headers.get('x-retry-after')).toBe('60')
    server.clock.advanceSeconds(61)
    expect((await withKey(throttled)).status).toBe(200)

    const scoped = await serverKey(owner.user.id, { permissions: { files: ['read', 'write'] } })
    const ok = await anonymous().post<{ valid: boolean; key: { permissions: unknown } }>('/api-key/verify', {
      key: scoped,
      permissions: { files: ['read'] },
    })
    expect(ok.body.valid).toBe(true)
    expect(ok.body.key.permissions).toEqual({ files: ['read', 'write'] })
    const denied = await anonymous().post('/api-key/verify', { key: scoped, permissions: { files: ['delete'] } })
    expect(denied.body).toEqual({ valid: false, error: { code: 'KEY_NOT_FOUND', message: 'API Key not found' }, key: null })
    const otherResource = await anonymous().post('/api-key/verify', { key: scoped, permissions: { users: ['read'] } })
    expect(otherResource.body).toMatchObject({ valid: false, error: { code: 'KEY_NOT_FOUND' } })
    const unknown = await anonymous().post('/api-key/verify', { key: 'B'.repeat(64) })
    expect(unknown.body).toEqual({ valid: false, error: { code: 'INVALID_API_KEY', message: 'Invalid API key.' }, key: null })
  })

  it('refills the quota when the interval has passed (injected clock)', async () => {
    const key = await serverKey(owner.user.id, { remaining: 2, refillAmount: 2, refillInterval: 60_000, rateLimitEnabled: false })
    expect((await withKey(key)).status).toBe(200)
    expect((await withKey(key)).status).toBe(200)
    expect((await withKey(key)).status).toBe(429)
    server.clock.advanceSeconds(61)
    expect((await withKey(key)).status).toBe(200)
    expect((await withKey(key)).status).toBe(200)
    expect((await withKey(key)).status).toBe(429)
  })

  it('name and expiry rules from the config (live)', async () => {
    await op('apiKey.configure', { patch: { requireName: true, keyExpiration: { disableCustomExpiresTime: true } } })
    try {
      expectError(await owner.client.post('/api-key/create', {}), 400, 'NAME_REQUIRED', 'API Key name is required.')
      expectError(
        await owner.client.post('/api-key/create', { name: 'n', expiresIn: 86_400 * 2 }),
        400,
        'KEY_DISABLED_EXPIRATION',
        'Custom key expiration values are disabled.',
      )
    } finally {
      await op('apiKey.configure', { patch: { requireName: null, keyExpiration: null } })
    }
  })

  it("a banned or deleted owner's key is refused", async () => {
    const banned = await signUp(server.base)
    const bannedKey = await serverKey(banned.user.id, { rateLimitEnabled: false })
    expect((await withKey(bannedKey)).status).toBe(200)
    await op('users.ban', { userId: banned.user.id })
    expectError(await withKey(bannedKey), 401, 'USER_BANNED', 'User is banned')

    const removed = await signUp(server.base)
    const orphan = await serverKey(removed.user.id, { rateLimitEnabled: false })
    await op('users.remove', { userId: removed.user.id })
    expectError(await withKey(orphan), 401, 'INVALID_REFERENCE_ID_FROM_API_KEY', 'The reference id from the API key is invalid.')
  })

  it('metadata refused when disabled (live config)', async () => {
    await op('apiKey.configure', { patch: { enableMetadata: false } })
    try {
      expectError(await owner.client.post('/api-key/create', { metadata: { a: 1 } }), 400, 'METADATA_DISABLED', 'Metadata is disabled.')
    } finally {
      await op('apiKey.configure', { patch: { enableMetadata: true } })
    }
  })
})

describe('a key acting as its owner (enableSessionForAPIKeys)', () => {
  it('answers get-session and protected endpoints as the owner, without cookies', async () => {
    const owner = await signUp(server.base)
    const created = await owner.client.post<Wire>('/api-key/create', { name: 'svc' })
    const session = await withKey(created.body.key)
    expect(session.status).toBe(200)
    expect(session.body?.user.id).toBe(owner.user.id)
    expect(session.body?.session.id).toBe(created.body.id)
    expect(session.cookies).toEqual([])
    const listed = await anonymous().get<unknown[]>('/list-sessions', { 'x-api-key': created.body.key })
    expect(listed.status).toBe(200)
    const keys = await anonymous().get<{ total: number }>('/api-key/list', { 'x-api-key': created.body.key })
    expect(keys.body.total).toBe(1)
  })

  it('is off by default: the header is ignored', async () => {
    const owner = await signUp(server.base)
    const created = await owner.client.post<Wire>('/api-key/create', {})
    await op('apiKey.configure', { patch: { enableSessionForAPIKeys: null } })
    try {
      const answer = await withKey(created.body.key)
      expect(answer.status).toBe(200)
      expect(answer.body).toBeNull()
      expect((await anonymous().get('/list-sessions', { 'x-api-key': created.body.key })).status).toBe(401)
    } finally {
      await op('apiKey.configure', { patch: { enableSessionForAPIKeys: true } })
    }
  })

  it('reads the configured header', async () => {
    const owner = await signUp(server.base)
    const created = await owner.client.post<Wire>('/api-key/create', {})
    await op('apiKey.configure', { patch: { apiKeyHeaders: ['x-service-key'] } })
    try {
      expect((await withKey(created.body.key)).body).toBeNull()
      const answer = await anonymous().get<{ user: { id: string } }>('/get-session', { 'x-service-key': created.body.key })
      expect(answer.body.user.id).toBe(owner.user.id)
    } finally {
      await op('apiKey.configure', { patch: { apiKeyHeaders: null } })
    }
  })
})

describe('atomic counting', () => {
  it('20 parallel requests on a key with 5 uses left: exactly 5 pass', async () => {
    const owner = await signUp(server.base)
    const key = await serverKey(owner.user.id, { remaining: 5, rateLimitEnabled: false })
    const answers = await Promise.all(Array.from({ length: 20 }, () => withKey(key)))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5)
    for (const a of answers.filter((a) => a.status !== 200)) expect([401, 429]).toContain(a.status)
    expect(answers.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(1)
  })

  it('20 parallel requests on a key allowing 5 per window: exactly 5 pass, the rest RATE_LIMITED', async () => {
    const owner = await signUp(server.base)
    const key = await serverKey(owner.user.id, { rateLimitMax: 5, rateLimitTimeWindow: 60_000 })
    const answers = await Promise.all(Array.from({ length: 20 }, () => withKey(key)))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5)
    const refused = answers.filter((a) => a.status !== 200)
    expect(refused).toHaveLength(15)
    for (const a of refused) expect(a.body).toEqual({ code: 'RATE_LIMITED', message: 'Rate limit exceeded.' })
    // Counters of keys without a quota are written within a second; the panel reads them flushed.
    const listed = await op<{ keys: Array<{ requestCount: number }> }>('apiKey.list', { userId: owner.user.id })
    expect(listed.keys[0]?.requestCount).toBe(5)
    const row = await firstRow(
      server.gatehouse.ctx.db
        .select()
        .from(apikey)
        .where(eq(apikey.key, await defaultKeyHasher(key))),
    )
    expect(row?.requestCount).toBe(5)
  })
})

describe('revocation clears the verification cache at once', () => {
  it('disable, re-enable and delete take effect on the next request', async () => {
    const owner = await signUp(server.base)
    const key = await serverKey(owner.user.id, { rateLimitEnabled: false })
    const id = (await op<{ keys: Array<{ id: string }> }>('apiKey.list', { userId: owner.user.id })).keys[0]?.id as string
    expect((await withKey(key)).status).toBe(200)
    await op('apiKey.setEnabled', { keyId: id, enabled: false })
    expect((await withKey(key)).status).toBe(401)
    await op('apiKey.setEnabled', { keyId: id, enabled: true })
    expect((await withKey(key)).status).toBe(200)
    await owner.client.post('/api-key/update', { keyId: id, enabled: false })
    expect((await withKey(key)).body).toMatchObject({ code: 'KEY_DISABLED' })
    await op('apiKey.delete', { keyId: id })
    expect((await withKey(key)).body).toEqual({ code: 'INVALID_API_KEY', message: 'Invalid API key.' })
  })
})

describe('panel and audit', () => {
  it('lists keys searchable by owner, with last use, and audits changes and refusals', async () => {
    const email = uniqueEmail('findme')
    const owner = await signUp(server.base, { email })
    const created = await op<{ key: string; apiKey: { id: string; lastRequest: number | null; ownerEmail: string } }>('apiKey.create', {
      userId: owner.user.id,
      name: 'panel key',
      rateLimitEnabled: false,
    })
    expect(created.key).toMatch(/^[A-Za-z]{64}$/)
    expect(created.apiKey.ownerEmail).toBe(email)
    expect(created.apiKey.lastRequest).toBeNull()
    await withKey(created.key)
    const found = await op<{ keys: Array<{ id: string; lastRequest: number | null }>; total: number }>('apiKey.list', {
      search: email.slice(0, 12),
    })
    expect(found.total).toBe(1)
    expect(found.keys[0]?.id).toBe(created.apiKey.id)
    expect(found.keys[0]?.lastRequest).toBe(server.clock.now())
    await op('apiKey.setEnabled', { keyId: created.apiKey.id, enabled: false })
    await withKey(created.key)
    await op('apiKey.delete', { keyId: created.apiKey.id })
    const events = (
      await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.target, created.apiKey.id)).orderBy(auditEvent.id)
    ).map((e) => `${e.type}:${e.outcome}`)
    expect(events).toEqual(['api-key.created:success', 'api-key.disabled:success', 'api-key.refused:failure', 'api-key.deleted:success'])
  })
})

describe('switched off', () => {
  it('answers 404 on every route, live', async () => {
    const owner = await signUp(server.base)
    await op('apiKey.configure', { patch: { enabled: false } })
    try {
      for (const [method, path] of [
        ['POST', '/api-key/create'],
        ['GET', '/api-key/get?id=x'],
        ['POST', '/api-key/update'],
        ['POST', '/api-key/delete'],
        ['GET', '/api-key/list'],
        ['POST', '/api-key/verify'],
      ] as const) {
        const res = await owner.client.request(method, path, method === 'POST' ? { body: {} } : {})
        expect(res.status, path).toBe(404)
        expect(res.body).toEqual({ code: 'NOT_FOUND', message: 'Not Found' })
      }
    } finally {
      await op('apiKey.configure', { patch: { enabled: true } })
    }
  })
})

describe('hostile input', () => {
  it('malformed bodies and queries are 4xx with {code, message}, never 500', async () => {
    const owner = await signUp(server.base)
    const junk: unknown[] = [
      null,
      [],
      'text',
      42,
      { keyId: 5 },
      { name: ['x'] },
      { expiresIn: 'soon' },
      { metadata: null },
      { key: {} },
      { prefix: '../' },
      { keyId: 'x'.repeat(5000) },
    ]
    const paths = ['/api-key/create', '/api-key/update', '/api-key/delete', '/api-key/verify']
    for (const path of paths) {
      for (const body of junk) {
        const res = await owner.client.request('POST', path, { raw: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBeLessThan(500)
        if (res.status >= 400) expect(Object.keys(res.body as object).sort()).toEqual(['code', 'message'])
      }
    }
    for (const query of ['', '?id=', '?limit=-1', '?limit=abc', '?sortBy=__proto__', '?sortDirection=sideways', '?offset=1e9']) {
      for (const path of ['/api-key/get', '/api-key/list']) {
        const res = await owner.client.get(`${path}${query}`)
        expect(res.status, `${path}${query}`).toBeLessThan(500)
      }
    }
    for (const key of ['', ' ', 'x'.repeat(10_000), '\u00e9'.repeat(64)]) {
      const res = await anonymous().get('/get-session', { 'x-api-key': encodeURIComponent(key) || 'x' })
      expect(res.status).toBeLessThan(500)
    }
  })
})
