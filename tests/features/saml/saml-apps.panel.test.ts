import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { queryAuditEvents } from '../../../server/core/audit.js'
import { allServiceProviders, viewOf } from '../../../server/features/saml/service-providers.js'
import { axe } from '../../helpers/axe.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { callFromPage, operatorCall, signedInPage } from '../../helpers/panel-session.js'
import { buildRenderer, launchChromium, type PanelHarness, startPanelHarness } from '../../panel/harness.js'

/**
 * Issue 40's "SAML apps" view in real Chromium against the real server: an administrator pastes a
 * service provider's metadata, names it and picks its NameID format and allowed groups; the list
 * shows its entityID and ACS URL, the stored SP is what was entered, edits apply, a delete removes
 * it, each step audited with the admin as actor. A view-only admin gets no add form, no delete and
 * a read-only edit form, and the server refuses the operations anyway. axe in light mode.
 */

const PASSWORD = 'correct horse battery'
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
let h: PanelHarness
let browser: Browser
const contexts: BrowserContext[] = []
const people = {} as Record<'ada' | 'sam', { id: string; email: string }>

/** A minimal valid SP metadata: an SPSSODescriptor with one HTTP-POST ACS and one SLO service. */
function spMetadata(origin: string): { xml: string; entityId: string; acs: string; slo: string } {
  const sp = { entityId: `${origin}/mellon/metadata`, acs: `${origin}/mellon/postResponse`, slo: `${origin}/mellon/logout` }
  const xml = `<?xml version="1.0"?>
<EntityDescriptor xmlns="${MD}" entityID="${sp.entityId}">
  <SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sp.slo}"/>
    <NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</NameIDFormat>
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${sp.acs}" index="0" isDefault="true"/>
  </SPSSODescriptor>
</EntityDescriptor>`
  return { ...sp, xml }
}

const operator = (op: string, input: unknown) => operatorCall(h.panel, op, input)

const signedIn = (email: string) => signedInPage(browser, h.panel, contexts, { email, password: PASSWORD })

async function openView(page: Page): Promise<void> {
  await page.goto(`${h.panel.origin}/?v=${Date.now()}#/saml-apps`)
  await page.getByRole('heading', { level: 2, name: 'SAML apps' }).waitFor({ timeout: 10_000 })
  await page.getByTestId('saml-idp-metadata').waitFor()
}

/**
 * axe with the pointer parked in the corner: a light button left under it (the list moves up when
 * the add form empties) is measured in its hover colours, a theme-wide state this view does not own.
 */
async function a11y(page: Page) {
  await page.mouse.move(0, 0)
  return axe(page)
}

/** A service provider's metadata served over HTTP on loopback, for the Fetch button. */
const metadataServer = { xml: '', url: '', hits: [] as string[], server: null as Server | null }

const stored = async () => (await allServiceProviders(h.server.gatehouse.ctx)).map(viewOf)

beforeAll(async () => {
  const [assets, b] = await Promise.all([buildRenderer(), launchChromium()])
  browser = b
  h = await startPanelHarness(assets, {
    config: { saml: { enabled: true }, admin: { roles: { support: { user: ['list' as const, 'get' as const] } } } },
  })
  for (const [key, name, role] of [
    ['ada', 'Ada Admin', 'admin'],
    ['sam', 'Sam Support', 'support'],
  ] as const) {
    const { user } = await verifiedSignUp(h.server, { name, password: PASSWORD })
    await operator('users.setRole', { userId: user.id, role })
    people[key] = { id: user.id, email: user.email }
  }
  metadataServer.server = createServer((req, res) => {
    metadataServer.hits.push(req.url ?? '')
    res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(metadataServer.xml)
  })
  await new Promise<void>((resolve) => metadataServer.server?.listen(0, '127.0.0.1', resolve))
  metadataServer.url = `http://127.0.0.1:${(metadataServer.server.address() as AddressInfo).port}`
}, 180_000)

