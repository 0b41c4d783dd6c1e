import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
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

  it('the first Tab reaches "Skip to content", which moves focus to the view', { timeout: 20_000 }, async () => {
    await open('users', 'Users')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('skip-to-content')
    expect(await page.getByTestId('skip-to-content').isVisible()).toBe(true)
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')
    expect(page.url()).toContain('#/users')
  })
})
