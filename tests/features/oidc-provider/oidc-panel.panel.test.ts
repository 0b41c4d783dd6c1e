import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { connectedApps, rememberConsent } from '../../../server/features/oidc-provider/consent.js'
import { findClient } from '../../../server/features/oidc-provider/store.js'
import { createServiceProvider, removeServiceProvider } from '../../../server/features/saml/service-providers.js'
import { axe } from '../../helpers/axe.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'

/** The Single sign-on view in real Chromium against the real server: switch, recipe, secret once, delete. */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

const clientCredentials = (clientId: string, secret: string) =>
  fetch(`${h.server.base}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  })

describe('Single sign-on view', () => {
  it('switches the provider on, registers Grafana from its recipe, shows the secret once with the text to paste, deletes it', {
    timeout: 60_000,
  }, async () => {
    await open('sso', 'Single sign-on')
    await page.getByTestId('oidc-enabled').click()
    await expect.poll(async () => (await fetch(`${h.server.base}/.well-known/openid-configuration`)).status).toBe(200)
    // The group names (the one rule, groups.*) and the lifetimes are edited here too, live.
    await page.getByTestId('oidc-groups-roles').click()
    await expect.poll(() => h.server.gatehouse.config.get().groups.roles).toBe(false)
    await page.getByTestId('oidc-groups-roles').click()
    await expect.poll(() => h.server.gatehouse.config.get().groups.roles).toBe(true)
    // Lifetimes are durations, saved together after a review (issue 31 §3).
    const before = h.server.gatehouse.config.get().oidcProvider.ttl.accessToken
    await page.getByTestId('oidc-ttl-accessToken').fill('900')
    await page.getByTestId('oidc-ttl-accessToken').blur()
    await page.getByText('15m 0s').first().waitFor()
    expect(h.server.gatehouse.config.get().oidcProvider.ttl.accessToken).toBe(before)
    await page.getByTestId('oidc-ttl-save').click()
    expect(before).toBe(3600)
    await expect.poll(() => page.getByTestId('oidc-ttl-review').textContent()).toContain('Access token: 3600 s (1h 0m) → 900 s (15m 0s)')
    await page.getByTestId('oidc-ttl-confirm').click()
    await expect.poll(() => h.server.gatehouse.config.get().oidcProvider.ttl.accessToken).toBe(900)
    await page.getByText('Token lifetimes saved').first().waitFor()

    await page.getByTestId('oidc-recipe').click()
    await page.getByRole('option', { name: 'Grafana' }).click()
    expect(await page.getByTestId('oidc-name').inputValue()).toBe('Grafana')
    expect(await page.getByTestId('oidc-redirect-uris').inputValue()).toBe('APP/login/generic_oauth')
    // APP is a placeholder: the server refuses it and says so beside the field.
    await page.getByTestId('oidc-create').click()
    await page.getByText('Redirect URI must be an absolute URI without a fragment (http(s) or a custom scheme)').waitFor()
    await page.getByTestId('oidc-redirect-uris').fill('https://grafana.example.com/login/generic_oauth')
    // The ID token algorithm and the resource-server switch are chosen here too.
    await page.getByTestId('oidc-id-token-alg').click()
    await page.getByRole('option', { name: 'ES256' }).click()
    await page.getByTestId('oidc-resource-server').click()
    await page.getByTestId('oidc-create').click()

    const clientId = ((await page.getByTestId('oidc-new-client-id').textContent()) ?? '').trim()
    const secret = ((await page.getByTestId('oidc-new-client-secret').textContent()) ?? '').trim()
    expect(clientId).toMatch(/^[a-z0-9]{24}$/)
    expect(secret).toMatch(/^[A-Za-z0-9]{43}$/)
    const dialog = await page.getByRole('dialog').textContent()
    expect(dialog).toContain(`client_id = ${clientId}`)
    expect(dialog).toContain(`auth_url = ${h.server.base}/oauth2/authorize`)
    expect((await clientCredentials(clientId, secret)).status).toBe(200)
    await page.getByRole('button', { name: 'Done' }).click()
    await page.getByTestId('oidc-clients').waitFor()
    expect(await page.content()).not.toContain(secret)
    expect(await findClient(h.server.gatehouse.ctx, clientId)).toMatchObject({ idTokenSignedResponseAlg: 'ES256', resourceServer: true })
    // …and changed in place in the list.
    await page.getByTestId(`oidc-rs-${clientId}`).click()
    await expect.poll(async () => (await findClient(h.server.gatehouse.ctx, clientId))?.resourceServer).toBe(false)
    // Toasts sit bottom right, over the list's last row, and each change here raises one: this part
    // of the test is about the list, so they are hidden from here on.
    await page.addStyleTag({ content: '.mantine-Notifications-root { display: none !important; }' })
    await page.getByTestId(`oidc-alg-${clientId}`).click()
    await page.getByRole('option', { name: 'EdDSA' }).click()
    await expect.poll(async () => (await findClient(h.server.gatehouse.ctx, clientId))?.idTokenSignedResponseAlg).toBe('EdDSA')

    // Access: only members of a chosen organization may sign in to the client.
    const owner = await verifiedSignUp(h.server)
    const org = await owner.client.post<{ id: string }>('/organization/create', { name: 'Grafana Users', slug: 'grafana-users' })
    expect(org.status).toBe(200)
    await page.getByTestId('oidc-clients').getByRole('button', { name: 'Access' }).click()
    await page.getByTestId('oidc-allowed-orgs').click()
    await page.getByRole('option', { name: 'Grafana Users (grafana-users)' }).click()
    await page.keyboard.press('Escape') // closes the options list, which covers the Save button
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click()
    await expect.poll(async () => (await findClient(h.server.gatehouse.ctx, clientId))?.allowedOrganizations).toEqual([org.body.id])
    await page.getByTestId('oidc-clients').getByText('restricted').waitFor()

    await page.getByTestId('oidc-clients').getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
    await expect.poll(() => page.getByTestId('oidc-clients').count()).toBe(0)
    expect((await clientCredentials(clientId, secret)).status).toBe(401)
  })

  it('the Users drawer lists a person’s connected apps and revokes one', { timeout: 60_000 }, async () => {
    const ctx = h.server.gatehouse.ctx
    const person = await verifiedSignUp(h.server)
    const { client } = await createClient(ctx, { name: 'Nextcloud', redirectUris: ['https://cloud.example.com/cb'] }, { via: 'cli' })
    await rememberConsent(ctx, {
      userId: person.user.id,
      clientId: client.clientId,
      scopes: ['openid', 'email'],
      claims: [],
      grantId: 'none',
    })
    await open('users', 'Users')
    await page.getByTestId(`user-row-${person.email}`).click()
    await page.getByTestId('user-drawer').waitFor()
    await page.getByRole('tab', { name: 'Connected apps' }).click()
    const table = page.getByTestId('user-connected-apps')
    await table.getByText('Nextcloud').waitFor()
    await table.getByText('email', { exact: true }).waitFor()
    await table.getByRole('button', { name: 'Revoke' }).click()
    await page
      .getByRole('dialog', { name: `Revoke Nextcloud for ${person.email}` })
      .getByRole('button', { name: 'Revoke' })
      .click()
    await expect.poll(async () => (await connectedApps(ctx, person.user.id)).length).toBe(0)
    await page.getByText('No application is connected to this account.').waitFor()
  })

  it('switching off team groups while a SAML app names a team asks first, listing it (issue 50 §5)', { timeout: 60_000 }, async () => {
    const ctx = h.server.gatehouse.ctx
    const metadata = `<?xml version="1.0"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://impact.home.arpa/mellon/metadata">
  <SPSSODescriptor AuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://impact.home.arpa/mellon/postResponse" index="0"/>
  </SPSSODescriptor>
</EntityDescriptor>`
    const sp = await createServiceProvider(
      ctx,
      { metadataXml: metadata, name: 'Ops wiki', nameIdFormat: 'email', allowedGroups: ['impact-ops/oncall'] },
      { via: 'cli' },
    )
    try {
      await open('sso', 'Single sign-on')
      await page.getByTestId('oidc-groups-teams').click()
      const dialog = page.getByTestId('groups-impact')
      await dialog.getByText('SAML app "Ops wiki"').waitFor()
      await dialog.getByText('impact-ops/oncall').waitFor()
      expect(await axe(page)).toEqual([])
      // Nothing changes until the admin confirms; keeping it on leaves the rule as it was.
      expect(h.server.gatehouse.config.get().groups.teams).toBe(true)
      await page.getByRole('button', { name: 'Keep it on' }).click()
      await dialog.waitFor({ state: 'hidden' })
      expect(h.server.gatehouse.config.get().groups.teams).toBe(true)
      await page.getByTestId('oidc-groups-teams').click()
      await page.getByTestId('groups-impact-confirm').click()
      await expect.poll(() => h.server.gatehouse.config.get().groups.teams).toBe(false)
      // Back on: nothing is taken away, so it applies at once.
      await page.getByTestId('oidc-groups-teams').click()
      await expect.poll(() => h.server.gatehouse.config.get().groups.teams).toBe(true)
    } finally {
      h.server.gatehouse.config.update({ groups: { teams: true } })
      await removeServiceProvider(ctx, sp.id, { via: 'cli' })
    }
  })
})
