import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axe, type Violation } from '../helpers/axe.js'
import { settled, watchRequests } from '../helpers/browser.js'
import { uniqueEmail } from '../helpers/http.js'
import { type PanelHarness, type PanelPage, panelPageForFile } from './harness.js'

/**
 * Issue 31 §4: axe-core's WCAG 2 A/AA rules over every view of the panel's navigation, every
 * Settings section, the drawers and the dialogs, in the light AND the dark colour scheme, with
 * enough data that the lists page (more than 25 users, two organizations with members, a team
 * and an invitation, an API key, an OIDC client). The views and sections are read from the
 * panel's own navigation, so a view added later is checked without editing this file.
 *
 * One colour scheme a file (panel-a11y-light.test.ts, panel-a11y-dark.test.ts): the two sweeps, the
 * longest of the panel suites, run in parallel instead of one after the other.
 */

let h: PanelHarness
let session: PanelPage

async function op(name: string, input: unknown = {}): Promise<unknown> {
  const result = await h.panel.service.dispatch(name, input)
  if (!result.ok) throw new Error(`${name}: ${result.error.code} ${result.error.message}`)
  return result.data
}

let ownerEmail = ''
/** A verified, signed-up user with a ban history: the user drawer with every badge (issue 37 §14). */
let veraId = ''

/** The data every sweep needs, made through the panel's own operations. */
async function seed(): Promise<void> {
  h = session.h
  h.server.gatehouse.config.update({ twoFactor: { enabled: true }, oidcProvider: { enabled: true } })
  // 30 users: the Users list pages (25 a page).
  const ids: string[] = []
  for (let i = 0; i < 30; i++) {
    const email = uniqueEmail(`a11y${i}`)
    const created = (await op('users.create', {
      name: `Person ${String(i).padStart(2, '0')}`,
      email,
      password: 'a long enough password',
      ...(i === 0 ? { role: 'admin' } : {}),
    })) as { user: { id: string } }
    ids.push(created.user.id)
    if (i === 0) ownerEmail = email
  }
  for (const [n, name] of ['Acme', 'Globex'].entries()) {
    const org = (await op('orgs.create', { name, slug: name.toLowerCase(), ownerUserId: ids[n] })) as { organization: { id: string } }
    await op('orgs.createTeam', { organizationId: org.organization.id, name: 'Developers' })
    await op('orgs.invite', { organizationId: org.organization.id, email: uniqueEmail('invitee'), role: 'member' })
  }
  await op('apiKey.create', { userId: ids[1], name: 'deploy bot' })
  const vera = (await op('users.create', {
    name: 'Vera Verified',
    email: uniqueEmail('vera'),
    password: 'a long enough password',
    emailVerified: true,
  })) as { user: { id: string } }
  veraId = vera.user.id
  await op('users.ban', { userId: ids[2], banReason: 'spam' })
  await op('oidc.createClient', { name: 'Grafana', redirectUris: ['https://grafana.example.com/login/generic_oauth'] })
}

/** A page in the given colour scheme, opened through the panel's printed link. */
async function pageIn(colorScheme: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await session.browser.newContext({
    viewport: { width: 1360, height: 900 },
    timezoneId: 'UTC',
    locale: 'en-GB',
    colorScheme,
  })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  watchRequests(page)
  await page.goto(h.panel.loginURL)
  await page.getByRole('heading', { level: 2 }).first().waitFor({ timeout: 10_000 })
  return { context, page }
}

async function openView(page: Page, hash: string): Promise<void> {
  await page.goto(`${h.panel.origin}/?view=${encodeURIComponent(hash)}#/${hash}`)
  await page.locator('main h2').first().waitFor({ timeout: 10_000 })
  // Its data loaded: no request in flight (the page's requests are watched from its first load on).
  await settled(page)
}

