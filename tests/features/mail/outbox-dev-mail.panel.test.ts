import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../../helpers/http.js'
import { TestClock } from '../../helpers/server.js'
import { startSmtpSink } from '../../helpers/smtp.js'
import { buildRenderer, launchChromium, type PanelHarness, startPanelHarness } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/**
 * Issue 37 §8, development mail: with no SMTP server, every message stays in the outbox and the
 * panel's Email → Outbox shows it with its links clickable; a magic link opened from there signs
 * its recipient in. Real server and panel listener on loopback, the production renderer, Chromium.
 */

let browser: Browser
let h: PanelHarness
let context: BrowserContext
let page: Page

beforeAll(async () => {
  const [assets, launched] = await Promise.all([buildRenderer(), launchChromium()])
  browser = launched
  // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
  h = await startPanelHarness(assets, { clock: new TestClock(Date.now()), config: { magicLink: { enabled: true } } })
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

describe('the Outbox without SMTP', () => {
  it('shows a magic link that signs its recipient in when clicked', async () => {
    const user = await signUp(h.server.base, { name: 'Mia' })
    const asked = await new HttpClient(h.server.base).post('/sign-in/magic-link', {
      email: user.email,
      callbackURL: `${h.server.base}/ok`,
    })
    expect(asked.status).toBe(200)

    await page.goto(`${h.panel.origin}/#/email`)
    await page.getByRole('heading', { level: 2, name: 'Email' }).waitFor()
    await page.getByRole('tab', { name: 'Outbox' }).click()
    await page.getByTestId('development-mail').waitFor()
    await page.getByTestId('outbox-table').waitFor()
    expect(await axe(page)).toEqual([])
    await page.getByRole('button', { name: new RegExp(`^Open the message to ${user.email.replace(/[.+]/g, '\\$&')}`) }).click()
    const drawer = page.getByRole('dialog')
    await drawer.getByTestId('message-text').waitFor()
    const link = drawer.getByRole('link', { name: /\/magic-link\/verify\?token=/ }).first()
    const href = (await link.getAttribute('href')) ?? ''
    expect(href.startsWith(`${h.server.base}/magic-link/verify?token=`)).toBe(true)
    expect(await link.getAttribute('target')).toBe('_blank')
    expect(await axe(page)).toEqual([])

    const [opened] = await Promise.all([context.waitForEvent('page'), link.click()])
    await opened.waitForLoadState()
    expect(opened.url()).toBe(`${h.server.base}/ok`)
    const session = await opened.request.get(`${h.server.base}/get-session`)
    expect(((await session.json()) as { user: { email: string } } | null)?.user.email).toBe(user.email)
    await opened.close()
  })

  it('reads no message once SMTP is configured: the links are then the recipients’ alone', async () => {
    const sink = await startSmtpSink()
    await h.server.gatehouse.config.update({ mail: { smtp: { url: sink.url } } })
    try {
      const list = await h.panel.service.dispatch('email.outbox', {})
      expect(list.ok).toBe(true)
      const id = list.ok ? (list.data as { messages: Array<{ id: string }> }).messages[0]?.id : undefined
      expect(await h.panel.service.dispatch('email.message', { id })).toMatchObject({
        ok: false,
        error: { code: 'MESSAGE_NOT_SHOWN', status: 403 },
      })
    } finally {
      await h.server.gatehouse.config.update({ mail: { smtp: { url: null } } })
      await h.server.gatehouse.ctx.mailer.whenIdle?.()
      await sink.close()
    }
  })
})