afterAll(async () => {
  for (const context of contexts) await context.close()
  await browser?.close()
  await h?.close()
  await new Promise((resolve) => (metadataServer.server ? metadataServer.server.close(resolve) : resolve(undefined)))
})

describe('SAML apps view', () => {
  it('an admin pastes or fetches metadata, sees entityID and ACS, edits and deletes the app; each step stored and audited', {
    timeout: 90_000,
  }, async () => {
    const sp = spMetadata('https://wiki.home.arpa')
    metadataServer.xml = sp.xml
    const page = await signedIn(people.ada.email)
    await openView(page)
    expect(await page.getByTestId('saml-idp-metadata').textContent()).toBe(`${h.server.gatehouse.ctx.baseURL}/saml/metadata`)
    expect(await page.getByText('SAML is off').count()).toBe(0)
    expect(await a11y(page), 'the view, empty').toEqual([])

    // Metadata naming no HTTP-POST ACS is refused with the catalogue's reason; nothing is stored.
    await page.getByTestId('saml-metadata-xml').fill(sp.xml.replace(/<AssertionConsumerService[^>]*\/>/, ''))
    await page.getByTestId('saml-create').click()
    await page.getByTestId('error-notice').filter({ hasText: 'names no AssertionConsumerService with the HTTP-POST binding' }).waitFor()
    expect(await stored()).toEqual([])
    expect(await a11y(page), 'the view with its error').toEqual([])

    // Fetch: the metadata served at a URL lands in the text area (nothing saved yet).
    await page.getByTestId('saml-metadata-url').fill(`${metadataServer.url}/mellon/metadata`)
    await page.getByRole('button', { name: 'Fetch' }).click()
    await expect.poll(() => page.getByTestId('saml-metadata-xml').inputValue()).toBe(sp.xml)
    expect(metadataServer.hits).toEqual(['/mellon/metadata'])
    expect(await stored()).toEqual([])

    await page.getByTestId('saml-name').fill('Wiki')
    await page.getByLabel('NameID', { exact: true }).first().click()
    await page.getByRole('option', { name: 'Persistent (pairwise: its own per app)' }).click()
    await page.getByRole('textbox', { name: 'Allowed groups' }).first().fill('family, admins')
    // Each step a second apart on the server's clock: the audit's order is the steps' order.
    const tick = () => h.server.clock.advance(1_000)
    tick()
    await page.getByTestId('saml-create').click()

    // The list shows it: entityID and ACS URL from the metadata.
    const card = page.locator('[data-testid^="saml-sp-"]')
    await card.waitFor({ timeout: 10_000 })
    const text = (await card.textContent()) ?? ''
    expect(text).toContain('Wiki')
    expect(text).toContain(`entityID: ${sp.entityId}`)
    expect(text).toContain(`ACS: ${sp.acs}`)
    // The add form emptied itself.
    expect(await page.getByTestId('saml-metadata-xml').inputValue()).toBe('')

    // The server stored what was entered, and the panel's own list operation says the same.
    const [saved] = await stored()
    expect(await stored()).toHaveLength(1)
    expect(saved).toMatchObject({
      source: 'database',
      name: 'Wiki',
      entityId: sp.entityId,
      nameIdFormat: 'persistent',
      allowedGroups: ['family', 'admins'],
      acsUrls: [sp.acs],
      sloUrls: [sp.slo],
      authnRequestsSigned: false,
      metadataXml: sp.xml,
    })
    expect(await card.getAttribute('data-testid')).toBe(`saml-sp-${saved?.id}`)
    const listed = (await callFromPage(page, 'saml.serviceProviders', {})).body as { serviceProviders: unknown[]; enabled: boolean }
    expect(listed.enabled).toBe(true)
    expect(listed.serviceProviders).toEqual([expect.objectContaining({ id: saved?.id, entityId: sp.entityId, acsUrls: [sp.acs] })])
    expect(await a11y(page), 'the view with one app').toEqual([])

    // Edit: name and allowed groups, then Save; the NameID select applies at once.
    await card.getByRole('textbox', { name: 'Name', exact: true }).fill('Family wiki')
    await card.getByRole('textbox', { name: 'Allowed groups' }).fill('family')
    tick()
    await card.getByRole('button', { name: 'Save' }).click()
    await expect
      .poll(async () => (await stored())[0])
      .toMatchObject({ name: 'Family wiki', allowedGroups: ['family'], nameIdFormat: 'persistent' })
    await card.getByText('Family wiki', { exact: true }).waitFor()
    tick()
    await card.getByLabel('NameID', { exact: true }).click()
    await page.getByRole('option', { name: 'Email address' }).click()
    await expect.poll(async () => (await stored())[0]?.nameIdFormat).toBe('email')
    expect((await stored())[0]).toMatchObject({ name: 'Family wiki', allowedGroups: ['family'], entityId: sp.entityId })

    // Delete: the confirmation dialog (axe on it), then the app is gone from the list and the server.
    await card.getByRole('button', { name: 'Delete' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete Family wiki?' })
    await dialog.waitFor()
    expect(await a11y(page), 'the delete dialog').toEqual([])
    tick()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await card.waitFor({ state: 'detached', timeout: 10_000 })
    expect(await stored()).toEqual([])
    expect(await dialog.count()).toBe(0)

    // The audit: created, updated twice, deleted, each naming Ada as the actor.
    const { events } = await queryAuditEvents(h.server.gatehouse.ctx, { type: 'saml.*' }, {})
    const mine = events
      .filter((e) => e.target === saved?.id)
      .reverse()
      .map((e) => ({ type: e.type, actor: e.actorUserId, outcome: e.outcome }))
    const by = { actor: people.ada.id, outcome: 'success' }
    expect(mine).toEqual([
      { type: 'saml.sp-created', ...by },
      { type: 'saml.sp-updated', ...by },
      { type: 'saml.sp-updated', ...by },
      { type: 'saml.sp-deleted', ...by },
    ])
  })

  it('a view-only admin sees the apps but no add form, no delete, a read-only edit form; the server refuses', {
    timeout: 60_000,
  }, async () => {
    const sp = spMetadata('https://photos.home.arpa')
    const created = (await operator('saml.createServiceProvider', { metadataXml: sp.xml, name: 'Photos' })) as { id: string }
    const page = await signedIn(people.sam.email)
    await page.getByTestId('panel-caller').filter({ hasText: 'view only' }).waitFor()
    await openView(page)
    const card = page.getByTestId(`saml-sp-${created.id}`)
    await card.waitFor()
    expect(await card.textContent()).toContain(`ACS: ${sp.acs}`)
    expect(await page.getByTestId('saml-metadata-xml').count()).toBe(0)
    expect(await page.getByTestId('saml-create').count()).toBe(0)
    expect(await card.getByRole('button', { name: 'Delete' }).count()).toBe(0)
    // Read-only and focusable (issue 37 §14), not disabled.
    expect(await card.getByRole('textbox', { name: 'Name', exact: true }).isEditable()).toBe(false)
    expect(await card.getByRole('textbox', { name: 'Allowed groups' }).isEditable()).toBe(false)
    expect(await card.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true)
    expect(await a11y(page), 'the view, view only').toEqual([])

    for (const [op, input] of [
      ['saml.createServiceProvider', { metadataXml: spMetadata('https://other.home.arpa').xml }],
      ['saml.updateServiceProvider', { id: created.id, name: 'Mine now' }],
      ['saml.deleteServiceProvider', { id: created.id }],
      ['saml.fetchMetadata', { url: 'https://photos.home.arpa/mellon/metadata' }],
    ] as const) {
      expect(await callFromPage(page, op, input), op).toMatchObject({ status: 403, body: { code: 'PANEL_FORBIDDEN' } })
    }
    expect(await stored()).toEqual([expect.objectContaining({ id: created.id, name: 'Photos' })])
  })
})
