import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { insertOrganization } from '../../../server/features/organization/store.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { rawRequest, signUp } from '../../helpers/http.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { serverLog, silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 37 §0: an organization slug is a group name (forward auth's Remote-Groups, the OIDC groups
 * claim), so it is lower-case letters, digits and hyphens only and never a role's name; a role may
 * not be declared with an organization's slug; slugs stored before the rule are reported at
 * start-up and in the panel. Every way in: create, update, check-slug over HTTP, the panel's
 * create and rename, the config at start-up and in the panel.
 */

let server: TestServer
let panel: PanelService
let tag = 0
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${tag++}`

beforeAll(async () => {
  server = await startTestServer({
    config: {
      admin: { roles: { support: { user: ['list'] } } },
      forwardAuth: { enabled: true, rules: [{ domain: 'app.lan', policy: 'signed-in' }] },
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
afterAll(() => server?.close())

async function failure(op: string, input: unknown) {
  const result = await panel.dispatch(op, input)
  if (result.ok) throw new Error(`${op} succeeded`)
  return result.error
}

async function ok<T>(op: string, input: unknown): Promise<T> {
  const result = await panel.dispatch(op, input)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

const INVALID = {
  status: 400,
  body: { code: 'INVALID_ORGANIZATION_SLUG', message: 'Organization slug may contain only lower-case letters, digits and hyphens' },
}
const ROLE = { status: 400, body: { code: 'ORGANIZATION_SLUG_IS_A_ROLE_NAME', message: 'Organization slug is the name of a role' } }

// Every collision and every character that could forge or fold a group name.
const REFUSED: Array<[string, typeof INVALID | typeof ROLE]> = [
  ['admin', ROLE],
  ['user', ROLE],
  ['support', ROLE], // declared in admin.roles
  ['Admin', INVALID],
  ['ADMIN', INVALID],
  ['Acme', INVALID],
  ['gatehouse:admin', INVALID],
  ['acme/admin', INVALID],
  ['admin,user', INVALID],
  ['acme admin', INVALID],
  ['acme_corp', INVALID],
  ['acme.corp', INVALID],
  [' admin', INVALID],
  ['admin\n', INVALID],
  ['ädmin', INVALID],
]

describe('organization slugs: lower-case letters, digits and hyphens, never a role name', () => {
  it.each(REFUSED)('create, check-slug and update refuse %j', async (slug, expected) => {
    const owner = await signUp(server.base)
    const created = await owner.client.post('/organization/create', { name: 'Forged', slug })
    expect({ status: created.status, body: created.body }).toEqual(expected)
    const checked = await owner.client.post('/organization/check-slug', { slug })
    expect({ status: checked.status, body: checked.body }).toEqual(expected)

    const good = unique('good')
    const org = await owner.client.post<{ id: string }>('/organization/create', { name: 'Good', slug: good })
    expect(org.status).toBe(200)
    const updated = await owner.client.post('/organization/update', { organizationId: org.body.id, data: { slug } })
    expect({ status: updated.status, body: updated.body }).toEqual(expected)
    const after = await owner.client.get<{ slug: string }>(`/organization/get-full-organization?organizationId=${org.body.id}`)
    expect(after.body.slug).toBe(good)
  })

  it('accepts lower-case letters, digits and hyphens; a role name inside a slug is fine', async () => {
    const owner = await signUp(server.base)
    for (const slug of [unique('admin-team'), unique('9lives'), unique('user-1')]) {
      const created = await owner.client.post<{ slug: string }>('/organization/create', { name: 'Fine', slug })
      expect(created.status).toBe(200)
      expect(created.body.slug).toBe(slug)
    }
  })

  it('the panel refuses the same slugs on create and rename, on the slug field', async () => {
    const owner = await signUp(server.base)
    expect(await failure('orgs.create', { name: 'Forged', slug: 'admin', ownerUserId: owner.user.id })).toMatchObject({
      code: 'ORGANIZATION_SLUG_IS_A_ROLE_NAME',
      field: 'slug',
    })
    expect(await failure('orgs.create', { name: 'Forged', slug: 'gatehouse:admin', ownerUserId: owner.user.id })).toMatchObject({
      code: 'INVALID_ORGANIZATION_SLUG',
      field: 'slug',
    })
    const { organization } = await ok<{ organization: { id: string } }>('orgs.create', {
      name: 'Panel',
      slug: unique('panel'),
      ownerUserId: owner.user.id,
    })
    expect(await failure('orgs.update', { organizationId: organization.id, name: 'Panel', slug: 'Support' })).toMatchObject({
      code: 'INVALID_ORGANIZATION_SLUG',
      field: 'slug',
    })
    expect(await failure('orgs.update', { organizationId: organization.id, name: 'Panel', slug: 'support' })).toMatchObject({
      code: 'ORGANIZATION_SLUG_IS_A_ROLE_NAME',
      field: 'slug',
    })
  })

  it('a user who tries to create the organization "admin" is never sent as the group admin (forward auth)', async () => {
    const mallory = await verifiedSignUp(server)
    for (const slug of ['admin', 'Admin', 'admin,user']) {
      expect((await mallory.client.post('/organization/create', { name: 'Admins', slug })).status).toBe(400)
    }
    const answer = await rawRequest(`${server.base}/forward-auth/auth-request`, {
      headers: { 'x-original-url': 'https://app.lan/', cookie: mallory.client.jar.header() },
    })
    expect(answer.status).toBe(200)
    expect(answer.headers['remote-groups']).toBe('user')
  })
})

describe('roles and organizations in the configuration', () => {
  it('the panel refuses a role declared with an organization’s slug, naming both', async () => {
    const owner = await signUp(server.base)
    const slug = unique('billing')
    const org = await owner.client.post<{ id: string }>('/organization/create', { name: 'Billing Dept', slug })
    expect(org.status).toBe(200)
    // `support` is declared at start-up (above); the panel adds to the roles, it cannot restate that one.
    const patch = { admin: { roles: { [slug]: { user: ['list'] } } } }
    const validated = await ok<{ valid: boolean; issues: Array<{ path: string; message: string }> }>('settings.validate', { patch })
    expect(validated.valid).toBe(false)
    expect(validated.issues[0]?.path).toBe(`admin.roles.${slug}`)
    expect(validated.issues[0]?.message).toContain(`the role "${slug}" is the slug of the organization "Billing Dept" (${org.body.id})`)
    const refused = await failure('settings.update', { patch })
    expect(refused).toMatchObject({ code: 'INVALID_CONFIG' })
    expect(refused.message).toContain(`admin.roles.${slug}: the role "${slug}"`)
    expect(Object.keys(server.gatehouse.ctx.config().admin.roles)).toEqual(['support'])
    // Any other role name is fine.
    await ok('settings.update', { patch: { admin: { roles: { auditor: { user: ['list'] } } } } })
    expect(Object.keys(server.gatehouse.ctx.config().admin.roles).sort()).toEqual(['auditor', 'support'])
    await ok('settings.update', { patch: { admin: { roles: { auditor: null } } } })
  })

  it('at start-up: a declared role named like an organization refuses to start; stored slugs breaking the rule are one warning each', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-slugs-'))
    try {
      const first = await startTestServer({ dataDir, keepData: true })
      const owner = await signUp(first.base)
      const ops = await owner.client.post<{ id: string }>('/organization/create', { name: 'Ops', slug: 'ops' })
      expect(ops.status).toBe(200)
      // Stored before the rule existed (written past it, as an older version did).
      const now = new Date(first.clock.now())
      const legacy: Array<[string, string]> = [
        ['legacy-admin', 'admin'],
        ['legacy-colon', 'gatehouse:admin'],
      ]
      for (const [id, slug] of legacy) {
        await insertOrganization(first.gatehouse.ctx, { id, name: `Legacy ${slug}`, slug, logo: null, metadata: null, createdAt: now })
      }
      await first.close()

      // The refused start also warns about the slug itself (its start hooks ran before the listener).
      serverLog.allowWarning(/organization "Ops" \(.*\) has the slug "ops", which is the name of a role/)
      await expect(startTestServer({ dataDir, keepData: true, config: { admin: { roles: { ops: { user: ['list'] } } } } })).rejects.toThrow(
        `configuration: admin.roles.ops: the role "ops" is the slug of the organization "Ops" (${ops.body.id}): rename the organization's slug`,
      )

      serverLog.allowWarning(/organization "Legacy admin" \(legacy-admin\) has the slug "admin"/)
      serverLog.allowWarning(/organization "Legacy gatehouse:admin" \(legacy-colon\) has the slug "gatehouse:admin"/)
      silentLogger.warnings.length = 0
      const second = await startTestServer({ dataDir, keepData: true })
      try {
        await expect
          .poll(() => silentLogger.warnings.filter((w) => w.startsWith('organization "Legacy')))
          .toEqual([
            'organization "Legacy admin" (legacy-admin) has the slug "admin", which is the name of a role, so its members would be sent as members of that group: rename it in the panel (Organizations → Legacy admin → Slug) or with POST /organization/update {"organizationId":"legacy-admin","data":{"slug":"…"}}',
            'organization "Legacy gatehouse:admin" (legacy-colon) has the slug "gatehouse:admin", which may contain only lower-case letters, digits and hyphens: rename it in the panel (Organizations → Legacy gatehouse:admin → Slug) or with POST /organization/update {"organizationId":"legacy-colon","data":{"slug":"…"}}',
          ])
        // The panel says so on the list and in the drawer; a rename to a good slug clears it.
        const secondPanel = createPanelService({
          gatehouse: second.gatehouse,
          apiURL: () => second.base,
          mode: 'browser',
          version: 'test',
          startedAt: Date.now(),
          logger: silentLogger,
        })
        const list = await secondPanel.dispatch('orgs.list', { search: 'legacy' })
        if (!list.ok) throw new Error(list.error.message)
        const rows = (list.data as { organizations: Array<{ id: string; slugProblem: string | null }> }).organizations
        expect(rows.find((r) => r.id === 'legacy-admin')?.slugProblem).toContain('is the name of a role')
        expect(rows.find((r) => r.id === 'legacy-colon')?.slugProblem).toContain('may contain only lower-case letters')
        // A name edit that keeps the old slug is allowed; a rename to a valid slug clears the notice.
        const kept = await secondPanel.dispatch('orgs.update', { organizationId: 'legacy-admin', name: 'Legacy Admins', slug: 'admin' })
        expect(kept.ok).toBe(true)
        const renamed = await secondPanel.dispatch('orgs.update', {
          organizationId: 'legacy-admin',
          name: 'Legacy Admins',
          slug: 'former-admins',
        })
        if (!renamed.ok) throw new Error(renamed.error.message)
        expect((renamed.data as { organization: { slugProblem: string | null } }).organization.slugProblem).toBeNull()
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
