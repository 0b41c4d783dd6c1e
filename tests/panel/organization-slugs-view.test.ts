import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { insertOrganization } from '../../server/features/organization/store.js'
import { type PanelHarness, panelPageForFile, viewOpener } from './harness.js'
import { axe } from '../helpers/axe.js'

/**
 * Issue 37 §0 in the panel: an organization whose slug was stored before the slug rule (here
 * `admin`, a role's name) is flagged in the Organizations list and its drawer says why and how to
 * rename it; Rename to a valid slug clears both. axe-core (WCAG 2 A/AA) on the drawer.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

describe('Organizations view: slugs stored before the slug rule', () => {
  it('flags the row, explains in the drawer, and Rename clears it', { timeout: 90_000 }, async () => {
    const ctx = h.server.gatehouse.ctx
    await insertOrganization(ctx, {
      id: 'legacy-admins',
      name: 'Legacy Admins',
      slug: 'admin',
      logo: null,
      metadata: null,
      createdAt: new Date(h.server.clock.now()),
    })
    await open('organizations', 'Organizations')
    const badge = page.getByTestId('org-slug-problem-legacy-admins')
    await badge.waitFor()
    expect(await badge.getAttribute('title')).toContain('has the slug "admin", which is the name of a role')

    await page.getByTestId('org-row-admin').click()
    const alert = page.getByTestId('org-slug-problem')
    await alert.waitFor()
    expect(await alert.textContent()).toContain('rename it in the panel (Organizations → Legacy Admins → Slug)')
    expect(await axe(page)).toEqual([])

    // Rename refuses another role name, then takes a valid slug.
    await page.getByTestId('org-rename').click()
    await page.getByTestId('org-rename-slug').fill('user')
    await page.getByTestId('org-rename-save').click()
    await expect.poll(() => page.getByText('Organization slug is the name of a role').count()).toBeGreaterThan(0)
    await page.getByTestId('org-rename-slug').fill('former-admins')
    await page.getByTestId('org-rename-save').click()
    await expect.poll(() => page.getByTestId('org-slug-problem').count()).toBe(0)
    await expect.poll(() => page.getByTestId('org-slug-problem-legacy-admins').count()).toBe(0)
  })
})
