import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyAppPassword } from '../../../server/features/app-passwords/verify.js'
import { launchBrowser } from '../../helpers/browser.js'
import { signUp } from '../../helpers/http.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { buildHostedPages } from '../../helpers/hosted.js'
import { axe } from '../../helpers/axe.js'

/**
 * The hosted "App passwords" page (/ui/account/app-passwords) in real Chromium against the real
 * server: sign in, create one (the secret shown once), see it listed without the secret, revoke it;
 * axe-core finds no WCAG 2 A/AA violation.
 */

let assets = ''
let server: TestServer
let browser: Browser

beforeAll(async () => {
  const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-hosted-'))
  const built = buildHostedPages(outDir)
  ;[, browser] = await Promise.all([built, launchBrowser()])
  assets = outDir
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
  server = await startTestServer({ clock: new TestClock(Date.now()) })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await browser?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
})

describe('hosted page: app passwords', () => {
  it('signs in, creates one shown once, lists it without the secret, and revokes it', { timeout: 90_000 }, async () => {
    const who = await signUp(server.base)
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 }, locale: 'en-GB' })
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    try {
      const url = `${server.base}/ui/account/app-passwords`
      await page.goto(url)
      await page.getByRole('link', { name: 'Sign in' }).click()
      await page.getByLabel(/^Email or username/).fill(who.email)
      await page.getByLabel(/^Password/).fill(who.password)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL(url)
      await page.getByTestId('no-app-passwords').waitFor()
      expect(await axe(page)).toEqual([])

      await page.getByLabel(/^Name/).fill('NAS')
      await page.getByLabel('Expires').selectOption({ label: 'In 30 days' })
      await page.getByRole('button', { name: 'Create app password' }).click()
      const secret = (await page.getByTestId('new-app-password-secret').textContent()) ?? ''
      expect(secret).toMatch(/^[A-Za-z0-9]{28}$/)
      expect(await verifyAppPassword(server.gatehouse.ctx, who.user.id, secret)).toBe(true)
      const card = page.getByTestId('app-passwords').getByText('NAS', { exact: true })
      await card.waitFor()
      expect(await page.getByTestId('app-passwords').textContent()).toContain(`Ends in …${secret.slice(-4)}`)
      expect(await axe(page)).toEqual([])

      // Shown once: a fresh load lists it (last used now, by the check above) but never shows the secret.
      await page.reload()
      await card.waitFor()
      expect(await page.getByTestId('new-app-password').count()).toBe(0)
      expect(await page.content()).not.toContain(secret)
      expect(await page.getByTestId('app-passwords').textContent()).toMatch(/Last used .* expires /)

      await page.getByRole('button', { name: 'Revoke NAS' }).click()
      await page.getByTestId('no-app-passwords').waitFor()
      expect(await verifyAppPassword(server.gatehouse.ctx, who.user.id, secret)).toBe(false)
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
