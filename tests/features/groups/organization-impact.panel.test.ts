import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { findOrganizationById, insertOrganization } from '../../../server/features/organization/store.js'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import { axe } from '../../helpers/axe.js'
import { serverLog } from '../../helpers/server.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'

/**
 * Issue 50 §5 in the panel: deleting an organization, or giving it a new slug, first shows the
 * rules that name it (here a SAML app's allowed groups), asked of the server while the dialog is
 * open; a rename that keeps the slug shows nothing. axe-core on the dialogs.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

const metadata = `<?xml version="1.0"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://docs.home.arpa/mellon/metadata">
  <SPSSODescriptor AuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://docs.home.arpa/mellon/postResponse" index="0"/>
  </SPSSODescriptor>
</EntityDescriptor>`

describe('Organizations view: what a delete or a new slug takes away', () => {
  it('the delete dialog and the rename dialog list the SAML app naming the organization', { timeout: 90_000 }, async () => {
    serverLog.allowWarning(/^groups: /)
    const ctx = h.server.gatehouse.ctx
    await insertOrganization(ctx, {
      id: 'docs-writers',
      name: 'Docs Writers',
      slug: 'docs-writers',
      logo: null,
      metadata: null,
      createdAt: new Date(h.server.clock.now()),
    })
    await createServiceProvider(
      ctx,
      { metadataXml: metadata, name: 'Docs', nameIdFormat: 'email', allowedGroups: ['docs-writers'] },
      { via: 'cli' },
    )
    await open('organizations', 'Organizations')
    await page.getByTestId('org-row-docs-writers').click()

    await page.getByTestId('org-delete').click()
    const deleting = page.getByTestId('org-change-impact')
    await deleting.waitFor()
    expect(await deleting.textContent()).toContain('SAML app "Docs" requires docs-writers: deleting the organization takes this name away')
    expect(await axe(page)).toEqual([])
    await page.getByRole('button', { name: 'Cancel' }).click()
    await expect.poll(() => page.getByTestId('org-change-impact').count()).toBe(0)

    await page.getByTestId('org-rename').click()
    await page.getByTestId('org-rename-slug').fill('docs-team')
    const renaming = page.getByTestId('org-change-impact')
    await renaming.waitFor()
    expect(await renaming.textContent()).toContain('changing its slug to "docs-team" takes this name away')
    expect(await axe(page)).toEqual([])
    // Back to the slug it has: nothing is taken away, nothing shows.
    await page.getByTestId('org-rename-slug').fill('docs-writers')
    await expect.poll(() => page.getByTestId('org-change-impact').count()).toBe(0)
    // Still there: asking deleted and renamed nothing.
    expect((await findOrganizationById(ctx, 'docs-writers'))?.slug).toBe('docs-writers')
  })
})
