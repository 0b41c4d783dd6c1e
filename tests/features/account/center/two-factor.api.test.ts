import { readFileSync } from 'node:fs'
import { type TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { qrPath } from '../../../../renderer/hosted/src/account/qr.js'
import { HttpClient } from '../../../helpers/http.js'
import type { Page } from 'playwright-core'
import type { SignedUp } from '../../../helpers/http.js'
import { type AccountHarness, accessibleEverywhere, open, person, SESSION_COOKIE, startAccountHarness, ui } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

/**
 * The account center's Two-factor page (/ui/account/two-factor, issue 49 §4) in real Chromium
 * against the real server (SQLite, and PostgreSQL in the `postgres` project): set up with the
 * password, the QR code drawn in the page from the otpauth:// link also shown as text, confirmed
 * by a code computed with otpauth from that link's secret; backup codes shown once and downloaded,
 * one spent at a sign-in, regenerated (the old ones then refused), two-factor turned off with the
 * password. Wrong passwords and codes are announced on their field. Two-factor with codes by email
 * (no app) turned on with the password, then a sign-in asks for the mailed code (read from the SMTP
 * sink). Trusted browsers listed with their device and dates, one forgotten (its next sign-in asks
 * for a code again although it kept its cookie), then all.
 */

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'

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

/** The code of the next code mail to `email` from the SMTP sink (mails received from `from` on). */
async function mailedCode(email: string, from: number): Promise<string> {
  const mail = await h.sink.waitFor(email, (m) => h.sink.inbox.indexOf(m) >= from && /verification code: \d+/.test(m.subject))
  return /verification code: (\d+)/.exec(mail.subject)?.[1] as string
}

/**
 * Signs in on the hosted sign-in page of a browser whose session is gone, landing on the Two-factor
 * page; when the second step comes, a code by email (and "Trust this browser" with `trust`).
 * Answers whether the step was asked.
 */
async function signInByPage(page: Page, who: SignedUp, trust: boolean): Promise<boolean> {
  await page.context().clearCookies({ name: SESSION_COOKIE })
  const to = ui(h, 'account/two-factor')
  await page.goto(ui(h, 'sign-in', { returnTo: to }))
  await page.getByLabel(/^Email or username/).fill(who.email)
  await page.getByLabel(/^Password/).fill(who.password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  const step = page.getByRole('heading', { level: 1, name: 'Two-step verification' })
  const landed = page.getByRole('heading', { level: 1, name: 'Two-factor authentication' })
  await step.or(landed).waitFor()
  if (await landed.isVisible()) return false
  const from = h.sink.inbox.length
  await page.getByRole('button', { name: 'Send a code' }).click()
  await page.getByText('We sent a code to your email address').waitFor()
  await page.getByLabel(/^Verification code/).fill(await mailedCode(who.email, from))
  if (trust) await page.getByLabel('Trust this browser (skip this step next time)').check()
  await page.getByRole('button', { name: 'Verify' }).click()
  await page.waitForURL(to)
  await landed.waitFor()
  return true
}

/** A browser outside Chromium (an API client with its own jar and user agent) that signs in; with a mailed code when asked. */
async function apiBrowser(
  who: SignedUp,
  userAgent: string,
  trust: boolean,
  client = new HttpClient(h.server.base, { headers: { 'user-agent': userAgent } }),
) {
  client.jar.cookies.delete(SESSION_COOKIE)
  const answer = await client.post<{ twoFactorRedirect?: boolean; twoFactorMethods?: string[] }>('/sign-in/email', {
    email: who.email,
    password: who.password,
  })
  expect(answer.status).toBe(200)
  if (answer.body.twoFactorRedirect !== true) return { client, challenged: false }
  expect(answer.body.twoFactorMethods).toEqual(['otp'])
  const from = h.sink.inbox.length
  expect((await client.post('/two-factor/send-otp', {})).status).toBe(200)
  const verified = await client.post('/two-factor/verify-otp', { code: await mailedCode(who.email, from), trustDevice: trust })
  expect(verified.status).toBe(200)
  return { client, challenged: true }
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

  it('turns on two-factor with codes by email (no app); the next sign-in asks for the mailed code', SLOW, async () => {
    const bea = await person(h)
    const { context, page } = await open(h, bea)
    await page.goto(ui(h, 'account/two-factor'))
    await page.getByRole('heading', { level: 2, name: 'Codes by email' }).waitFor()
    expect(await page.getByTestId('two-factor-state').textContent()).toBe(
      'Two-factor authentication is off: signing in asks for your password only.',
    )
    expect(await page.getByTestId('otp-state').textContent()).toBe('Off.')
    await page.getByText(`a one-time code we send to ${bea.email}`).waitFor()
    await accessibleEverywhere(page)

    // A wrong password: focus lands on the field, which says why.
    const turnOn = page.getByRole('form', { name: 'Turn on codes by email' })
    await turnOn.getByLabel(/^Your password/).fill('not my password')
    await turnOn.getByRole('button', { name: 'Turn on codes by email' }).click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('password')
    await turnOn.getByText('Invalid password').waitFor()
    expect((await apiBrowser(bea, FIREFOX, false)).challenged).toBe(false)

    await turnOn.getByLabel(/^Your password/).fill(bea.password)
    await turnOn.getByRole('button', { name: 'Turn on codes by email' }).click()
    await page.getByTestId('otp-state').getByText('On:').waitFor()
    expect(await page.getByTestId('two-factor-notice').textContent()).toBe(
      `Two-factor authentication is on: signing in will ask for a code sent to ${bea.email}.`,
    )
    expect(await page.getByTestId('otp-state').textContent()).toBe(`On: signing in can send a one-time code to ${bea.email}.`)
    expect(await page.getByTestId('two-factor-state').textContent()).toBe(
      'Two-factor authentication is on: signing in asks for a code after your password.',
    )
    // No app, so no backup codes; the authenticator app can still be added.
    expect(await page.getByTestId('totp-state').textContent()).toBe('Off.')
    expect(await page.getByTestId('backup-codes-left').count()).toBe(0)
    await page.getByRole('form', { name: 'Set up an authenticator app' }).waitFor()
    await page.getByTestId('no-trusted-browsers').waitFor()
    await accessibleEverywhere(page)

    // The session survived (re-issued with the flag): a reload still shows the person's page.
    await page.reload()
    await page.getByTestId('otp-state').getByText('On:').waitFor()

    // Signed out, the password alone no longer signs in: the step asks for the code mailed to them.
    expect(await signInByPage(page, bea, false)).toBe(true)
    expect(await page.getByTestId('otp-state').textContent()).toBe(`On: signing in can send a one-time code to ${bea.email}.`)

    const off = page.getByRole('form', { name: 'Turn off two-factor authentication' })
    expect(await page.getByText('No more codes are sent to your email address.').count()).toBe(1)
    await off.getByLabel(/^Your password/).fill(bea.password)
    await off.getByRole('button', { name: 'Turn off two-factor' }).click()
    await page.getByTestId('two-factor-notice').getByText('Two-factor authentication is off.').waitFor()
    await page.getByTestId('otp-state').getByText('Off.').waitFor()
    expect((await signIn(bea.email, bea.password)).challenge).toBe(false)
    await context.close()
  })

  it('lists the trusted browsers with their device and dates; one forgotten is asked for a code again, then all', SLOW, async () => {
    const cleo = await person(h)
    expect((await cleo.client.post('/two-factor/enable', { password: cleo.password, method: 'otp' })).status).toBe(200)
    // A phone trusted through the API; Chromium (as Firefox on Windows) trusted through the sign-in page.
    const phone = await apiBrowser(cleo, IPHONE, true)
    expect(phone.challenged).toBe(true)
    // The server's clock stands still unless moved: the browser is trusted a minute after the phone.
    h.server.clock.advanceSeconds(60)
    const { context, page } = await open(h, null, { userAgent: FIREFOX })
    expect(await signInByPage(page, cleo, true)).toBe(true)

    const rows = page.getByTestId('trusted-browser')
    await rows.nth(1).waitFor()
    expect(await rows.count()).toBe(2)
    expect(await page.getByTestId('trusted-device').allTextContents()).toEqual(['Firefox on Windows', 'Safari on iPhone'])
    expect(await rows.nth(0).getByText('This browser').count()).toBe(1)
    expect(await rows.nth(1).getByText('This browser').count()).toBe(0)
    for (const text of await page.getByTestId('trusted-when').allTextContents()) {
      expect(text).toMatch(/^Trusted .+ · no code asked until .+$/)
    }
    await accessibleEverywhere(page)

    // Trusted: this browser signs in again with the password alone, and stays listed.
    expect(await signInByPage(page, cleo, false)).toBe(false)
    await rows.nth(1).waitFor()
    expect(await page.getByTestId('trusted-device').allTextContents()).toEqual(['Firefox on Windows', 'Safari on iPhone'])

    // Forget the phone: it keeps its cookie, but its next sign-in asks for a code.
    await page.getByRole('button', { name: /^Forget Safari on iPhone, trusted / }).click()
    await page.getByTestId('trusted-notice').getByText('Safari on iPhone was forgotten.').waitFor()
    await expect.poll(() => page.getByTestId('trusted-device').allTextContents()).toEqual(['Firefox on Windows'])
    expect(phone.client.jar.get('better-auth.trust_device')).toBeTruthy()
    expect((await apiBrowser(cleo, IPHONE, true, phone.client)).challenged).toBe(true)
    expect((await apiBrowser(cleo, IPHONE, false, phone.client)).challenged).toBe(false)

    // Both trusted again: forget every one; each is then asked for a code.
    await page.reload()
    await rows.nth(1).waitFor()
    await page.getByRole('button', { name: 'Forget every trusted browser' }).click()
    await page.getByTestId('no-trusted-browsers').waitFor()
    expect(await page.getByTestId('trusted-notice').textContent()).toBe('Every trusted browser was forgotten.')
    await accessibleEverywhere(page)
    expect((await apiBrowser(cleo, IPHONE, false, phone.client)).challenged).toBe(true)
    expect(await signInByPage(page, cleo, false)).toBe(true)
    await context.close()
  })
})
