import { readFileSync } from 'node:fs'
import { type TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { qrPath } from '../../../../renderer/hosted/src/account/qr.js'
import { HttpClient } from '../../../helpers/http.js'
import { type AccountHarness, accessibleEverywhere, open, person, startAccountHarness, ui } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

/**
 * The account center's Two-factor page (/ui/account/two-factor, issue 49 §4) in real Chromium
 * against the real server (SQLite, and PostgreSQL in the `postgres` project): set up with the
 * password, the QR code drawn in the page from the otpauth:// link also shown as text, confirmed
 * by a code computed with otpauth from that link's secret; backup codes shown once and downloaded,
 * one spent at a sign-in, regenerated (the old ones then refused), two-factor turned off with the
 * password. Wrong passwords and codes are announced on their field.
 */

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness({ twoFactor: { enabled: true } })
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

/** A password sign-in through the API: a session (200 with token) or the second step's challenge. */
async function signIn(email: string, password: string): Promise<{ client: HttpClient; challenge: boolean }> {
  const client = new HttpClient(h.server.base)
  const answer = await client.post<{ twoFactorRedirect?: boolean; token?: string }>('/sign-in/email', { email, password })
  expect(answer.status).toBe(200)
  return { client, challenge: answer.body.twoFactorRedirect === true }
}

describe('account two-factor page', () => {
  it('sets up an authenticator app from the QR code, keeps the backup codes, regenerates them and turns it off', SLOW, async () => {
    const ada = await person(h)
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account/two-factor'))
    await page.getByRole('heading', { level: 1, name: 'Two-factor authentication' }).waitFor()
    expect(await page.getByTestId('totp-state').textContent()).toBe('Off.')
    await accessibleEverywhere(page)

    // A wrong password: focus lands on the field, which says why.
    const setUp = page.getByRole('form', { name: 'Set up an authenticator app' })
    await setUp.getByLabel(/^Your password/).fill('not my password')
    await setUp.getByRole('button', { name: 'Set up' }).click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('password')
    await setUp.getByText('Invalid password').waitFor()

    await setUp.getByLabel(/^Your password/).fill(ada.password)
    await setUp.getByRole('button', { name: 'Set up' }).click()
    const uri = (await page.getByTestId('totp-uri').textContent()) ?? ''
    expect(uri).toMatch(/^otpauth:\/\/totp\//)
    const totp = URI.parse(uri) as TOTP
    expect(await page.getByTestId('totp-secret').textContent()).toBe(totp.secret.base32)
    // The QR code is the link itself, drawn in the page (no image fetched from anywhere).
    expect(await page.getByTestId('totp-qr-path').getAttribute('d')).toBe(qrPath(uri).d)
    await accessibleEverywhere(page)

    // The code of the server's time (its clock is the test's, set at start and not running on).
    const code = () => totp.generate({ timestamp: h.server.clock.now() })
    const confirm = page.getByRole('form', { name: 'Confirm the authenticator app' })
    await confirm.getByLabel(/^Code from the app/).fill(code() === '000000' ? '111111' : '000000')
    await confirm.getByRole('button', { name: 'Turn on' }).click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'code')
    expect(await confirm.getByLabel(/^Code from the app/).getAttribute('aria-invalid')).toBe('true')
    await confirm.getByLabel(/^Code from the app/).fill(code())
    await confirm.getByRole('button', { name: 'Turn on' }).click()
    await page.getByTestId('backup-codes').waitFor()
    expect(await page.getByTestId('two-factor-notice').textContent()).toBe('Two-factor authentication is on.')
    const shown = await page.getByTestId('backup-codes').locator('li').allTextContents()
    expect(shown).toHaveLength(10)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()])
    const file = readFileSync((await download.path()) ?? '', 'utf8')
    for (const code of shown) expect(file).toContain(code)
    await page.getByTestId('backup-codes-left').waitFor()
    expect(await page.getByTestId('backup-codes-left').textContent()).toBe('Backup codes left: 10')
    await accessibleEverywhere(page)

    // The password alone no longer signs in; a backup code finishes the sign-in once.
    const second = await signIn(ada.email, ada.password)
    expect(second.challenge).toBe(true)
    expect((await second.client.post('/two-factor/verify-backup-code', { code: shown[0] })).status).toBe(200)
    // Shown once: a reload lists how many are left, not the codes.
    await page.reload()
    await page.getByTestId('backup-codes-left').waitFor()
    expect(await page.getByTestId('backup-codes-left').textContent()).toBe('Backup codes left: 9')
    expect(await page.getByTestId('backup-codes').count()).toBe(0)
    expect(await page.content()).not.toContain(shown[1])

    const regenerate = page.getByRole('form', { name: 'Make new backup codes' })
    await regenerate.getByLabel(/^Your password/).fill(ada.password)
    await regenerate.getByRole('button', { name: 'Make new backup codes' }).click()
    await page.getByTestId('backup-codes').waitFor()
    const renewed = await page.getByTestId('backup-codes').locator('li').allTextContents()
    expect(renewed).toHaveLength(10)
    expect(renewed).not.toContain(shown[1])
    const third = await signIn(ada.email, ada.password)
    expect((await third.client.post('/two-factor/verify-backup-code', { code: shown[1] })).status).toBe(401)

    const off = page.getByRole('form', { name: 'Turn off two-factor authentication' })
    await off.getByLabel(/^Your password/).fill(ada.password)
    await off.getByRole('button', { name: 'Turn off two-factor' }).click()
    await page.getByText('Two-factor authentication is off.').waitFor()
    expect(await page.getByTestId('totp-state').textContent()).toBe('Off.')
    expect((await signIn(ada.email, ada.password)).challenge).toBe(false)
    await context.close()
  })
})
