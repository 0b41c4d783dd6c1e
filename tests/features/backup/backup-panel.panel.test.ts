import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser } from '../../helpers/browser.js'
import { signUp } from '../../helpers/http.js'
import { buildRenderer, type PanelHarness, screenshot, startPanelHarness } from '../../panel/harness.js'

/** The Backups view in real Chromium against the real server and its data directory. */

let assets: string
let browser: Browser
let h: PanelHarness
let page: Page

beforeAll(async () => {
  ;[assets, browser] = await Promise.all([buildRenderer(), launchBrowser()])
  h = await startPanelHarness(assets)
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' })
  page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(h.panel.loginURL)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await h?.close()
})

describe('backups view', () => {
  it('creates a backup with progress, lists it with its row counts, downloads it, and stages a confirmed restore naming what it replaces', {
    timeout: 60_000,
  }, async () => {
    await signUp(h.server.base)
    await page.goto(`${h.panel.origin}/#/backup`)
    await page.getByRole('heading', { level: 2, name: 'Backups' }).waitFor()
    await page.getByTestId('backups-empty').waitFor()

    await page.getByTestId('backup-create').click()
    const row = page.getByTestId('backup-row')
    await row.waitFor()
    const [name] = readdirSync(join(h.server.dataDir, 'backups'))
    expect(name).toMatch(/^gatehouse-backup-\d{8}-\d{6}-\d{3}\.tar\.gz$/)
    // Taken, kind, size, users, sessions, schema.
    const cells = await row.locator('td').allTextContents()
    expect(cells.slice(1, 5)).toEqual(['Manual', expect.stringMatching(/^\d+(\.\d+)? (KB|KiB|kB|B)$/i), '1', '1'])

    // Download: the archive itself (fetched with the page's panel cookie).
    const link = row.getByRole('link', { name: `Download ${name}` })
    const href = await link.getAttribute('href')
    const bytes = await page.evaluate(async (url) => Array.from(new Uint8Array(await (await fetch(url)).arrayBuffer())), href as string)
    expect(Buffer.from(bytes).equals(readFileSync(join(h.server.dataDir, 'backups', name as string)))).toBe(true)

    await row.getByRole('button', { name: 'Restore' }).click()
    const replaces = page.getByTestId('restore-replaces')
    await replaces.waitFor()
    expect(await replaces.textContent()).toContain(join(h.server.dataDir, 'gatehouse.db'))
    const submit = page.getByTestId('restore-submit')
    expect(await submit.isDisabled()).toBe(true)
    await page.getByTestId('restore-confirm').fill(name as string)
    await screenshot(page, 'backup-restore-confirm')
    await submit.click()
    await page.getByTestId('restore-staged').waitFor()
    expect(await page.getByTestId('restore-staged').textContent()).toContain('Restart Gatehouse to finish the restore')
    expect(readdirSync(h.server.dataDir)).toContain('restore-pending')
    await page.keyboard.press('Escape')
    await page.getByTestId('pending-restore').waitFor()
    await screenshot(page, 'backup', true)
  })

  it('saves the schedule', { timeout: 30_000 }, async () => {
    await page.goto(`${h.panel.origin}/?again=1#/backup`)
    await page.getByRole('heading', { level: 2, name: 'Backups' }).waitFor()
    await page.getByTestId('backup-schedule').click()
    await page.getByRole('option', { name: 'Every day' }).click()
    await page.getByTestId('backup-keep').fill('5')
    await page.getByTestId('backup-schedule-save').click()
    await page.getByText('Schedule saved').waitFor()
    expect(h.server.gatehouse.config.get().backup).toEqual({ schedule: 'daily', keep: 5 })
  })
})
