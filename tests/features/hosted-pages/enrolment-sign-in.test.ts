import { rmSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axe } from '../../helpers/axe.js'
import { HOSTED_WINDOW, launchBrowser, newPage } from '../../helpers/browser.js'
import { FakeOidc } from '../../helpers/fake-oidc.js'
import { buildHostedPages } from '../../helpers/hosted.js'
import { signUp, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'

/**
 * Issue 49 §10 for the sign-ins by redirect: with two-factor enforcement on a person's role, a
 * hosted sign-in by mailed link or by a (generic OAuth) provider passes through the Two-factor
 * page's enrolment step before returnTo, as a password sign-in does: the provider's callback and
 * the link come back to the sign-in page (`?done=1&returnTo=`), which goes on by the one rule
 * (`GET /two-factor/status`). During the grace the step says how long is left and Skip goes on.
 * Real Chromium, the real server, a real SMTP sink and a loopback OpenID provider.
 */

let assets = ''
let server: TestServer
let sink: SmtpSink
let browser: Browser
let op: FakeOidc
const GRACE_DAYS = 3

beforeAll(async () => {
  ;[assets, browser, sink] = await Promise.all([buildHostedPages(), launchBrowser(), startSmtpSink()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  op = await new FakeOidc('enrol-generic', 'enrol-generic-secret').start()
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    config: { mail: { smtp: { url: sink.url } } },
  })
  server.gatehouse.config.update({
    magicLink: { enabled: true },
    twoFactor: { enabled: true, enforcement: { roles: ['user'], gracePeriod: GRACE_DAYS * 86_400 } },
    genericOAuth: {
      config: [
        {
          providerId: 'corp-sso',
          name: 'Corp SSO',
          discoveryUrl: op.discoveryUrl,
          clientId: 'enrol-generic',
          clientSecret: 'enrol-generic-secret',
        },
      ],
    },
  })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await op?.close()
  await browser?.close()
  await sink?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
})

/** A page in a fresh context (the shared helper), the hosted window at `width`. */
const openPage = (width = 1024) => newPage(browser, { window: { ...HOSTED_WINDOW, viewport: { width, height: 800 } } })

const ui = (page: string, params: Record<string, string> = {}) => {
  const url = new URL(`${server.base}/ui/${page}`)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

/** On the enrolment step for `returnTo`, told the time left; Skip for now goes on to returnTo, signed in as `email`. */
async function throughEnrolment(page: Page, returnTo: string, email: string): Promise<void> {
  await page.waitForURL(/\/ui\/account\/two-factor\?/)
  const step = new URL(page.url())
  expect(step.searchParams.get('enrol')).toBe('1')
  expect(step.searchParams.get('returnTo')).toBe(returnTo)
  const notice = await page.getByTestId('enrolment-required').innerText()
  // What counts, as offered here: the app and codes by email (twoFactor.otpOptions.enabled, the default).
  expect(notice).toContain(`(${GRACE_DAYS} days left). Set up an authenticator app or codes by email below.`)
  expect(await axe(page)).toEqual([])
  await page.getByRole('button', { name: 'Skip for now' }).click()
  await page.waitForURL(returnTo)
  const session = JSON.parse((await page.locator('body').textContent()) ?? 'null') as { user: { email: string } }
  expect(session.user.email).toBe(email)
}

describe('hosted sign-in by redirect under two-factor enforcement', () => {
  it('a mailed link signs in and passes through the enrolment step before returnTo', async () => {
    const person = await signUp(server.base, { name: 'Link Person' })
    const { context, page } = await openPage()
    const returnTo = `${server.base}/get-session`
    await page.goto(ui('sign-in', { returnTo }))
    await page.getByRole('button', { name: 'Email me a link' }).click()
    await page.getByRole('textbox', { name: 'Email' }).fill(person.email)
    await page.getByRole('button', { name: 'Send the link' }).click()
    await page.getByTestId('link-sent').waitFor()
    const mail = await sink.waitFor(person.email, (m) => /^Sign in to /.test(m.subject))
    const link = (/https?:\/\/\S+magic-link\/verify\S+/.exec(mail.text)?.[0] ?? '').replace(/[)>.,]+$/, '')
    // The link comes back to the sign-in page, which goes on with returnTo.
    expect(new URL(link).searchParams.get('callbackURL')).toBe(ui('sign-in', { done: '1', returnTo }))
    await page.goto(link)
    await throughEnrolment(page, returnTo, person.email)
    await context.close()
  }, 60_000)

  it('a generic OAuth provider signs in and passes through the enrolment step before returnTo (phone width)', async () => {
    op.user = { sub: `enrol-${Date.now()}`, email: uniqueEmail('enrol-generic'), email_verified: true, name: 'Gene Rick' }
    const { context, page } = await openPage(360)
    const returnTo = `${server.base}/get-session`
    await page.goto(ui('sign-in', { returnTo }))
    const started = page.waitForRequest((r) => r.url() === `${server.base}/sign-in/social`)
    await page.getByRole('button', { name: 'Continue with Corp SSO' }).click()
    expect((await started).postDataJSON()).toEqual({
      provider: 'corp-sso',
      callbackURL: ui('sign-in', { done: '1', returnTo }),
      errorCallbackURL: ui('error'),
    })
    await throughEnrolment(page, returnTo, op.user.email as string)
    await context.close()
  }, 60_000)

  it('a sign-up signed in by following its verification link passes through the enrolment step on Continue', async () => {
    server.gatehouse.config.update({
      emailAndPassword: { requireEmailVerification: true },
      emailVerification: { sendOnSignUp: true, autoSignInAfterVerification: true },
    })
    try {
      const email = uniqueEmail('enrol-verify')
      const { context, page } = await openPage()
      const returnTo = `${server.base}/get-session`
      await page.goto(ui('sign-up', { returnTo }))
      await page.getByRole('textbox', { name: 'Name' }).fill('Verify Person')
      await page.getByRole('textbox', { name: 'Email' }).fill(email)
      await page.getByLabel(/^Password/).fill('a-long-enough-password')
      await page.getByRole('button', { name: 'Create account' }).click()
      const mail = await sink.waitFor(email, (m) => /verif/i.test(m.subject))
      const link = (/https?:\/\/\S+verify-email\?token\S+/.exec(mail.text)?.[0] ?? '').replace(/[)>.,]+$/, '')
      await page.goto(link)
      await page.getByTestId('email-verified').waitFor()
      // Signed in by the link: Continue goes through the enrolment step, not straight to returnTo.
      await expect.poll(() => page.getByTestId('verified-continue').getAttribute('href')).toContain('/ui/account/two-factor?')
      await page.getByTestId('verified-continue').click()
      await throughEnrolment(page, returnTo, email)
      await context.close()
    } finally {
      server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: false }, emailVerification: null })
    }
  }, 60_000)

  it('without enforcement the same link goes on to returnTo directly', async () => {
    server.gatehouse.config.update({ twoFactor: { enforcement: null } })
    try {
      const person = await signUp(server.base, { name: 'Free Person' })
      const { context, page } = await openPage()
      const returnTo = `${server.base}/get-session`
      const visited: string[] = []
      page.on('framenavigated', (f) => {
        if (f === page.mainFrame()) visited.push(f.url())
      })
      await page.goto(ui('sign-in', { returnTo }))
      await page.getByRole('button', { name: 'Email me a link' }).click()
      await page.getByRole('textbox', { name: 'Email' }).fill(person.email)
      await page.getByRole('button', { name: 'Send the link' }).click()
      await page.getByTestId('link-sent').waitFor()
      const mail = await sink.waitFor(person.email, (m) => /^Sign in to /.test(m.subject))
      const link = (/https?:\/\/\S+magic-link\/verify\S+/.exec(mail.text)?.[0] ?? '').replace(/[)>.,]+$/, '')
      await page.goto(link)
      await page.waitForURL(returnTo)
      expect(visited.some((u) => u.includes('/ui/account/two-factor'))).toBe(false)
      const session = JSON.parse((await page.locator('body').textContent()) ?? 'null') as { user: { email: string } }
      expect(session.user.email).toBe(person.email)
      await context.close()
    } finally {
      server.gatehouse.config.update({ twoFactor: { enforcement: { roles: ['user'], gracePeriod: GRACE_DAYS * 86_400 } } })
    }
  }, 60_000)

  it('the enrolment step names what counts here: the app alone without codes by email, and a passkey when passkeys are on', async () => {
    server.gatehouse.config.update({ twoFactor: { otpOptions: { enabled: false } }, passkey: { enabled: true } })
    try {
      const person = await signUp(server.base, { name: 'Word Person' })
      const { context, page } = await openPage()
      const returnTo = `${server.base}/get-session`
      await page.goto(ui('sign-in', { returnTo }))
      await page.getByLabel(/^Email/).fill(person.email)
      await page.getByLabel(/^Password/).fill(person.password)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL(/\/ui\/account\/two-factor\?/)
      const notice = await page.getByTestId('enrolment-required').innerText()
      expect(notice).toContain('left). Set up an authenticator app below, or add a passkey on the Passkeys page.')
      expect(await page.getByRole('heading', { name: 'Codes by email' }).count()).toBe(0)
      await context.close()
    } finally {
      server.gatehouse.config.update({ twoFactor: { otpOptions: { enabled: true } }, passkey: null })
    }
  }, 60_000)
})
