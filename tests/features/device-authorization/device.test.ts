import { rmSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, newPage } from '../../helpers/browser.js'
import { HttpClient, signUp } from '../../helpers/http.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { buildHostedPages } from '../../helpers/hosted.js'

/**
 * Issue 27: the hosted device page, `/ui/device` (the default verification_uri of device
 * authorization). A person types the code or arrives with ?user_code=, signs in on the way when
 * needed and comes back, sees which client asks, and approves or denies; the device's poll then
 * gets its token or access_denied. Real Chromium, the real server, the pages built by
 * vite.hosted.config.ts.
 */

const PASSWORD = 'correct horse battery'
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

let assets = ''
let server: TestServer
let browser: Browser

beforeAll(async () => {
  ;[assets, browser] = await Promise.all([buildHostedPages(), launchBrowser()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    config: { deviceAuthorization: { enabled: true } },
  })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await browser?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
})

const device = () => new HttpClient(server.base, { origin: null })

async function newCodes(clientId: string, scope?: string) {
  const res = await device().post<{ device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string }>(
    '/device/code',
    { client_id: clientId, ...(scope ? { scope } : {}) },
  )
  expect(res.status).toBe(200)
  return res.body
}

const poll = (deviceCode: string, clientId: string) =>
  device().post<Record<string, unknown>>('/device/token', { grant_type: GRANT, device_code: deviceCode, client_id: clientId })

async function signInOnPage(page: Page, email: string): Promise<void> {
  await page.getByLabel(/^Email or username/).fill(email)
  await page.getByLabel(/^Password/).fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

describe('hosted device page', () => {
  it('signed out, typing the code: sign in on the way, come back, approve; the device gets its token', async () => {
    const user = await signUp(server.base, { password: PASSWORD, name: 'Viewer' })
    const codes = await newCodes('living-room-tv', 'openid profile')
    expect(codes.verification_uri).toBe(`${server.base}/ui/device`)
    const { page } = await newPage(browser)
    await page.goto(codes.verification_uri)
    await page.getByRole('heading', { level: 1, name: 'Connect a device' }).waitFor()
    // A wrong code is said before any sign-in.
    await page.getByTestId('device-code-input').fill('WRONG234')
    await page.getByTestId('device-code-submit').click()
    await page.getByText('That code is not valid').waitFor()
    // Typed as people do: lower case, with a dash.
    const typed = `${codes.user_code.slice(0, 4).toLowerCase()}-${codes.user_code.slice(4)}`
    await page.getByTestId('device-code-input').fill(typed)
    await page.getByTestId('device-code-submit').click()
    await page.getByTestId('device-sign-in').click()
    await signInOnPage(page, user.email)
    await page.waitForURL((url) => url.pathname.endsWith('/ui/device') && url.searchParams.get('user_code') === typed)
    await page.getByTestId('device-summary').waitFor()
    expect(await page.getByTestId('device-summary').textContent()).toBe(`living-room-tv asks to sign in to Gatehouse as ${user.email}.`)
    expect(await page.getByTestId('device-scopes').textContent()).toBe('openidprofile')
    await page.getByTestId('device-approve').click()
    expect(await page.getByTestId('device-done').textContent()).toContain('The device is now signed in.')

    const token = await poll(codes.device_code, 'living-room-tv')
    expect(token.status).toBe(200)
    const me = await new HttpClient(server.base, { headers: { authorization: `Bearer ${token.body.access_token}` } }).get<{
      user: { email: string }
    }>('/get-session')
    expect(me.body.user.email).toBe(user.email)
    // Opened again: already settled.
    await page.goto(codes.verification_uri_complete)
    await page.getByTestId('device-code-input').waitFor()
    await page.getByText('That code is not valid').waitFor()
    await page.context().close()
  })

  it('signed in, from verification_uri_complete: deny; the device gets access_denied', async () => {
    const user = await signUp(server.base, { password: PASSWORD, name: 'Kiosk owner' })
    const codes = await newCodes('kiosk')
    const { page } = await newPage(browser)
    await page.goto(`${server.base}/ui/sign-in`)
    await signInOnPage(page, user.email)
    await page.getByRole('heading', { level: 1, name: 'You are signed in' }).waitFor()
    await page.goto(codes.verification_uri_complete)
    await page.getByTestId('device-summary').waitFor()
    expect(await page.getByTestId('device-summary').textContent()).toContain('kiosk asks to sign in')
    await page.getByTestId('device-deny').click()
    expect(await page.getByTestId('device-done').textContent()).toContain('The device was not signed in.')
    const answer = await poll(codes.device_code, 'kiosk')
    expect([answer.status, answer.body]).toEqual([400, { error: 'access_denied', error_description: 'Access denied' }])
    await page.context().close()
  })

  it("someone else's claimed code is not shown to a second account", async () => {
    const first = await signUp(server.base, { password: PASSWORD })
    const second = await signUp(server.base, { password: PASSWORD })
    const codes = await newCodes('cli')
    expect((await first.client.get(`/device?user_code=${codes.user_code}`)).status).toBe(200)
    const { page } = await newPage(browser)
    await page.goto(`${server.base}/ui/sign-in`)
    await signInOnPage(page, second.email)
    await page.getByRole('heading', { level: 1, name: 'You are signed in' }).waitFor()
    await page.goto(codes.verification_uri_complete)
    await page.getByText('This code is being answered from another account.').waitFor()
    expect(await page.getByTestId('device-approve').count()).toBe(0)
    await page.context().close()
  })
})
