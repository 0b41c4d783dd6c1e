import { createAuthClient } from 'better-auth/client'
import { organizationClient } from 'better-auth/client/plugins'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addMember } from '../../../server/features/organization/members.js'
import { systemActor } from '../../../server/features/organization/shared.js'
import { listTeamsWithCounts } from '../../../server/features/organization/store.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { jarFetch, signUp, uniqueEmail } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 31 §3: the panel's organization list showed 0 members for every organization, since the
 * count's correlated subquery compared member.organization_id with its own (unqualified) id.
 * Runs on both engines (the `sqlite` and `postgres` projects).
 */

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer({ config: { organization: { teams: { enabled: true } } } })
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

async function ok<T>(op: string, input: unknown): Promise<T> {
  const result = await panel.dispatch(op, input)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

async function person() {
  const signed = await signUp(server.base, { email: uniqueEmail('count') })
  const client = createAuthClient({
    baseURL: server.origin,
    plugins: [organizationClient({ teams: { enabled: true } })],
    fetchOptions: { customFetchImpl: jarFetch(server.origin, signed.client.jar) },
  })
  return { id: signed.user.id, client }
}

describe('organization member counts', () => {
  it('the panel list counts each organization’s members, and teams count theirs', async () => {
    const tag = `cnt${Date.now().toString(36)}`
    const [a, b, c, d, e] = [await person(), await person(), await person(), await person(), await person()]
    const big = await a.client.organization.create({ name: `${tag} Big`, slug: `${tag}-big` })
    const small = await e.client.organization.create({ name: `${tag} Small`, slug: `${tag}-small` })
    const empty = await ok<{ organization: { id: string; members: number } }>('orgs.create', {
      name: `${tag} Solo`,
      slug: `${tag}-solo`,
      ownerUserId: e.id,
    })
    const bigId = big.data?.id as string
    const smallId = small.data?.id as string
    expect(bigId && smallId).toBeTruthy()
    expect(empty.organization.members).toBe(1)

    const ctx = server.gatehouse.ctx
    for (const p of [b, c, d]) await addMember(ctx, systemActor(), { organizationId: bigId, userId: p.id, role: 'member' })

    const listed = await ok<{ organizations: Array<{ slug: string; members: number }>; total: number }>('orgs.list', { search: tag })
    expect(listed.total).toBe(3)
    expect(Object.fromEntries(listed.organizations.map((o) => [o.slug, o.members]))).toEqual({
      [`${tag}-big`]: 4,
      [`${tag}-small`]: 1,
      [`${tag}-solo`]: 1,
    })
    // The drawer (one organization) agrees with the list.
    const detail = await ok<{ organization: { members: number }; members: unknown[] }>('orgs.get', { organizationId: bigId })
    expect([detail.organization.members, detail.members.length]).toEqual([4, 4])

    // Teams: the same correlated count, per team.
    const team = await a.client.organization.createTeam({ name: 'Ops', organizationId: bigId })
    const teamId = team.data?.id as string
    for (const p of [b, c]) {
      const added = await a.client.organization.addTeamMember({ teamId, userId: p.id })
      expect(added.error).toBeNull()
    }
    const counts = Object.fromEntries((await listTeamsWithCounts(ctx, bigId)).map((t) => [t.name, t.memberCount]))
    expect(counts.Ops).toBe(2)
  })
})
