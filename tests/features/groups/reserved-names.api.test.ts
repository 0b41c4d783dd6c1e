import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import type { PanelService } from '../../../server/panel/service.js'
import { signUp } from '../../helpers/http.js'
import { panelServiceOf } from '../../helpers/panel-session.js'
import { serverLog, silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Names no one can claim (issue 47 §3): an organization a rule names (a forward-auth rule, a SAML
 * app's allowed groups) is reserved, so the first user to create it does not pass that rule; a name
 * nobody holds yet is a warning at start and in the panel.
 */

let server: TestServer
let panel: PanelService
const PASSWORD = 'correct horse battery'
const RESERVED = { code: 'ORGANIZATION_SLUG_RESERVED', message: 'Organization slug is reserved by the server configuration' }

beforeAll(async () => {
  serverLog.allowWarning(/^groups: /)
  server = await startTestServer({
    config: {
      forwardAuth: {
        enabled: true,
        rules: [
          { domain: 'ops.lan', policy: 'signed-in', subject: { organizations: ['claim-acme'], teams: ['ops'] } },
          { domain: 'sre.lan', policy: 'signed-in', subject: { teams: ['claim-beta/Release Ops'] } },
        ],
      },
    },
  })
  panel = panelServiceOf(server)
})
afterAll(() => server?.close())

async function nameProblems(): Promise<Array<{ where: string; name: string; problem: string }>> {
  const result = await panel.dispatch('groups.nameProblems', {})
  if (!result.ok) throw new Error(result.error.message)
  return result.data as Array<{ where: string; name: string; problem: string }>
}

const plainUser = () => signUp(server.base, { password: PASSWORD })

describe('names no one can claim', () => {
  it('start-up warns once for each name the rules require that no organization holds', () => {
    const lines = silentLogger.warnings.filter((line) => line.startsWith('groups: '))
    expect(lines).toContain(
      'groups: forwardAuth.rules[0].subject.organizations requires "claim-acme": no organization "claim-acme" exists yet; the slug is reserved, so only an administrator can create it (Organizations → New)',
    )
    expect(lines).toContain(
      'groups: forwardAuth.rules[0].subject.teams requires "claim-acme/ops": no organization "claim-acme" exists yet; the slug is reserved, so only an administrator can create it (Organizations → New)',
    )
    expect(lines.filter((line) => line.includes('"claim-beta/Release Ops"'))).toHaveLength(1)
  })

  it('a plain user cannot create, check or rename to a reserved slug; an administrator can create it', async () => {
    const user = await plainUser()
    const created = await user.client.post('/organization/create', { name: 'Acme', slug: 'claim-acme' })
    expect(created.status).toBe(403)
    expect(created.body).toEqual(RESERVED)
    const checked = await user.client.post('/organization/check-slug', { slug: 'claim-acme' })
    expect(checked.status).toBe(403)
    expect(checked.body).toEqual(RESERVED)
    const own = await user.client.post<{ id: string }>('/organization/create', { name: 'Mine', slug: 'claim-mine' })
    expect(own.status).toBe(200)
    const renamed = await user.client.post('/organization/update', { organizationId: own.body.id, data: { slug: 'claim-beta' } })
    expect(renamed.status).toBe(403)
    expect(renamed.body).toEqual(RESERVED)

    const admin = await plainUser()
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
    expect((await admin.client.post('/organization/check-slug', { slug: 'claim-acme' })).status).toBe(200)
    expect((await admin.client.post('/organization/create', { name: 'Acme', slug: 'claim-acme' })).status).toBe(200)
    // Still reserved once it exists (the slug of a deleted one must not fall to a plain user either).
    expect((await user.client.post('/organization/create', { name: 'Acme', slug: 'claim-acme' })).body).toEqual(RESERVED)
    expect((await admin.client.post('/organization/create', { name: 'Acme', slug: 'claim-acme' })).body).toMatchObject({
      code: 'ORGANIZATION_ALREADY_EXISTS',
    })
  })

  it("a SAML app's allowed groups reserve their organizations too (stored apps, read when asked)", async () => {
    const user = await plainUser()
    expect((await user.client.post('/organization/create', { name: 'Wiki', slug: 'claim-wiki' })).status).toBe(200)
    const metadata = `<?xml version="1.0"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://wiki.home.arpa/mellon/metadata">
  <SPSSODescriptor AuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://wiki.home.arpa/mellon/postResponse" index="0"/>
  </SPSSODescriptor>
</EntityDescriptor>`
    await createServiceProvider(
      server.gatehouse.ctx,
      { metadataXml: metadata, name: 'Family wiki', nameIdFormat: 'email', allowedGroups: ['claim-family:owner', 'admin'] },
      { via: 'cli' },
    )
    const refused = await user.client.post('/organization/create', { name: 'Family', slug: 'claim-family' })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual(RESERVED)
    // `admin` is a role, not an organization: nothing to reserve or report.
    expect((await nameProblems()).filter((p) => p.where === 'SAML app "Family wiki"')).toEqual([
      {
        where: 'SAML app "Family wiki"',
        name: 'claim-family:owner',
        problem:
          'no organization "claim-family" exists yet; the slug is reserved, so only an administrator can create it (Organizations → New)',
      },
    ])
  })

  it('the panel lists each missing organization or team beside where it is named, and forgets it once created', async () => {
    const admin = await plainUser()
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
    const beta = await admin.client.post<{ id: string }>('/organization/create', { name: 'Beta', slug: 'claim-beta' })
    expect(beta.status).toBe(200)
    const forSre = () => nameProblems().then((list) => list.filter((p) => p.where.startsWith('forwardAuth.rules[1]')))
    expect(await forSre()).toEqual([
      {
        where: 'forwardAuth.rules[1].subject.teams',
        name: 'claim-beta/Release Ops',
        problem: 'the organization "claim-beta" has no team "release-ops"',
      },
    ])
    const team = await admin.client.post('/organization/create-team', { name: 'Release Ops', organizationId: beta.body.id })
    expect(team.status).toBe(200)
    // The team exists; the rule still names it by its display name, which matches and is pointed out.
    expect(await forSre()).toEqual([
      {
        where: 'forwardAuth.rules[1].subject.teams',
        name: 'claim-beta/Release Ops',
        problem: 'names a team by its display name; team groups are now "claim-beta/release-ops": write that',
      },
    ])
  })
})
