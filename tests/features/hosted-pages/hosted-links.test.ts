import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, newPage, type NewPageOptions } from '../../helpers/browser.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { buildHostedPages } from '../../helpers/hosted.js'
import { axe } from '../../helpers/axe.js'

/**
 * Issue 31 §3, hosted pages: the verify-email page opened without a link says nothing was
 * verified (and offers a new link), a reset link that no longer works offers a new one on the
 * spot, and a rate-limited answer says in words when to try again. Real Chromium against the real
 * server on loopback, the pages built as `npm run build` does, the real SMTP sink, axe-core.
 */

const PASSWORD = 'correct horse battery'

let assets = ''
let server: TestServer
let sink: SmtpSink
let browser: Browser
const pageErrors: string[] = []

beforeAll(async () => {
  const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-hosted-'))
  const built = buildHostedPages(outDir)
  ;[, browser, sink] = await Promise.all([built, launchBrowser(), startSmtpSink()])
  assets = outDir
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    // The limiter on (tests start with it off), loose but for the rule the last test sets.
    config: { mail: { smtp: { url: sink.url } }, rateLimit: { enabled: true, max: 10_000, strictPaths: [] } },
  })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await browser?.close()
  await sink?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
  expect(pageErrors).toEqual([])
})

/** Each page's uncaught errors go to pageErrors (none may occur). */
const PAGE: NewPageOptions = { errors: pageErrors }

const ui = (page: string, params: Record<string, string> = {}) => {
  const url = new URL(`${server.base}/ui/${page}`)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

const linkIn = (text: string): string => {
  const found = /https?:\/\/\S+/.exec(text)?.[0]
  if (!found) throw new Error(`no link in mail: ${text}`)
  return found.replace(/[)>.,]+$/, '')
}

/** A browser context signed in as the user of `signed` (its session cookie copied in). */
async function signedInPage(signed: Awaited<ReturnType<typeof signUp>>): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await newPage(browser, PAGE)
  await opened.context.addCookies([
    { name: 'better-auth.session_token', value: signed.client.jar.get('better-auth.session_token') ?? '', url: server.origin },
  ])
  return opened
}

/** The server's word: a fresh password sign-in's user. */
const emailVerified = async (email: string): Promise<boolean> => {
  const answer = await new HttpClient(server.base).post<{ user: { emailVerified: boolean } }>('/sign-in/email', {
    email,
    password: PASSWORD,
  })
  expect(answer.status).toBe(200)
  return answer.body.user.emailVerified
}

describe('hosted verify-email page', () => {
  it('opened bare and signed out, it verifies nothing and says so', async () => {
    const { context, page } = await newPage(browser, PAGE)
    await page.goto(ui('verify-email'))
    await page.getByRole('heading', { level: 1, name: 'Verify your email' }).waitFor()
    await page.getByTestId('no-verification-link').waitFor()
    expect(await page.getByText('Email verified').count()).toBe(0)
    expect(await page.getByTestId('email-verified').count()).toBe(0)
    await page.getByText('Sign in to have a new link sent to your address.').waitFor()
    expect(await axe(page)).toEqual([])
    await context.close()
  })

  it('opened bare by an unverified account, it says so, even with the marker, and sends a new link that verifies', async () => {
    const signed = await signUp(server.base, { password: PASSWORD })
    const { context, page } = await signedInPage(signed)
    // The marker the sign-up page puts in its callbackURL does not outweigh the server's word.
    await page.goto(ui('verify-email', { verified: '1' }))
    await page.getByRole('heading', { level: 1, name: 'Verify your email' }).waitFor()
    expect(await page.getByTestId('no-verification-link').textContent()).toContain(`${signed.email} is not verified yet`)
    expect(await page.getByTestId('email-verified').count()).toBe(0)
    expect(await axe(page)).toEqual([])

    await page.getByRole('button', { name: 'Send a new verification link' }).click()
    await page.getByTestId('verification-sent').waitFor()
    const mail = await sink.waitFor(signed.email)
    const link = linkIn(mail.text)
    expect(new URL(link).searchParams.get('callbackURL')).toBe(ui('verify-email', { verified: '1' }))
    expect(await emailVerified(signed.email)).toBe(false)
    await page.goto(link)
    await page.getByTestId('email-verified').waitFor()
    await page.getByRole('heading', { level: 1, name: 'Email verified' }).waitFor()
    expect(await emailVerified(signed.email)).toBe(true)
    await context.close()
  })

  it("a sign-up's link followed in another browser (no session) lands on 'Email verified'; a forged one offers to sign in", async () => {
    const email = uniqueEmail('linkonly')
    const client = new HttpClient(server.base)
    const created = await client.post('/sign-up/email', { name: 'Link Only', email, password: PASSWORD })
    expect(created.status).toBe(200)
    await client.post('/send-verification-email', { email, callbackURL: ui('verify-email', { verified: '1' }) })
    const mail = await sink.waitFor(email, (m) => m.text.includes('verified%3D1'))
    const link = linkIn(mail.text)
    const { context, page } = await newPage(browser, PAGE)
    const forged = new URL(link)
    forged.searchParams.set('token', `${forged.searchParams.get('token')}x`)
    await page.goto(forged.href)
    await page.getByRole('heading', { level: 1, name: 'Email not verified' }).waitFor()
    await page.getByText('The verification link is invalid.').waitFor()
    expect(await page.getByTestId('email-verified').count()).toBe(0)
    expect(await axe(page)).toEqual([])
    expect(await emailVerified(email)).toBe(false)

    await page.goto(link)
    await page.getByRole('heading', { level: 1, name: 'Email verified' }).waitFor()
    expect(await emailVerified(email)).toBe(true)
    await context.close()
  })
})

