import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axe } from '../../helpers/axe.js'
import { type StartupPanel, startStartupPanel } from './startup-panel.js'

/**
 * Issue 37 §11: values set at start-up (`--trusted-origins`, `--smtp-url`, `--base-url`,
 * `--rate-limit`) show as such in every view that shows them: the badge, the field read-only yet
 * focusable, the reason under it; a Save of the other fields leaves them as they are (neither the
 * review nor the stored layer names them), and the server refuses a change of one. The real
 * `gatehouse serve` process with those flags, its printed panel link, the production renderer
 * (out/renderer, built by the panel project's global setup), Chromium.
 */

const ORIGIN = 'https://app.example.lan'
const BASE_URL = 'http://gatehouse.test:4280'
const SMTP_URL = 'smtp://127.0.0.1:2'

let h: StartupPanel
let page: Page

beforeAll(async () => {
  h = await startStartupPanel('gatehouse-startup-values-', (dir) => ({
    args: ['--data-dir', dir, '--trusted-origins', ORIGIN, '--smtp-url', SMTP_URL, '--base-url', BASE_URL, '--rate-limit', 'off'],
  }))
  page = h.page
}, 180_000)

afterAll(() => h?.close())

describe('values set at start-up, in every view that shows them', () => {
  it('Settings: trusted origins and the rate limiter read-only with the badge and the reason; saving other fields leaves them untouched', {
    timeout: 120_000,
  }, async () => {
    const before = await h.op('settings.get')
    expect(before.status).toBe(200)
    expect(before.body.overridden).toEqual(expect.arrayContaining(['trustedOrigins', 'rateLimit.enabled']))

    await h.open('settings?section=application', 'Settings')
    const origins = page.getByTestId('trusted-origins')
    await origins.getByTestId('startup-badge').waitFor()
    const row = origins.getByRole('textbox', { name: 'Trusted origin 1' })
    expect(await row.inputValue()).toBe(ORIGIN)
    expect(await row.isEditable()).toBe(false)
    // Focusable, and the reason is what it is described by (and shown).
    await row.focus()
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Trusted origin 1')
    await page.keyboard.type('x')
    expect(await row.inputValue()).toBe(ORIGIN)
    const reason = await origins.getByTestId('trusted-origins-reason').textContent()
    expect(reason).toContain('Set at start-up')
    // The rows' group is described by it (a screen reader says it on entering the list).
    expect(await origins.getAttribute('role')).toBe('group')
    expect(await h.describedText('trusted-origins')).toBe(reason)
    // Nothing that would change it: no Add, no Remove.
    expect(await page.getByTestId('add-origin').count()).toBe(0)
    expect(await origins.getByRole('button', { name: `Remove ${ORIGIN}` }).count()).toBe(0)
    // The base URL of --base-url is the one the view says apps use.
    expect(await page.getByTestId('base-url').textContent()).toContain(BASE_URL)
    expect(await axe(page), 'application section').toEqual([])

    await h.open('settings?section=rate-limits', 'Settings')
    const limiter = page.getByTestId('setting-rateLimit.enabled')
    await page.getByTestId('section-rate-limits').getByTestId('startup-badge').first().waitFor()
    expect(await limiter.isChecked()).toBe(false)
    expect(await limiter.isEditable()).toBe(false)
    expect(await limiter.getAttribute('aria-readonly')).toBe('true')
    expect(await h.describedText('setting-rateLimit.enabled')).toContain('Set at start-up')
    await limiter.click({ force: true })
    expect(await limiter.isChecked()).toBe(false)
    await limiter.focus()
    await page.keyboard.press('Space')
    expect(await limiter.isChecked()).toBe(false)
    expect(await page.getByTestId('unsaved').count()).toBe(0)
    expect(await axe(page), 'rate limits section').toEqual([])

    // Another field of the same section is saved; the review names only it.
    const max = page.getByTestId('setting-rateLimit.max')
    const nextMax = Number(await max.inputValue()) + 7
    await max.fill(String(nextMax))
    await page.getByTestId('unsaved').filter({ hasText: '1 unsaved change' }).waitFor()
    await expect.poll(() => page.getByTestId('save-settings').isDisabled(), { timeout: 15_000 }).toBe(false)
    await page.getByTestId('save-settings').click()
    const review = page.getByTestId('review-changes')
    await review.waitFor()
    expect(await review.locator('li').count()).toBe(1)
    expect(await review.textContent()).toContain(String(nextMax))
    expect(await review.textContent()).not.toMatch(/rate limit(ing|er) (on|off)|Trusted origins/i)
    expect(await axe(page), 'the review dialog').toEqual([])
    await page.getByTestId('confirm-save').click()
    await page
      .getByText(/ saved$/)
      .first()
      .waitFor({ timeout: 15_000 })

    const after = await h.op('settings.get')
    const effective = after.body.effective as { trustedOrigins: string[]; rateLimit: { enabled: boolean; max: number } }
    const stored = after.body.stored as { trustedOrigins?: string[]; rateLimit?: { enabled?: boolean; max?: number } }
    expect(effective.rateLimit.max).toBe(nextMax)
    expect(stored.rateLimit?.max).toBe(nextMax)
    // The start-up values still win and were never written to the stored layer.
    expect(effective.trustedOrigins).toEqual([ORIGIN])
    expect(effective.rateLimit.enabled).toBe(false)
    expect(stored.trustedOrigins).toBeUndefined()
    expect(stored.rateLimit?.enabled).toBeUndefined()
    expect(after.body.overridden).toEqual(expect.arrayContaining(['trustedOrigins', 'rateLimit.enabled']))

    // Asked directly, the server refuses to store a key a start-up option sets: it would not take effect.
    for (const patch of [{ trustedOrigins: ['https://other.example.lan'] }, { rateLimit: { enabled: true } }]) {
      const refused = await h.op('settings.update', { patch })
      expect(refused.status, JSON.stringify(patch)).toBe(409)
      expect(refused.body.code).toBe('SET_AT_STARTUP')
    }
    const unchanged = await h.op('settings.get')
    expect((unchanged.body.effective as { trustedOrigins: string[] }).trustedOrigins).toEqual([ORIGIN])
  })

  it('Email: the SMTP of --smtp-url is shown read-only with the badge, and no Save claims to change it', { timeout: 60_000 }, async () => {
    await h.open('email', 'Email')
    const notice = page.getByTestId('smtp-startup')
    await notice.waitFor()
    expect(await notice.textContent()).toContain('set at start-up')
    expect(await page.getByTestId('smtp-startup-url').textContent()).toBe(SMTP_URL)
    const host = page.getByTestId('smtp-host')
    expect(await host.isEditable()).toBe(false)
    await host.focus()
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('smtp-host')
    expect(await h.describedText('smtp-host')).toContain('Set at start-up')
    expect(await page.getByTestId('smtp-save').count()).toBe(0)
    expect(await axe(page), 'email view').toEqual([])
    const refused = await h.op('email.update', { host: 'smtp.example.com', port: 587, secure: false, user: '', from: 'a@example.com' })
    expect(refused.status).toBe(409)
    expect(refused.body.code).toBe('SET_AT_STARTUP')
  })

  it('Network: the base URL of --base-url is shown read-only with the badge and the reason', { timeout: 60_000 }, async () => {
    await h.open('network', 'Network')
    await page.getByTestId('network-override').filter({ hasText: 'Set at start-up by --base-url' }).waitFor()
    const field = page.getByTestId('network-base-url')
    expect(await field.inputValue()).toBe(BASE_URL)
    expect(await field.isEditable()).toBe(false)
    expect(await field.isDisabled()).toBe(false)
    await field.focus()
    await page.keyboard.type('x')
    expect(await field.inputValue()).toBe(BASE_URL)
    expect(await h.describedText('network-base-url')).toContain('--base-url sets it at start-up')
    // No proposal offers to replace it.
    expect(await page.getByTestId('network-use-proposal').count()).toBe(0)
    expect(await axe(page), 'network view').toEqual([])
  })
})
