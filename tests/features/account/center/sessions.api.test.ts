import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient } from '../../../helpers/http.js'
import { type AccountHarness, accessibleEverywhere, open, person, signInThroughPage, startAccountHarness } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'

/**
 * The account center's Sessions page (/ui/account/sessions, issue 49 §6) in real Chromium against
 * the real server (SQLite, and PostgreSQL in the `postgres` project): each session with its device
 * (from its user agent), address, start and last activity, "this device" first; one signed out
 * from here ends in the other browser; "sign out every other device" ends the rest, not this one.
 */

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness()
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

describe('account sessions page', () => {
  it('lists each device, signs one out (seen from that browser), then every other', SLOW, async () => {
    const ada = await person(h)
    const laptop = await open(h, null)
    const phone = await open(h, null, { userAgent: FIREFOX_ON_WINDOWS })
    await signInThroughPage(h, laptop.page, ada, 'account/sessions')
    await signInThroughPage(h, phone.page, ada, 'account')
    await phone.page.getByTestId('account-name').waitFor()

    const page = laptop.page
    await page.reload()
    const cards = page.getByTestId('sessions').locator('[data-testid^="session-"]')
    await page.getByRole('button', { name: /^Sign out Firefox on Windows/ }).waitFor()
    // Ada's sign-up session (the API client), this browser's and the other browser's.
    expect(await cards.count()).toBe(3)
    const first = (await cards.first().textContent()) ?? ''
    expect(first).toMatch(/^(?:Headless )?Chrome on LinuxThis device/)
    expect(first).toContain('From 127.0.0.1')
    expect(first).toMatch(/Signed in .* · last active /)
    expect(await cards.first().getByRole('button').count()).toBe(0)
    await accessibleEverywhere(page)

    await page.getByRole('button', { name: /^Sign out Firefox on Windows/ }).click()
    expect(await page.getByRole('status').textContent()).toBe('Signed out of Firefox on Windows.')
    await page.getByRole('button', { name: /^Sign out Firefox on Windows/ }).waitFor({ state: 'detached' })
    expect(await cards.count()).toBe(2)
    // The other browser is signed out.
    await phone.page.reload()
    await phone.page.getByTestId('signed-out').waitFor()

    await page.getByRole('button', { name: 'Sign out every other device' }).click()
    await page.getByTestId('no-other-sessions').waitFor()
    expect(await page.getByRole('status').textContent()).toBe('Signed out of every other device.')
    expect(await cards.count()).toBe(1)
    expect((await ada.client.get('/get-session')).body).toBeNull()
    // This browser stays signed in.
    await page.reload()
    await page.getByTestId('no-other-sessions').waitFor()
    expect((await new HttpClient(h.server.base).post('/sign-in/email', { email: ada.email, password: ada.password })).status).toBe(200)
    await accessibleEverywhere(page)
    await laptop.context.close()
    await phone.context.close()
  })
})
