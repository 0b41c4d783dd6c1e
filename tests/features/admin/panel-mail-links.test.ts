import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PanelCaller } from '../../../server/core/panel-caller.js'
import { findUserById } from '../../../server/core/users.js'
import { importedUserId, importUsersFile } from '../../../server/features/import/users.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { launchBrowser, newPage, type NewPageOptions } from '../../helpers/browser.js'
import { HttpClient, signUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { buildHostedPages } from '../../helpers/hosted.js'

/**
 * Issue 37 §5 and §6: the links the panel's "Send password reset" and "Send verification mail"
 * mail work end to end (and issue 49's "Send a set-up link": signed in, on the enrolment page). An imported user without a password follows the reset link in Chromium,
 * lands on the hosted reset page with a valid token, chooses a password and signs in with it on
 * the hosted sign-in page; a verification link ends on the hosted "Email verified" page (never a
 * JSON 404). Real server on loopback, the operations dispatched as the panel's renderer does
 * (as a signed-in administrator), the real SMTP sink, the hosted pages built as `npm run build` does.
 */

const work = mkdtempSync(join(tmpdir(), 'gatehouse-panel-links-'))
let server: TestServer
let sink: SmtpSink
let browser: Browser
let panel: PanelService
let ada: PanelCaller
const pageErrors: string[] = []

beforeAll(async () => {
  const assets = join(work, 'hosted')
  const built = buildHostedPages(assets)
  ;[, browser, sink] = await Promise.all([built, launchBrowser(), startSmtpSink()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    config: {
      mail: { smtp: { url: sink.url } },
      emailVerification: { sendVerificationEmail: true, autoSignInAfterVerification: false },
      magicLink: { enabled: true },
      twoFactor: { enabled: true },
    },
  })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
  const admin = await signUp(server.base, { name: 'Ada Admin' })
  const set = await panel.dispatch('users.setRole', { userId: admin.user.id, role: 'admin' })
  expect(set.ok).toBe(true)
  const row = await findUserById(server.gatehouse.ctx, admin.user.id)
  ada = { kind: 'admin', user: row!, access: 'full', meta: { ipAddress: '127.0.0.1', userAgent: 'gatehouse-panel' } }
}, 180_000)

afterAll(async () => {
  await server?.close()
  await browser?.close()
  await sink?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  rmSync(work, { recursive: true, force: true })
  expect(pageErrors).toEqual([])
})

/** Each page's uncaught errors go to pageErrors (none may occur). */
const PAGE: NewPageOptions = { errors: pageErrors }

async function ok(op: string, input: unknown): Promise<void> {
  const result = await panel.dispatch(op, input, ada)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
}

const linkIn = (text: string): string => {
  const found = /https?:\/\/\S+/.exec(text)?.[0]
  if (!found) throw new Error(`no link in mail: ${text}`)
  return found.replace(/[)>.,]+$/, '')
}

/** Imports one user without a password (`gatehouse import users`' domain function); their id. */
async function importPasswordless(email: string): Promise<string> {
  const file = join(work, `${email}.json`)
  writeFileSync(file, JSON.stringify([{ email, name: 'Imported Ivy', emailVerified: true }]))
  const outcome = await importUsersFile(server.gatehouse.ctx, { file, format: 'json', skipInvalid: false, dryRun: false, via: 'cli' })
  expect(outcome.report).toMatchObject({ users: 1, accounts: 0, errors: [] })
  const signIn = await new HttpClient(server.base).post('/sign-in/email', { email, password: 'anything at all 1' })
  expect(signIn.status).toBe(401)
  return importedUserId(email)
}

