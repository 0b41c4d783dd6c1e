import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import type { PanelService } from '../../../server/panel/service.js'
import { panelServiceOf } from '../../helpers/panel-session.js'
import { signUp } from '../../helpers/http.js'
import { serverLog, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Impact before a change that removes names (issue 50 §5): switching off a kind of group name lists
 * the rules that match against group names (SAML apps' allowed groups) which nobody would then pass,
 * before the change is made. Forward auth's rules match on memberships themselves, so they are never listed.
 */

let server: TestServer
let panel: PanelService

const metadata = `<?xml version="1.0"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://wiki.home.arpa/mellon/metadata">
  <SPSSODescriptor AuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://wiki.home.arpa/mellon/postResponse" index="0"/>
  </SPSSODescriptor>
</EntityDescriptor>`

beforeAll(async () => {
  serverLog.allowWarning(/^groups: /)
  server = await startTestServer({
    config: {
      forwardAuth: {
        enabled: true,
        rules: [
          { domain: 'ops.lan', policy: 'signed-in', subject: { organizations: ['impact-acme'], teams: ['ops'] } },
          { domain: 'desk.lan', policy: 'signed-in', subject: { roles: ['helpdesk'] } },
        ],
      },
      admin: { roles: { helpdesk: { user: ['list'] }, auditor: { user: ['list'] }, unnamed: { user: ['list'] } } },
      ldap: { searchRoles: ['admin', 'helpdesk', 'auditor'] },
      twoFactor: { enforcement: { roles: ['auditor'] } },
      organization: { roles: { reviewer: { team: ['update'] }, spare: { team: ['update'] } } },
    },
  })
  panel = panelServiceOf(server)
  await createServiceProvider(
    server.gatehouse.ctx,
    {
      metadataXml: metadata,
      name: 'Wiki',
      nameIdFormat: 'email',
      allowedGroups: ['impact-acme/ops', 'impact-acme:owner', 'admin', 'impact-acme'],
    },
    { via: 'cli' },
  )
  await createServiceProvider(
    server.gatehouse.ctx,
    {
      metadataXml: metadata.replaceAll('wiki.home.arpa', 'desk.home.arpa'),
      name: 'Desk',
      nameIdFormat: 'email',
      allowedGroups: ['helpdesk'],
    },
    { via: 'cli' },
  )
})
afterAll(() => server?.close())

async function impact(patch: Record<string, boolean>): Promise<Array<{ where: string; name: string; problem: string }>> {
  const result = await panel.dispatch('groups.impact', { patch })
  if (!result.ok) throw new Error(result.error.message)
  return result.data as Array<{ where: string; name: string; problem: string }>
}

describe('groups.impact: what switching off a kind of group name takes away', () => {
  it('team groups off: the SAML app naming a team is listed, the forward-auth rule naming the same team is not', async () => {
    expect(await impact({ teams: false })).toEqual([
      {
        where: 'SAML app "Wiki"',
        name: 'impact-acme/ops',
        problem: 'a team group: with team groups off nobody holds it, so it lets no one in',
      },
    ])
  })

  it('each switch names its own kind: member roles, roles, organizations; several at once', async () => {
    expect((await impact({ memberRoles: false })).map((entry) => entry.name)).toEqual(['impact-acme:owner'])
    expect((await impact({ roles: false })).map((entry) => entry.name)).toEqual(['admin', 'helpdesk'])
    expect((await impact({ organizations: false })).map((entry) => entry.name)).toEqual(['impact-acme'])
    expect((await impact({ teams: false, roles: false })).map((entry) => entry.name)).toEqual(['impact-acme/ops', 'admin', 'helpdesk'])
  })

  it('a switch turned on, or one already off, takes nothing away', async () => {
    expect(await impact({ teams: true })).toEqual([])
    const off = await panel.dispatch('groups.configure', { patch: { teams: false } })
    expect(off.ok).toBe(true)
    try {
      expect(await impact({ teams: false })).toEqual([])
      expect(await impact({ teams: true })).toEqual([])
    } finally {
      await panel.dispatch('groups.configure', { patch: { teams: true } })
    }
  })

  it('refuses a key that is not a switch', async () => {
    const result = await panel.dispatch('groups.impact', { patch: { everything: false } })
    expect(result.ok).toBe(false)
  })
})

async function organizationImpact(change: Record<string, unknown>): Promise<Array<{ where: string; name: string; problem: string }>> {
  const result = await panel.dispatch('groups.organizationImpact', change)
  if (!result.ok) throw new Error(result.error.message)
  return result.data as Array<{ where: string; name: string; problem: string }>
}

describe('groups.organizationImpact: what deleting or renaming an organization or a team takes away', () => {
  let organizationId = ''
  let teamId = ''
  let otherTeamId = ''
  beforeAll(async () => {
    const owner = await signUp(server.base, { name: 'Impact Owner' })
    const created = await panel.dispatch('orgs.create', { name: 'Impact Acme', slug: 'impact-acme', ownerUserId: owner.user.id })
    if (!created.ok) throw new Error(created.error.message)
    organizationId = (created.data as { organization: { id: string } }).organization.id
    const team = async (name: string) => {
      const made = await panel.dispatch('orgs.createTeam', { organizationId, name })
      if (!made.ok) throw new Error(made.error.message)
      return (made.data as { team: { id: string } }).team.id
    }
    teamId = await team('Ops')
    otherTeamId = await team('Support')
  })

  const names = (found: Array<{ where: string; name: string }>) => found.map(({ where, name }) => `${where}: ${name}`).sort()

  it('deleting the organization lists every rule naming it, its member roles or its teams: forward auth by membership and SAML apps', async () => {
    const found = await organizationImpact({ organizationId, remove: true })
    expect(names(found.filter((f) => f.where.startsWith('SAML')))).toEqual([
      'SAML app "Wiki": impact-acme',
      'SAML app "Wiki": impact-acme/ops',
      'SAML app "Wiki": impact-acme:owner',
    ])
    // The forward-auth rule names the organization and its team: both go with it.
    expect(
      found
        .filter((f) => f.where.startsWith('forwardAuth'))
        .map((f) => f.name)
        .sort(),
    ).toEqual(['impact-acme', 'impact-acme/ops'])
    expect(found[0]?.problem).toBe('deleting the organization takes this name away: nobody will hold it, so it lets no one in')
    // Asking changes nothing.
    const still = await panel.dispatch('orgs.get', { organizationId })
    expect(still.ok).toBe(true)
  })

  it('a new slug takes the same names away; the same slug, or a new name alone, takes nothing', async () => {
    const renamed = await organizationImpact({ organizationId, slug: 'acme-two' })
    expect(renamed.map((f) => f.name).sort()).toEqual(
      (await organizationImpact({ organizationId, remove: true })).map((f) => f.name).sort(),
    )
    expect(renamed[0]?.problem).toBe('changing its slug to "acme-two" takes this name away: nobody will hold it, so it lets no one in')
    expect(await organizationImpact({ organizationId, slug: 'impact-acme' })).toEqual([])
    expect(await organizationImpact({ organizationId })).toEqual([])
  })

  it('deleting or renaming a team lists the rules naming that team only; a rename to the same slug takes nothing', async () => {
    const removed = await organizationImpact({ organizationId, teamId, remove: true })
    expect(removed.map((f) => f.name)).toEqual(removed.map(() => 'impact-acme/ops'))
    expect(removed.map((f) => f.where).some((w) => w.startsWith('SAML'))).toBe(true)
    expect(removed.map((f) => f.where).some((w) => w.startsWith('forwardAuth'))).toBe(true)
    expect(removed[0]?.problem).toBe('deleting the team takes this name away: nobody will hold it, so it lets no one in')
    expect((await organizationImpact({ organizationId, teamId, teamName: 'Operations' })).length).toBe(removed.length)
    expect(await organizationImpact({ organizationId, teamId, teamName: 'OPS' })).toEqual([])
    // A team no rule names.
    expect(await organizationImpact({ organizationId, teamId: otherTeamId, remove: true })).toEqual([])
    // A team of another organization, or none, is nobody's.
    expect(await organizationImpact({ organizationId: 'no-such-org', remove: true })).toEqual([])
  })
})

async function roleImpact(change: Record<string, unknown>): Promise<Array<{ where: string; name: string; problem: string }>> {
  const result = await panel.dispatch('groups.roleImpact', change)
  if (!result.ok) throw new Error(result.error.message)
  return result.data as Array<{ where: string; name: string; problem: string }>
}

describe('groups.roleImpact: what removing or renaming a role takes away', () => {
  const all = { helpdesk: { user: ['list'] }, auditor: { user: ['list'] }, unnamed: { user: ['list'] } }
  const without = (...roles: string[]) => Object.fromEntries(Object.entries(all).filter(([role]) => !roles.includes(role)))
  const places = (found: Array<{ where: string; name: string }>) => found.map(({ where, name }) => `${where}: ${name}`).sort()

  it('removing a role lists the forward-auth rule, the SAML app and the LDAP search roles that name it', async () => {
    const found = await roleImpact({ roles: without('helpdesk') })
    expect(places(found)).toEqual([
      'SAML app "Desk": helpdesk',
      'forwardAuth.rules[1].subject.roles: helpdesk',
      'ldap.searchRoles: helpdesk',
    ])
    expect(found.find((f) => f.where.startsWith('forwardAuth'))?.problem).toBe(
      'removing the role "helpdesk" takes this name away: nobody can be given it any more, so only those who hold it now meet this rule',
    )
    expect(found.find((f) => f.where === 'ldap.searchRoles')?.problem).toContain('the save is refused until it is taken out')
    // Asking changes nothing.
    expect(Object.keys(server.gatehouse.ctx.config().admin.roles)).toContain('helpdesk')
  })

  it('a rename takes the old name away; two-factor enforcement names a role too', async () => {
    const { auditor, ...rest } = all
    expect(places(await roleImpact({ roles: { ...rest, reviewer: auditor } }))).toEqual([
      'ldap.searchRoles: auditor',
      'twoFactor.enforcement.roles: auditor',
    ])
  })

  it('a role nothing names, an edit that removes no role, and a built-in role kept by its default are not listed', async () => {
    expect(await roleImpact({ roles: without('unnamed') })).toEqual([])
    expect(await roleImpact({ roles: all })).toEqual([])
    expect(await roleImpact({ roles: { ...all, extra: { user: ['list'] } } })).toEqual([])
    // Overriding the built-in admin and dropping the override: admin is still a role.
    expect(await roleImpact({ roles: { ...all, admin: { user: ['list'] } } })).toEqual([])
  })

  it('removing an organization role lists the SAML apps naming it as a member role, in any organization', async () => {
    await createServiceProvider(
      server.gatehouse.ctx,
      {
        metadataXml: metadata.replaceAll('wiki.home.arpa', 'review.home.arpa'),
        name: 'Review',
        nameIdFormat: 'email',
        allowedGroups: ['impact-acme:reviewer', 'impact-acme/reviewer', 'reviewer'],
      },
      { via: 'cli' },
    )
    const found = await roleImpact({ organizationRoles: { spare: { team: ['update'] } } })
    expect(places(found)).toEqual(['SAML app "Review": impact-acme:reviewer'])
    expect(found[0]?.problem).toBe(
      'removing the organization role "reviewer" takes this name away: nobody can be given it any more, so only those who hold it now meet this rule',
    )
    expect(await roleImpact({ organizationRoles: { reviewer: { team: ['update'] } } })).toEqual([])
  })
})
