import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import type { PanelService } from '../../../server/panel/service.js'
import { panelServiceOf } from '../../helpers/panel-session.js'
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
        rules: [{ domain: 'ops.lan', policy: 'signed-in', subject: { organizations: ['impact-acme'], teams: ['ops'] } }],
      },
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
    expect((await impact({ roles: false })).map((entry) => entry.name)).toEqual(['admin'])
    expect((await impact({ organizations: false })).map((entry) => entry.name)).toEqual(['impact-acme'])
    expect((await impact({ teams: false, roles: false })).map((entry) => entry.name)).toEqual(['impact-acme/ops', 'admin'])
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