/** Every check of one colour scheme: views, settings sections, drawers and dialogs. */
async function sweep(page: Page, results: Record<string, Violation[]>): Promise<void> {
  const check = async (name: string) => {
    results[name] = await axe(page)
  }
  await openView(page, 'overview')
  const views = await page
    .locator('[data-testid^="nav-"]')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href')?.replace(/^#\//, '') ?? ''))
  expect(views.length).toBeGreaterThanOrEqual(13)
  for (const view of views) {
    await openView(page, view)
    await check(`view ${view}`)
  }
  // The users list pages: the pager is there and checked.
  await openView(page, 'users')
  await page.getByTestId('users-table').waitFor()
  await page.getByRole('button', { name: /page 2/i }).waitFor()

  await openView(page, 'settings')
  const sections = await page
    .locator('[data-testid^="settings-nav-"]')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href')?.replace(/^#\//, '') ?? ''))
  expect(sections.length).toBeGreaterThanOrEqual(9)
  for (const section of sections) {
    await openView(page, section)
    await check(`settings ${section}`)
  }
  // The review dialog of a section.
  await openView(page, 'settings?section=mail')
  await page.getByTestId('setting-mail.appName').fill('Acme sign-in')
  await page.getByTestId('save-settings').click()
  await page.getByRole('dialog', { name: 'Save mail?' }).waitFor()
  await check('dialog settings review')
  await page.keyboard.press('Escape')

  // Users: the create dialog, the drawer, and the dialogs opened from the drawer.
  await openView(page, 'users')
  await page.getByTestId('create-user').click()
  await page.getByRole('dialog', { name: 'Create user' }).waitFor()
  await check('dialog create user')
  await page.keyboard.press('Escape')
  await page.locator('[data-testid^="user-row-"]').first().click()
  await page.getByTestId('user-drawer').waitFor()
  await check('drawer user')
  await page.getByTestId('ban-user').click()
  await page.getByRole('dialog', { name: /^Ban / }).waitFor()
  await check('dialog ban user')
  await page.keyboard.press('Escape')
  await page.getByRole('button', { name: 'Set password' }).click()
  await page.getByRole('dialog', { name: /^New password for / }).waitFor()
  await check('dialog set password')
  await page.keyboard.press('Escape')
  // Issue 37 §14: a verified user's drawer, each of its tabs, and its delete confirmation.
  await openView(page, `users/${veraId}`)
  const userDrawer = page.getByTestId('user-drawer')
  await userDrawer.waitFor()
  await userDrawer.getByText('Vera Verified').first().waitFor()
  await check('drawer verified user')
  const tabs = await userDrawer.getByRole('tab').allTextContents()
  expect(tabs.length).toBeGreaterThanOrEqual(5)
  for (const [i, tab] of tabs.entries()) {
    await userDrawer.getByRole('tab').nth(i).click()
    await check(`drawer verified user, tab ${tab}`)
  }
  await page.getByTestId('remove-user').click()
  await page.getByTestId('remove-user-confirm').waitFor()
  await check('dialog delete user')
  await page.keyboard.press('Escape')
  // The import dialog.
  await openView(page, 'users')
  await page.getByTestId('import-users').click()
  await page.getByRole('dialog', { name: 'Import users' }).waitFor()
  await check('dialog import users')
  await page.keyboard.press('Escape')

  // Organizations: create dialog and drawer, each tab.
  await openView(page, 'organizations')
  await page.getByRole('button', { name: 'Create organization' }).click()
  await page.getByRole('dialog', { name: 'Create organization' }).waitFor()
  await check('dialog create organization')
  await page.keyboard.press('Escape')
  await page.getByTestId('orgs-table').getByRole('cell', { name: 'Acme', exact: true }).click()
  const drawer = page.getByRole('dialog', { name: 'Acme' })
  await drawer.waitFor()
  await check('drawer organization members')
  for (const tab of ['Teams', 'Invitations']) {
    await drawer.getByRole('tab', { name: new RegExp(`^${tab}`) }).click()
    await check(`drawer organization ${tab.toLowerCase()}`)
  }
  await page.keyboard.press('Escape')

  // Providers drawer.
  await openView(page, 'providers')
  await page.getByTestId('provider-github-configure').click()
  await page.getByRole('dialog', { name: 'GitHub sign-in' }).waitFor()
  await check('drawer provider')
  await page.keyboard.press('Escape')

  // Single sign-on: the secret dialog of a new client, the access dialog and the edit dialog.
  await openView(page, 'sso')
  await page.getByTestId('oidc-name').fill('Wiki')
  await page.getByTestId('oidc-redirect-uris').fill('https://wiki.example.com/callback')
  await page.getByTestId('oidc-create').click()
  await page.getByTestId('oidc-new-client-secret').waitFor()
  await check('dialog oidc secret')
  await page.getByRole('button', { name: 'Done' }).click()
  await page.getByTestId('oidc-clients').getByRole('button', { name: 'Access' }).first().click()
  await page.getByRole('dialog', { name: /^Who may sign in to / }).waitFor()
  await check('dialog oidc access')
  await page.keyboard.press('Escape')
  await page
    .getByTestId('oidc-clients')
    .getByRole('button', { name: /^Edit / })
    .first()
    .click()
  await page.getByRole('dialog', { name: /^Edit / }).waitFor()
  await check('dialog oidc edit')
  await page.keyboard.press('Escape')

  // API keys: a new key's secret dialog.
  await openView(page, 'api-keys')
  // The owner is found by searching, as the API keys view asks.
  await page.getByTestId('apikey-owner').fill(ownerEmail)
  await page.getByRole('option', { name: `Person 00 <${ownerEmail}>` }).click()
  await page.getByTestId('apikey-name').fill('a11y key')
  await page.getByTestId('apikey-create').click()
  await page.getByTestId('apikey-secret').waitFor()
  await check('dialog api key secret')
  await page.keyboard.press('Escape')

  // Email: the outbox (the invitations' mail, kept without SMTP) and a message's drawer.
  await openView(page, 'email')
  await page.getByRole('tab', { name: 'Outbox' }).click()
  await page.getByTestId('outbox-table').waitFor()
  await check('email outbox')
  await page
    .getByRole('button', { name: /^Open the message to / })
    .first()
    .click()
  await page.getByRole('dialog').getByTestId('message-text').waitFor()
  await check('drawer outbox message')
  await page.keyboard.press('Escape')
}

