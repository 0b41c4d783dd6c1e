import { request } from 'node:http'
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { queryAuditEvents } from '../../../server/core/audit.js'
import { type BrowserPanel, startBrowserPanel } from '../../../server/panel/index.js'
import { signUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { buildRenderer, launchChromium, screenshot } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/**
 * Issue 31: passkey sign-in to the browser panel, in Chromium with a CDP virtual authenticator.
 * The API's relying party is `auth.example.com` (unusable from the panel's page); the panel's
 * page at http://localhost:PORT binds its ceremonies to `localhost`. An admin adds a passkey for
 * the panel from its header, signs out, and signs in with it into the same panel session as a
 * password gives; an account that is no administrator (any more) is refused and its session
 * ended; a banned admin is refused by the sign-in pipeline.
 */

const PASSWORD = 'correct horse battery'
const clock = new TestClock()
let browser: Browser
let server: TestServer
let panel: BrowserPanel
const contexts: BrowserContext[] = []
const people = {} as Record<'ada' | 'gus' | 'bea', { id: string; email: string }>

async function operator(op: string, input: unknown): Promise<void> {
  const result = await panel.service.dispatch(op, input)
  if (!result.ok) throw new Error(`${op}: ${result.error.code}`)
}

/** A page with its own virtual authenticator (a platform authenticator with user verification). */
async function pageWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' })
  contexts.push(context)
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  return { page, cdp, authenticatorId }
}

const signInPage = (page: Page) => page.getByRole('heading', { level: 1, name: 'Sign in to Gatehouse' })

async function signInWithPassword(page: Page, email: string): Promise<void> {
  await page.goto(`${panel.localOrigin}/`)
  await signInPage(page).waitFor({ timeout: 10_000 })
  await page.getByTestId('sign-in-identifier').fill(email)
  await page.getByTestId('sign-in-password').fill(PASSWORD)
  await page.getByTestId('sign-in-submit').click()
  await page.getByRole('heading', { level: 2, name: 'Overview' }).waitFor({ timeout: 10_000 })
}

/** Signed in with a password: adds a passkey for the panel from the header, then signs out. */
async function addPanelPasskey(page: Page, email: string): Promise<void> {
  await signInWithPassword(page, email)
  await page.getByTestId('panel-add-passkey').click()
  await page.getByText('Passkey added').waitFor({ timeout: 10_000 })
  await page.getByTestId('panel-sign-out').click()
  await signInPage(page).waitFor({ timeout: 10_000 })
}

const panelStatus = (page: Page) =>
  page.evaluate(
    async () =>
      (await fetch('./panel/api/server.info', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status,
  )

/** A request to the panel with a Host header of our choosing (fetch may not set one). */
function statusWithHost(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: panel.port, path: '/', headers: { host } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end()
  })
}

beforeAll(async () => {
  const assets = await buildRenderer()
  browser = await launchChromium()
  server = await startTestServer({ clock, config: { passkey: { enabled: true, rpID: 'auth.example.com' } } })
  panel = await startBrowserPanel(server.gatehouse, { port: 0, assetsDir: assets, buildOnDemand: false, logger: silentLogger })
  for (const [key, name] of [
    ['ada', 'Ada Admin'],
    ['gus', 'Gus Formeradmin'],
    ['bea', 'Bea Admin'],
  ] as const) {
    const { user } = await signUp(server.base, { name, password: PASSWORD })
    await operator('users.setRole', { userId: user.id, role: 'admin' })
    people[key] = { id: user.id, email: user.email }
  }
}, 180_000)

afterAll(async () => {
  for (const context of contexts) await context.close()
  await browser?.close()
  await panel?.close()
  await server?.close()
})