describe('links the panel mails, followed in Chromium', () => {
  it('"Send password reset": hosted reset page with a valid token, new password, sign-in with it', async () => {
    const email = `ivy-${Date.now().toString(36)}@example.com`
    const userId = await importPasswordless(email)
    await ok('users.sendPasswordReset', { userId })
    const mail = await sink.waitFor(email, (m) => /reset/i.test(m.subject))
    const link = linkIn(mail.text)
    expect(link).toContain(`callbackURL=${encodeURIComponent(`${server.base}/ui/reset-password`)}`)

    const { context, page } = await newPage(browser, PAGE)
    await page.goto(link)
    expect(new URL(page.url()).pathname).toBe(new URL(`${server.base}/ui/reset-password`).pathname)
    expect(new URL(page.url()).searchParams.get('token')).toBeTruthy()
    expect(new URL(page.url()).searchParams.get('error')).toBeNull()
    await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor()
    await page.getByLabel(/^New password/).fill('a fresh password 42')
    await page.getByLabel(/^Repeat the new password/).fill('a fresh password 42')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByTestId('password-changed').waitFor()

    await page.getByRole('link', { name: 'Go to sign-in' }).click()
    await page.getByLabel(/^Email or username/).fill(email)
    await page.getByLabel(/^Password/).fill('a fresh password 42')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByTestId('signed-in').waitFor()
    const session = await page.request.get(`${server.base}/get-session`)
    expect(session.status()).toBe(200)
    expect(((await session.json()) as { user: { email: string } }).user.email).toBe(email)
    await context.close()
  })

  it('"Send verification mail": the link ends on the hosted "Email verified" page', async () => {
    const user = await signUp(server.base, { name: 'Val' })
    await ok('users.sendVerification', { userId: user.user.id })
    const mail = await sink.waitFor(user.email, (m) => /verify-email\?token=/.test(m.text))
    const { context, page } = await newPage(browser, PAGE)
    const answer = await page.goto(linkIn(mail.text))
    expect(answer?.status()).toBe(200)
    expect(new URL(page.url()).pathname).toBe(new URL(`${server.base}/ui/verify-email`).pathname)
    await page.getByRole('heading', { level: 1, name: 'Email verified' }).waitFor()
    await page.getByTestId('email-verified').waitFor()
    const signIn = await new HttpClient(server.base).post<{ user: { emailVerified: boolean } }>('/sign-in/email', {
      email: user.email,
      password: user.password,
    })
    expect(signIn.body.user.emailVerified).toBe(true)
    await context.close()
  })

  it('"Send a set-up link": signs the person in and opens the two-factor page as an enrolment', async () => {
    const user = await signUp(server.base, { name: 'Sid' })
    await ok('users.sendSetUpLink', { userId: user.user.id })
    const mail = await sink.waitFor(user.email, (m) => /^Set up two-factor authentication/.test(m.subject))
    const { context, page } = await newPage(browser, PAGE)
    const answer = await page.goto(linkIn(mail.text))
    expect(answer?.status()).toBe(200)
    expect(new URL(page.url()).pathname).toBe(new URL(`${server.base}/ui/account/two-factor`).pathname)
    expect(new URL(page.url()).searchParams.get('enrol')).toBe('1')
    await page.getByRole('heading', { level: 1, name: 'Two-factor authentication' }).waitFor()
    expect(await page.getByTestId('totp-state').textContent()).toBe('Off.')
    const session = await page.request.get(`${server.base}/get-session`)
    expect(((await session.json()) as { user: { email: string } }).user.email).toBe(user.email)
    await context.close()
  })

  it('with the hosted pages off, both are refused with the reason instead of mailing a link that ends on an error', async () => {
    const user = await signUp(server.base)
    await server.gatehouse.config.update({ hostedPages: { enabled: false } })
    try {
      for (const op of ['users.sendPasswordReset', 'users.sendVerification']) {
        const result = await panel.dispatch(op, { userId: user.user.id }, ada)
        expect(result).toMatchObject({ ok: false, error: { code: 'HOSTED_PAGES_DISABLED', status: 400 } })
      }
    } finally {
      await server.gatehouse.config.update({ hostedPages: { enabled: true } })
    }
  })
})
