import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import { axe } from '../../helpers/axe.js'
import { serverLog } from '../../helpers/server.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'

/**
 * Issue 50 §5 in the Settings view: saving an edit of the custom admin roles that removes a role a
 * forward-auth rule and a SAML app name first lists them (`groups.roleImpact`) and asks: "Keep the
 * role" puts the field back and saves nothing, "Remove anyway" saves. Removing a role nothing names
 * saves at once. axe-core on the dialog.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
const open = viewOpener(session)

const metadata = `<?xml version="1.0"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://desk.home.arpa/mellon/metadata">
  <SPSSODescriptor AuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://desk.home.arpa/mellon/postResponse" index="0"/>
  </SPSSODescriptor>
</EntityDescriptor>`

const roles = () => Object.keys(h.server.gatehouse.ctx.config().admin.roles).sort()

beforeAll(async () => {
  ;({ h, page } = session)
  serverLog.allowWarning(/^groups: /)
  h.server.gatehouse.config.update({
    admin: { roles: { helpdesk: { user: ['list'] }, spare: { user: ['list'] } } },
    forwardAuth: { rules: [{ domain: 'desk.lan', policy: 'signed-in', subject: { roles: ['helpdesk'] } }] },
  })
  await createServiceProvider(
    h.server.gatehouse.ctx,
    { metadataXml: metadata, name: 'Desk', nameIdFormat: 'email', allowedGroups: ['helpdesk'] },
    { via: 'cli' },
  )
})

/**
 * How long a save may take to reach the server's configuration: the panel asks for the impact
 * first, then saves. A bound for a hang, not a speed check: in a full run beside three other
 * workers one save took longer than expect.poll's default second (2026-12-04).
 */
const SAVED = { timeout: 15_000 }

/** Types the custom roles into the Settings field and confirms the review. */
async function saveRoles(value: Record<string, unknown>, section = 'admin', path = 'admin.roles'): Promise<void> {
  await open(`settings?section=${section}`, 'Settings')
  const field = page.getByTestId(`setting-${path}`)
  await field.fill(JSON.stringify(value))
  await expect.poll(() => page.getByTestId('save-settings').isDisabled(), { timeout: 15_000 }).toBe(false)
  await page.getByTestId('save-settings').click()
  await page.getByTestId('review-changes').waitFor()
  await page.getByTestId('confirm-save').click()
}

describe('Settings → Admin roles: removing a role that rules name asks first', () => {
  it('lists the forward-auth rule and the SAML app; Keep the role saves nothing; Remove anyway saves', { timeout: 90_000 }, async () => {
    await saveRoles({ spare: { user: ['list'] } })
    const dialog = page.getByTestId('setting-impact')
    await dialog.getByText('SAML app "Desk"').waitFor()
    const text = await dialog.textContent()
    expect(text).toContain('forwardAuth.rules[0].subject.roles requires helpdesk: removing the role "helpdesk" takes this name away')
    expect(text).toContain('SAML app "Desk" requires helpdesk')
    expect(await axe(page)).toEqual([])

    await page.getByRole('button', { name: 'Keep the role' }).click()
    await expect.poll(() => dialog.getByText('SAML app "Desk"').count(), SAVED).toBe(0)
    // Nothing was sent, and the field shows the role again with nothing left unsaved.
    expect(roles()).toEqual(['helpdesk', 'spare'])
    expect(await page.getByTestId('setting-admin.roles').inputValue()).toContain('helpdesk')
    expect(await page.getByTestId('unsaved').count()).toBe(0)

    await saveRoles({ spare: { user: ['list'] } })
    await dialog.getByText('SAML app "Desk"').waitFor()
    await page.getByTestId('setting-impact-confirm').click()
    await expect.poll(roles, SAVED).toEqual(['spare'])
  })

  it('removing a role nothing names saves at once', { timeout: 90_000 }, async () => {
    await saveRoles({})
    await expect.poll(roles, SAVED).toEqual([])
    // The closed dialog keeps an empty root: nothing was asked.
    expect(await page.getByTestId('setting-impact').getByRole('button').count()).toBe(0)
  })

  it('Custom organization roles ask the same way for a member role a SAML app names', { timeout: 90_000 }, async () => {
    h.server.gatehouse.config.update({ organization: { roles: { reviewer: { team: ['update'] }, spare: { team: ['update'] } } } })
    await createServiceProvider(
      h.server.gatehouse.ctx,
      {
        metadataXml: metadata.replaceAll('desk.home.arpa', 'review.home.arpa'),
        name: 'Review',
        nameIdFormat: 'email',
        allowedGroups: ['acme:reviewer'],
      },
      { via: 'cli' },
    )
    const organizationRoles = () => Object.keys(h.server.gatehouse.ctx.config().organization.roles).sort()
    await saveRoles({ spare: { team: ['update'] } }, 'organizations', 'organization.roles')
    const dialog = page.getByTestId('setting-impact')
    await dialog.getByText('SAML app "Review"').waitFor()
    expect(await dialog.textContent()).toContain('SAML app "Review" requires acme:reviewer: removing the organization role "reviewer"')
    expect(organizationRoles()).toEqual(['reviewer', 'spare'])
    await page.getByRole('button', { name: 'Remove anyway' }).click()
    await expect.poll(organizationRoles, SAVED).toEqual(['spare'])
  })
})
