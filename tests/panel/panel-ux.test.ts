import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { settled } from '../helpers/browser.js'
import { type PanelHarness, panelPageForFile, viewOpener } from './harness.js'

/**
 * Issue 31 §3, Settings and the shell: fields checked while typing in their own words, invalid
 * JSON that says why and that Discard throws away, a question before leaving a view with unsaved
 * edits, and a skip-to-content link. Real Chromium, the production renderer, the real server.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

async function op(name: string, input: unknown = {}): Promise<unknown> {
  const result = await h.panel.service.dispatch(name, input)
  if (!result.ok) throw new Error(`${name}: ${result.error.code} ${result.error.message}`)
  return result.data
}

describe('Settings while typing', () => {
  it('a value out of range is refused beside its field, in words, before any save; fixing it allows the save', {
    timeout: 30_000,
  }, async () => {
    await open('settings?section=rate-limits', 'Settings')
    const max = page.getByTestId('setting-rateLimit.max')
    await max.fill('0')
    await page.getByText('Must be at least 1').first().waitFor()
    // The message is the field's error (aria-describedby), not a toast naming the config key.
    const described = ((await max.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
    const texts = await Promise.all(described.map((id) => page.locator(`[id="${id}"]`).textContent()))
    expect(texts.join(' ')).toContain('Must be at least 1')
    expect(await page.content()).not.toContain('rateLimit.max:')
    expect(await page.getByTestId('save-settings').isDisabled()).toBe(true)
    await page.getByTestId('section-problems').filter({ hasText: '1 field needs fixing' }).waitFor()
    await max.fill('150')
    await expect.poll(() => page.getByTestId('save-settings').isDisabled()).toBe(false)
    expect(await page.getByText('Must be at least 1').count()).toBe(0)
    await page.getByTestId('discard-settings').click()
    expect(await max.inputValue()).toBe(String(h.server.gatehouse.config.get().rateLimit.max))
  })

  it('invalid JSON says why, blocks the save, and Discard brings the saved value back', { timeout: 30_000 }, async () => {
    await open('settings?section=rate-limits', 'Settings')
    const rules = page.getByTestId('setting-rateLimit.customRules')
    const before = await rules.inputValue()
    await rules.fill('{"/sign-in/email": {"window": 60, "max": }')
    await page
      .getByText(/^Not valid JSON: .+/)
      .first()
      .waitFor()
    const reason =
      (await page
        .getByText(/^Not valid JSON: .+/)
        .first()
        .textContent()) ?? ''
    expect(reason.length).toBeGreaterThan('Not valid JSON: '.length + 5)
    await page.getByTestId('unsaved').waitFor()
    expect(await page.getByTestId('save-settings').isDisabled()).toBe(true)
    await page.getByTestId('discard-settings').click()
    await expect.poll(() => page.getByTestId('setting-rateLimit.customRules').inputValue()).toBe(before)
    expect(await page.getByText(/^Not valid JSON/).count()).toBe(0)
    expect(await page.getByTestId('unsaved').count()).toBe(0)

    // Valid JSON with a value the schema refuses: the key inside the JSON is named.
    await page.getByTestId('setting-rateLimit.customRules').fill('{"/x": {"window": 0, "max": 5}}')
    await page.getByText('/x › window: Must be at least 1').first().waitFor()
    await page.getByTestId('discard-settings').click()
  })

  it('leaving a view with unsaved edits asks first: Stay keeps them, Leave drops them', { timeout: 30_000 }, async () => {
    await open('settings?section=mail', 'Settings')
    await page.getByTestId('setting-mail.appName').fill('Acme sign-in')
    await page.getByTestId('unsaved').waitFor()
    // Another section of the same view keeps the draft without asking.
    await page.getByTestId('settings-nav-sessions').click()
    await page.getByTestId('section-sessions').waitFor()
    await page.getByTestId('settings-nav-mail').getByText('unsaved').waitFor()
    // Another view asks.
    await page.getByTestId('nav-users').click()
    const dialog = page.getByRole('dialog', { name: 'Leave without saving?' })
    await dialog.waitFor()
    expect(page.url()).toContain('#/settings')
    await page.getByTestId('leave-stay').click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('heading', { level: 2, name: 'Settings' }).waitFor()
    await page.getByTestId('settings-nav-mail').click()
    expect(await page.getByTestId('setting-mail.appName').inputValue()).toBe('Acme sign-in')
    await page.getByTestId('nav-users').click()
    await dialog.waitFor()
    await page.getByTestId('leave-discard').click()
    await page.getByRole('heading', { level: 2, name: 'Users' }).waitFor()
    expect(h.server.gatehouse.config.get().mail.appName).toBe('Gatehouse')
    // Nothing unsaved: no question.
    await page.getByTestId('nav-settings').click()
    await page.getByRole('heading', { level: 2, name: 'Settings' }).waitFor()
    await page.getByTestId('nav-audit').click()
    await page.getByRole('heading', { level: 2, name: 'Audit log' }).waitFor()
    expect(await dialog.count()).toBe(0)
  })

  it('the first Tab reaches "Skip to content", which moves focus to the view', { timeout: 60_000 }, async () => {
    await open('users', 'Users')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('skip-to-content')
    expect(await page.getByTestId('skip-to-content').isVisible()).toBe(true)
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')
    expect(page.url()).toContain('#/users')
  })
})

describe('drawers, dialogs and toasts', () => {
  it('Escape in a dialog opened from a drawer closes only the dialog and gives focus back to its button; a second Escape closes the drawer', {
    timeout: 30_000,
  }, async () => {
    await op('users.create', { name: 'Drawer Person', email: 'drawer-person@example.com', password: 'a long enough password' })
    await open('users', 'Users')
    await page.getByTestId('user-row-drawer-person@example.com').click()
    await page.getByTestId('user-drawer').waitFor()
    await page.getByTestId('ban-user').click()
    const dialog = page.getByRole('dialog', { name: 'Ban drawer-person@example.com' })
    await dialog.waitFor()
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    await settled(page)
    expect(await page.getByTestId('user-drawer').isVisible()).toBe(true)
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('ban-user')
    await page.keyboard.press('Escape')
    await page.getByTestId('user-drawer').waitFor({ state: 'hidden' })
  })

  it('a toast never covers the close button of the drawer it came from', { timeout: 30_000 }, async () => {
    await open('users', 'Users')
    await page.getByTestId('user-row-drawer-person@example.com').click()
    await page.getByTestId('user-drawer').waitFor()
    await page.getByRole('button', { name: 'Mark email verified' }).click()
    const toast = page.locator('.mantine-Notification-root').filter({ hasText: 'Email verified' })
    await toast.waitFor()
    const close = page.locator('.mantine-Drawer-content .mantine-Drawer-close')
    const [a, b] = [await toast.boundingBox(), await close.boundingBox()]
    expect(a && b).toBeTruthy()
    const overlaps = a!.x < b!.x + b!.width && b!.x < a!.x + a!.width && a!.y < b!.y + b!.height && b!.y < a!.y + a!.height
    expect(overlaps).toBe(false)
    await close.click()
    await page.getByTestId('user-drawer').waitFor({ state: 'hidden' })
  })

  it('the one-time OIDC client secret has copy buttons and survives Escape; only Done closes it', { timeout: 30_000 }, async () => {
    await session.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.panel.origin })
    await open('sso', 'Single sign-on')
    await page.getByTestId('oidc-name').fill('Escape test')
    await page.getByTestId('oidc-redirect-uris').fill('https://escape.example.com/callback')
    await page.getByTestId('oidc-create').click()
    const secret = ((await page.getByTestId('oidc-new-client-secret').textContent()) ?? '').trim()
    expect(secret).toMatch(/^[A-Za-z0-9]{43}$/)
    await page.keyboard.press('Escape')
    await page.mouse.click(5, 5)
    await settled(page)
    expect(await page.getByTestId('oidc-new-client-secret').isVisible()).toBe(true)
    await page.getByTestId('oidc-new-client-secret-copy').click()
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
    await page.getByTestId('oidc-new-client-id-copy').click()
    const clientId = ((await page.getByTestId('oidc-new-client-id').textContent()) ?? '').trim()
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(clientId)
    await page.getByRole('button', { name: 'Done' }).click()
    await page.getByTestId('oidc-new-client-secret').waitFor({ state: 'hidden' })
  })
})

describe('Overview', () => {
  it('the first-run checklist is the first card, its base-URL step opens Network, and it can be dismissed', {
    timeout: 30_000,
  }, async () => {
    await open('overview', 'Overview')
    await page.getByTestId('first-run').waitFor()
    // The first card of the view: nothing but the heading before it.
    const firstCard = await page.locator('main .mantine-Card-root').first().getAttribute('data-testid')
    expect(firstCard).toBe('first-run')
    await page.getByTestId('setup-baseURL-link').click()
    await page.getByRole('heading', { level: 2, name: 'Network' }).waitFor()
    await open('overview', 'Overview')
    await page.getByTestId('first-run-dismiss').click()
    await page.getByTestId('first-run').waitFor({ state: 'hidden' })
    await open('overview', 'Overview')
    await page.getByTestId('count-users').waitFor()
    expect(await page.getByTestId('first-run').count()).toBe(0)
    await page.evaluate(() => window.localStorage.removeItem('gatehouse.firstRun.dismissed'))
  })

  it('the second-factor card appears only with two-factor on and says in words what it enforces', { timeout: 30_000 }, async () => {
    h.server.gatehouse.config.update({ twoFactor: { enabled: false } })
    await open('overview', 'Overview')
    await page.getByTestId('count-users').waitFor()
    expect(await page.getByTestId('second-factor-summary').count()).toBe(0)
    h.server.gatehouse.config.update({ twoFactor: { enabled: true } })
    await open('overview', 'Overview')
    await page
      .getByTestId('second-factor-rule')
      .filter({ hasText: 'No one is required to use a second factor: each user chooses whether to add one.' })
      .waitFor()
    h.server.gatehouse.config.update({
      twoFactor: { enabled: true, enforcement: { roles: ['admin', 'support'], gracePeriod: 7 * 86_400 } },
    })
    await open('overview', 'Overview')
    await page
      .getByTestId('second-factor-rule')
      .filter({
        hasText:
          'Users with the roles admin and support must use a second factor (an authenticator app or a passkey): they have 7 days after their first sign-in under the rule to enrol one, then sign-in is refused until they do.',
      })
      .waitFor()
    h.server.gatehouse.config.update({ twoFactor: { enabled: false, enforcement: { roles: [] } } })
  })
})
