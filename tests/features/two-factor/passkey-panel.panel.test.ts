import { createAuthClient } from 'better-auth/client'
import { twoFactorClient } from 'better-auth/client/plugins'
import { type TOTP, URI } from 'otpauth'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listMailOutbox } from '../../../server/mail/index.js'
import { CookieJar, jarFetch, uniqueEmail } from '../../helpers/http.js'
import { buildRenderer, launchChromium, type PanelHarness, startPanelHarness } from '../../panel/harness.js'

/**
 * The control panel's second-factor views in real Chromium: the overview card, the Users drawer's
 * enrolment summary and "Send a set-up link", and its tab (reset two-factor).
 */

let assets: string
let browser: Browser
let h: PanelHarness
let context: BrowserContext
let page: Page
const PASSWORD = 'correct horse battery'

beforeAll(async () => {
  ;[assets, browser] = await Promise.all([buildRenderer(), launchChromium()])
  h = await startPanelHarness(assets, {
    config: { twoFactor: { enabled: true }, passkey: { enabled: true }, magicLink: { enabled: true } },
  })
  context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' })
  page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(h.panel.loginURL)
}, 180_000)

afterAll(async () => {
  await context?.close()
  await browser?.close()
  await h?.close()
})

describe('panel: second factors', () => {
  it('counts users without a second factor, shows a user’s factors and resets two-factor', { timeout: 60_000 }, async () => {
    const { server } = h
    const jar = new CookieJar()
    const client = createAuthClient({
      baseURL: server.origin,
      plugins: [twoFactorClient()],
      fetchOptions: { customFetchImpl: jarFetch(server.origin, jar) },
    })
    const email = uniqueEmail('drawer')
    await client.signUp.email({ name: 'Drawer', email, password: PASSWORD })
    const enable = (await client.twoFactor.enable({ password: PASSWORD })).data as { totpURI: string }
    expect(
      (await client.twoFactor.verifyTotp({ code: (URI.parse(enable.totpURI) as TOTP).generate({ timestamp: server.clock.now() }) })).error,
    ).toBeNull()
    await createAuthClient({
      baseURL: server.origin,
      fetchOptions: { customFetchImpl: jarFetch(server.origin, new CookieJar()) },
    }).signUp.email({
      name: 'Plain',
      email: uniqueEmail('plain'),
      password: PASSWORD,
    })

    await page.goto(`${h.panel.origin}/?load=1#/overview`)
    const card = page.getByTestId('second-factor-summary')
    await card.waitFor()
    await expect.poll(() => card.textContent()).toContain('With a second factor: 1')
    expect(await page.getByTestId('without-second-factor').textContent()).toBe('Without: 1')

    await page.goto(`${h.panel.origin}/?load=2#/users`)
    await page.getByTestId(`user-row-${email}`).click()
    await page.getByTestId('user-drawer').waitFor()
    // At a glance: what the person has enrolled.
    await expect
      .poll(() => page.getByTestId('user-enrolled').textContent())
      .toBe('Authenticator app: on · Passkeys: 0 · Backup codes left: 10 · App passwords: 0 · Trusted browsers: 0')
    // "Send a set-up link": a magic link to the enrolment page, kept in the outbox (no SMTP here).
    await page.getByTestId('send-set-up-link').click()
    await page.getByText(`Set-up link mailed to ${email}`).waitFor()
    const queued = await listMailOutbox(server.gatehouse.ctx, { to: email })
    expect(queued.messages.map((m) => m.kind)).toContain('set-up-link')
    await page.getByRole('tab', { name: 'Second factors' }).click()
    const factors = page.getByTestId('second-factors')
    await factors.waitFor()
    expect(await factors.textContent()).toContain('authenticator app')
    expect(await factors.textContent()).toContain('Backup codes left10')
    await page.getByTestId('reset-two-factor').click()
    await page.getByRole('dialog').getByRole('button', { name: 'Reset', exact: true }).click()
    await page.getByText(`Two-factor of ${email} is reset`).waitFor()
    const signIn = await createAuthClient({
      baseURL: server.origin,
      fetchOptions: { customFetchImpl: jarFetch(server.origin, new CookieJar()) },
    }).signIn.email({
      email,
      password: PASSWORD,
    })
    expect(signIn.data).toMatchObject({ redirect: false })
  })
})
