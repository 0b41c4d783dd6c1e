import { rmSync } from 'node:fs'
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, newPage, type NewPageOptions } from '../../helpers/browser.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { buildHostedPages } from '../../helpers/hosted.js'
import { axe } from '../../helpers/axe.js'

/**
 * Issue 27 on the hosted sign-in page, in real Chromium against the real server: "Email me a link"
 * (magicLink.enabled) and "Email me a code" (emailOTP.enabled) are offered, the link or code is
 * read from the real SMTP sink, and both flows end signed in at returnTo (axe-core: WCAG 2 A/AA).
 */

let assets = ''
let server: TestServer
let sink: SmtpSink
let browser: Browser
const pageErrors: string[] = []

beforeAll(async () => {
  ;[assets, browser, sink] = await Promise.all([buildHostedPages(), launchBrowser(), startSmtpSink()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    config: { mail: { smtp: { url: sink.url } } },
  })
  server.gatehouse.config.update({ appName: 'Acme', magicLink: { enabled: true }, emailOTP: { enabled: true } })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await browser?.close()
  await sink?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
})

/** Each page's uncaught errors and CSP violations go to pageErrors (none may occur). */
const PAGE: NewPageOptions = { errors: pageErrors, cspViolations: pageErrors }

const ui = (page: string, params: Record<string, string> = {}) => {
  const url = new URL(`${server.base}/ui/${page}`)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

const sessionCookie = async (context: BrowserContext) => (await context.cookies()).find((c) => c.name === 'better-auth.session_token')

describe('hosted sign-in page: sign-in by email', () => {
  it('"Email me a link" mails a magic link that signs in and goes to returnTo', async () => {
    const user = await signUp(server.base, { name: 'Link Person' })
    const { context, page } = await newPage(browser, PAGE)
    const returnTo = `${server.base}/get-session`
    await page.goto(ui('sign-in', { returnTo }))
    await page.getByRole('button', { name: 'Email me a link' }).click()
    expect(await axe(page)).toEqual([])
    await page.getByRole('textbox', { name: 'Email' }).fill(user.email)
    await page.getByRole('button', { name: 'Send the link' }).click()
    await page.getByTestId('link-sent').filter({ hasText: user.email }).waitFor()
    expect(await sessionCookie(context)).toBeUndefined()

    const mail = await sink.waitFor(user.email, (m) => /^Sign in to /.test(m.subject))
    const link = (/https?:\/\/\S+magic-link\/verify\S+/.exec(mail.text)?.[0] ?? '').replace(/[)>.,]+$/, '')
    // Back to the sign-in page, which goes on to returnTo (through the enrolment step when due).
    expect(new URL(link).searchParams.get('callbackURL')).toBe(ui('sign-in', { done: '1', returnTo }))
    await page.goto(link)
    await page.waitForURL(returnTo)
    const session = JSON.parse((await page.locator('pre').first().textContent()) ?? 'null') as { user: { email: string } }
    expect(session.user.email).toBe(user.email)
    expect((await sessionCookie(context))?.httpOnly).toBe(true)
    await context.close()
  })

  it('"Email me a code" mails a code; the code step refuses a wrong one, then signs in (done state without returnTo)', async () => {
    const email = uniqueEmail('hosted-otp')
    await signUp(server.base, { email, name: 'Code Person' })
    const { context, page } = await newPage(browser, PAGE)
    await page.goto(ui('sign-in'))
    await page.getByRole('button', { name: 'Email me a code' }).click()
    await page.getByRole('textbox', { name: 'Email' }).fill(email)
    await page.getByRole('button', { name: 'Send the code' }).click()
    await page.getByTestId('code-sent').filter({ hasText: email }).waitFor()
    expect(await axe(page)).toEqual([])
    const mail = await sink.waitFor(email, (m) => /sign-in code/.test(m.subject))
    const code = (/: (\d+)$/.exec(mail.subject) as RegExpMatchArray)[1] as string

    const input = page.getByLabel(/^Code from the email/)
    await input.fill(String((Number(code) + 1) % 1_000_000).padStart(6, '0'))
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByText('Invalid OTP').waitFor()
    expect(await sessionCookie(context)).toBeUndefined()
    await input.fill(code)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByTestId('signed-in').filter({ hasText: 'Signed in as Code Person' }).waitFor()
    const cookie = await sessionCookie(context)
    expect(cookie).toBeDefined()
    const me = await new HttpClient(server.base, { headers: { cookie: `${cookie?.name}=${cookie?.value}` } }).get<{
      user: { email: string }
    }>('/get-session')
    expect(me.body.user.email).toBe(email)
    await context.close()
  })

  it('offers neither button while both are off, and goes back to the password form', async () => {
    const { context, page } = await newPage(browser, PAGE)
    await page.goto(ui('sign-in'))
    await page.getByRole('button', { name: 'Email me a code' }).click()
    await page.getByRole('button', { name: 'Sign in another way' }).click()
    await page.getByLabel(/^Password/).waitFor()
    server.gatehouse.config.update({ magicLink: { enabled: false }, emailOTP: { enabled: false } })
    try {
      await page.goto(ui('sign-in'))
      await page.getByLabel(/^Password/).waitFor()
      expect(await page.getByRole('button', { name: /^Email me a/ }).count()).toBe(0)
    } finally {
      server.gatehouse.config.update({ magicLink: { enabled: true }, emailOTP: { enabled: true } })
    }
    await context.close()
  })

  it('met no CSP violation or script error', () => {
    expect(pageErrors).toEqual([])
  })
})