/**
 * Registers the sweep of one colour scheme as a test file's suite: its own server, panel, data and
 * Chromium (panel-a11y-light.test.ts and panel-a11y-dark.test.ts, so the two run in parallel).
 */
export function a11ySuite(scheme: 'light' | 'dark'): void {
  session = panelPageForFile(240_000)
  beforeAll(seed, 120_000)

  describe('accessibility (issue 31 §4)', () => {
    const contexts: BrowserContext[] = []
    afterAll(async () => {
      for (const c of contexts) await c.close()
    })

    it(`${scheme} mode: every view, settings section, drawer and dialog passes axe-core WCAG 2 A/AA with paging data`, {
      timeout: 240_000,
    }, async () => {
      const { context, page } = await pageIn(scheme)
      contexts.push(context)
      expect(await page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme'))).toBe(scheme)
      const results: Record<string, Violation[]> = {}
      const failing = () => Object.fromEntries(Object.entries(results).filter(([, v]) => v.length > 0))
      try {
        await sweep(page, results)
      } finally {
        // On failure, the whole report (rule, element, contrast figures) goes to the log.
        if (Object.keys(failing()).length) console.error(`axe violations (${scheme}):`, JSON.stringify(failing(), null, 2))
      }
      expect(Object.keys(results).length).toBeGreaterThan(30)
      expect(failing()).toEqual({})
    })
  })
}