describe('hosted reset-password page', () => {
  it('a bad link offers a new one on the spot, whose link resets the password', async () => {
    const user = await signUp(server.base, { password: PASSWORD })
    const { context, page } = await newPage(browser, PAGE)
    await page.goto(ui('reset-password', { error: 'INVALID_TOKEN' }))
    await page.getByRole('heading', { level: 1, name: 'This link does not work' }).waitFor()
    await page.getByText('The reset link is invalid or has expired.').waitFor()
    expect(await axe(page)).toEqual([])
    await page.getByLabel(/^Email/).fill(user.email)
    await page.getByRole('button', { name: 'Send a new link' }).click()
    await page.getByTestId('reset-requested').waitFor()

    const mail = await sink.waitFor(user.email, (m) => /reset/i.test(m.subject))
    await page.goto(linkIn(mail.text))
    await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor()
    await page.getByLabel(/^New password/).fill('a brand new passphrase')
    await page.getByLabel(/^Repeat the new password/).fill('a brand new passphrase')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByTestId('password-changed').waitFor()
    expect(
      (await new HttpClient(server.base).post('/sign-in/email', { email: user.email, password: 'a brand new passphrase' })).status,
    ).toBe(200)
    await context.close()
  })

  it('a link that expires while the page is open turns into the offer of a new one', async () => {
    const user = await signUp(server.base, { password: PASSWORD })
    const { context, page } = await newPage(browser, PAGE)
    await new HttpClient(server.base).post('/request-password-reset', { email: user.email, redirectTo: ui('reset-password') })
    const mail = await sink.waitFor(user.email, (m) => /reset/i.test(m.subject))
    await page.goto(linkIn(mail.text))
    await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor()
    // resetPasswordTokenExpiresIn is an hour.
    server.clock.advanceSeconds(3601)
    await page.getByLabel(/^New password/).fill('another new passphrase')
    await page.getByLabel(/^Repeat the new password/).fill('another new passphrase')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('heading', { level: 1, name: 'This link does not work' }).waitFor()
    await page.getByRole('button', { name: 'Send a new link' }).waitFor()
    expect(await axe(page)).toEqual([])
    expect((await new HttpClient(server.base).post('/sign-in/email', { email: user.email, password: PASSWORD })).status).toBe(200)
    await context.close()
  })
})

describe('hosted pages under a rate limit', () => {
  it('say in words when to try again (Retry-After)', async () => {
    server.gatehouse.config.update({ rateLimit: { customRules: { '/request-password-reset': { window: 120, max: 1 } } } })
    try {
      const { context, page } = await newPage(browser, PAGE)
      await page.goto(ui('forgot-password'))
      await page.getByLabel(/^Email/).fill('nobody@example.com')
      await page.getByRole('button', { name: 'Send reset link' }).click()
      await page.getByTestId('reset-requested').waitFor()
      await page.reload()
      await page.getByLabel(/^Email/).fill('nobody@example.com')
      const answered = page.waitForResponse((r) => r.url().endsWith('/request-password-reset'))
      await page.getByRole('button', { name: 'Send reset link' }).click()
      const limited = await answered
      expect(limited.status()).toBe(429)
      expect(limited.headers()['retry-after']).toBe('120')
      const alert = page.getByRole('alert')
      await alert.getByText('Too many requests. Try again in 2 minutes.').waitFor()
      expect(await alert.textContent()).not.toContain('try again later')
      expect(await axe(page)).toEqual([])

      // A minute and a half later the wait left is 30 seconds.
      server.clock.advanceSeconds(90)
      await page.getByRole('button', { name: 'Send reset link' }).click()
      await alert.getByText('Too many requests. Try again in 30 seconds.').waitFor()
      await context.close()
    } finally {
      server.gatehouse.config.update({ rateLimit: { customRules: null } })
    }
  })
})
