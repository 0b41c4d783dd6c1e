import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { HttpClient, type SignedUp, signUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/** Organization-owned keys (`references: "organization"`), and key counters across a restart. */

let server: TestServer
let panel: PanelService

const panelFor = (s: TestServer) =>
  createPanelService({
    gatehouse: s.gatehouse,
    apiURL: () => s.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })

async function op<T = Record<string, unknown>>(p: PanelService, name: string, input: unknown): Promise<T> {
  const result = await p.dispatch(name, input)
  if (!result.ok) throw Object.assign(new Error(result.error.message), result.error)
  return result.data as T
}

beforeAll(async () => {
  server = await startTestServer()
  panel = panelFor(server)
  await op(panel, 'apiKey.configure', { patch: { enabled: true, enableSessionForAPIKeys: true, references: 'organization' } })
})
afterAll(() => server.close())

const expectError = (res: { status: number; body: unknown }, status: number, code: string, message: string) => {
  expect(res.status).toBe(status)
  expect(res.body).toEqual({ code, message })
}

describe('organization-owned keys', () => {
  let owner: SignedUp
  let member: SignedUp
  let outsider: SignedUp
  let orgId: string

  beforeAll(async () => {
    owner = await signUp(server.base)
    member = await signUp(server.base)
    outsider = await signUp(server.base)
    const org = await owner.client.post<{ id: string }>('/organization/create', { name: 'Keys Inc', slug: `keys-${Date.now()}` })
    expect(org.status).toBe(200)
    orgId = org.body.id
    const invited = await owner.client.post<{ id: string }>('/organization/invite-member', {
      email: member.email,
      role: 'member',
      organizationId: orgId,
    })
    expect(invited.status).toBe(200)
    const accepted = await member.client.post('/organization/accept-invitation', { invitationId: invited.body.id })
    expect(accepted.status).toBe(200)
  })

  it('needs an organization, membership and a role allowed to manage keys', async () => {
    expectError(
      await owner.client.post('/api-key/create', { name: 'k' }),
      400,
      'ORGANIZATION_ID_REQUIRED',
      'Organization ID is required for organization-owned API keys.',
    )
    expectError(
      await outsider.client.post('/api-key/create', { organizationId: orgId }),
      403,
      'USER_NOT_MEMBER_OF_ORGANIZATION',
      'You are not a member of the organization that owns this API key.',
    )
    expectError(
      await member.client.post('/api-key/create', { organizationId: orgId }),
      403,
      'INSUFFICIENT_API_KEY_PERMISSIONS',
      'You do not have permission to perform this action on organization API keys.',
    )
    const created = await owner.client.post<{ id: string; key: string; referenceId: string }>('/api-key/create', {
      organizationId: orgId,
      name: 'org',
    })
    expect(created.status).toBe(200)
    expect(created.body.referenceId).toBe(orgId)

    const listed = await owner.client.get<{ total: number; apiKeys: Array<{ id: string }> }>(`/api-key/list?organizationId=${orgId}`)
    expect(listed.body.total).toBe(1)
    expect(listed.body.apiKeys[0]?.id).toBe(created.body.id)
    expect((await owner.client.get<{ total: number }>('/api-key/list')).body.total).toBe(0)
    expectError(
      await member.client.get(`/api-key/get?id=${created.body.id}`),
      403,
      'INSUFFICIENT_API_KEY_PERMISSIONS',
      'You do not have permission to perform this action on organization API keys.',
    )
    expectError(
      await outsider.client.post('/api-key/delete', { keyId: created.body.id }),
      403,
      'USER_NOT_MEMBER_OF_ORGANIZATION',
      'You are not a member of the organization that owns this API key.',
    )

    // An organization's key is no user's session.
    expectError(
      await new HttpClient(server.base, { origin: null }).get('/get-session', { 'x-api-key': created.body.key }),
      401,
      'INVALID_REFERENCE_ID_FROM_API_KEY',
      'The reference id from the API key is invalid.',
    )
    expect((await owner.client.post('/api-key/delete', { keyId: created.body.id })).body).toEqual({ success: true })
  })
})

describe('counters across a restart', () => {
  it('last use and rate-limit counts kept in memory are written when the server stops', async () => {
    const first = await startTestServer({ keepData: true })
    const p1 = panelFor(first)
    await op(p1, 'apiKey.configure', { patch: { enabled: true, enableSessionForAPIKeys: true } })
    const user = await signUp(first.base)
    const { key, apiKey } = await op<{ key: string; apiKey: { id: string } }>(p1, 'apiKey.create', {
      userId: user.user.id,
      rateLimitMax: 10,
      rateLimitTimeWindow: 600_000,
    })
    for (let i = 0; i < 3; i++) expect((await new HttpClient(first.base).get('/get-session', { 'x-api-key': key })).status).toBe(200)
    const usedAt = first.clock.now()
    await first.close()

    const second = await startTestServer({ dataDir: first.dataDir })
    try {
      const listed = await op<{ keys: Array<{ id: string; requestCount: number; lastRequest: number | null }> }>(
        panelFor(second),
        'apiKey.list',
        {
          userId: user.user.id,
        },
      )
      expect(listed.keys).toEqual([expect.objectContaining({ id: apiKey.id, requestCount: 3, lastRequest: usedAt })])
    } finally {
      await second.close()
    }
  })
})