describe('passkey sign-in to the browser panel', () => {
  it('the panel answers at localhost (printed) as at 127.0.0.1; other Host names are refused', async () => {
    expect(panel.localOrigin).toBe(`http://localhost:${panel.port}`)
    expect(await statusWithHost(`localhost:${panel.port}`)).toBe(200)
    expect(await statusWithHost(`127.0.0.1:${panel.port}`)).toBe(200)
    expect(await statusWithHost(`evil.example:${panel.port}`)).toBe(421)
    expect(await statusWithHost(`localhost.evil.example:${panel.port}`)).toBe(421)
  })

  it('on 127.0.0.1 the sign-in page says passkeys need the localhost address, with a link', { timeout: 30_000 }, async () => {
    const { page } = await pageWithAuthenticator()
    await page.goto(`${panel.origin}/`)
    await signInPage(page).waitFor({ timeout: 10_000 })
    await page.getByTestId('passkey-elsewhere').waitFor()
    expect(await page.getByTestId('sign-in-passkey').count()).toBe(0)
    expect(await page.getByTestId('passkey-localhost-link').getAttribute('href')).toBe(panel.localOrigin)
    expect(await axe(page), '127.0.0.1 sign-in page').toEqual([])
    await page.getByTestId('passkey-localhost-link').click()
    await page.waitForURL(`${panel.localOrigin}/`)
    await page.getByTestId('sign-in-passkey').waitFor({ timeout: 10_000 })
    expect(await axe(page), 'localhost sign-in page').toEqual([])
    await page.emulateMedia({ colorScheme: 'dark' })
    expect(await axe(page), 'localhost sign-in page, dark').toEqual([])
  })

  it('an admin adds a passkey for the panel, signs out, and signs in with it', { timeout: 45_000 }, async () => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator()
    await addPanelPasskey(page, people.ada.email)
    // An ordinary passkey of her account, bound to the panel's host name, named so she knows it.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]).toMatchObject({ rpId: 'localhost', isResidentCredential: true })
    const rows = server.gatehouse.database.sqlite?.prepare('select name, "userId" from passkey').all() as Array<{
      name: string
      userId: string
    }>
    expect(rows).toEqual([{ name: `Gatehouse panel (localhost:${panel.port})`, userId: people.ada.id }])

    await page.getByTestId('sign-in-passkey').click()
    await page.getByRole('heading', { level: 2, name: 'Overview' }).waitFor({ timeout: 10_000 })
    await page.getByTestId('panel-caller').filter({ hasText: people.ada.email }).waitFor()
    await page.getByTestId('panel-add-passkey').waitFor()
    expect(await axe(page), 'header with Add a passkey').toEqual([])
    await screenshot(page, 'panel-passkey-signed-in')
    // The same panel session as a password: her Gatehouse session under the panel's cookie, and
    // the sign-in went through the pipeline (audited as hers, by passkey).
    const cookies = await page.context().cookies(panel.localOrigin)
    expect(cookies.find((c) => c.name === `gatehouse_panel_${panel.port}.better-auth.session_token`)).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    })
    const signIn = (await queryAuditEvents(server.gatehouse.ctx, { type: 'passkey.sign-in' }, { limit: 1 })).events[0]
    expect(signIn).toMatchObject({ outcome: 'success', actorUserId: people.ada.id })
    // What she does from it names her.
    const created = await page.evaluate(
      async (userId) =>
        (
          await fetch('./panel/api/apiKey.create', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ userId, name: 'via passkey' }),
          })
        ).status,
      people.gus.id,
    )
    expect(created).toBe(200)
    const key = (await queryAuditEvents(server.gatehouse.ctx, { type: 'api-key.created' }, { limit: 1 })).events[0]
    expect(key).toMatchObject({ actorUserId: people.ada.id, targetUserId: people.gus.id })
  })

  it('a passkey of an account that is no administrator any more is refused, its session ended', { timeout: 45_000 }, async () => {
    const { page } = await pageWithAuthenticator()
    await addPanelPasskey(page, people.gus.email)
    await operator('users.setRole', { userId: people.gus.id, role: 'user' })
    await page.getByTestId('sign-in-passkey').click()
    await page.getByTestId('sign-in-notice').filter({ hasText: 'not an administrator' }).waitFor({ timeout: 10_000 })
    await expect.poll(() => panelStatus(page)).toBe(401)
  })

  it('a banned admin is refused by the sign-in pipeline', { timeout: 45_000 }, async () => {
    const { page } = await pageWithAuthenticator()
    await addPanelPasskey(page, people.bea.email)
    await operator('users.ban', { userId: people.bea.id, banReason: 'test' })
    await page.getByTestId('sign-in-passkey').click()
    await page.getByTestId('sign-in-error').filter({ hasText: 'banned' }).waitFor({ timeout: 10_000 })
    expect(await panelStatus(page)).toBe(401)
    await screenshot(page, 'panel-passkey-banned')
  })
})
