import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { findOrganizationById, findTeamById, insertOrganization, insertTeam } from '../../../server/features/organization/store.js'
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
beforeAll(async () => {
  ;({ h, page } = session)
  // The organization both tests change (the first only asks; nothing is deleted or renamed).
  await insertOrganization(h.server.gatehouse.ctx, {
    id: 'docs-writers',
    name: 'Docs Writers',
    slug: 'docs-writers',
    logo: null,
    metadata: null,
    createdAt: new Date(h.server.clock.now()),
  })
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

  it('renaming a team the SAML app names asks first: Keep the name changes nothing, Rename anyway renames', {
    timeout: 90_000,
  }, async () => {
    const ctx = h.server.gatehouse.ctx
    await insertTeam(ctx, {
      id: 'docs-editors',
      name: 'Editors',
      organizationId: 'docs-writers',
      createdAt: new Date(h.server.clock.now()),
      updatedAt: null,
    })
    await createServiceProvider(
      ctx,
      {
        metadataXml: metadata.replaceAll('docs.home.arpa', 'editors.home.arpa'),
        name: 'Editors wiki',
        nameIdFormat: 'email',
        allowedGroups: ['docs-writers/editors'],
      },
      { via: 'cli' },
    )
    await open('organizations', 'Organizations')
    await page.getByTestId('org-row-docs-writers').click()
    await page.getByRole('tab', { name: /Teams/ }).click()
    const name = page.getByRole('textbox', { name: 'Team Editors' })
    await name.fill('Copy editors')
    await name.blur()
    const dialog = page.getByTestId('team-rename-impact')
    await dialog.getByText('SAML app "Editors wiki"').waitFor()
    expect(await dialog.textContent()).toContain(
      'SAML app "Editors wiki" requires docs-writers/editors: renaming the team takes this name away',
    )
    expect(await axe(page)).toEqual([])
    await page.getByRole('button', { name: 'Keep the name' }).click()
    await expect.poll(() => name.inputValue()).toBe('Editors')
    expect((await findTeamById(ctx, 'docs-editors'))?.name).toBe('Editors')

    // A new spelling of the same slug asks nothing; a new slug, confirmed, renames.
    await name.fill('EDITORS')
    await name.blur()
    await expect.poll(async () => (await findTeamById(ctx, 'docs-editors'))?.name).toBe('EDITORS')
    expect(await dialog.getByText('SAML app "Editors wiki"').count()).toBe(0)
    const renamed = page.getByRole('textbox', { name: 'Team EDITORS' })
    await renamed.fill('Copy editors')
    await renamed.blur()
    await dialog.getByText('SAML app "Editors wiki"').waitFor()
    await page.getByTestId('team-rename-confirm').click()
    await expect.poll(async () => (await findTeamById(ctx, 'docs-editors'))?.name).toBe('Copy editors')
  })
})
