import { rmSync } from 'node:fs'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, newPage } from '../../helpers/browser.js'
import { signUp, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { buildHostedPages } from '../../helpers/hosted.js'

/**
 * Issue 31 §3: the invitation mail links to the hosted accept-invitation page by default
 * (`{base}/ui/accept-invitation?id=…`), which answers 200 (the old `/accept-invitation/<id>` was a
 * 404): signed out it offers sign-in or sign-up and comes back; signed in it accepts or declines.
 * Real Chromium, the real server and SMTP sink, the pages built by vite.hosted.config.ts.
 */

const PASSWORD = 'correct horse battery'

let assets = ''
let server: TestServer
let sink: SmtpSink
let browser: Browser

beforeAll(async () => {
  ;[assets, browser, sink] = await Promise.all([buildHostedPages(), launchBrowser(), startSmtpSink()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    config: { mail: { smtp: { url: sink.url } } },
  })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await browser?.close()
  await sink?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
})

/** Creates an organization owned by a new user and invites `email`; returns the mailed link. */
async function invite(email: string, orgName: string): Promise<{ link: string; inviter: string }> {
  const owner = await signUp(server.base, { password: PASSWORD, name: 'Owner' })
  const org = await owner.client.post<{ id: string }>('/organization/create', {
    name: orgName,
    slug: `o-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`,
  })
  expect(org.status).toBe(200)
  const inv = await owner.client.post('/organization/invite-member', { email, role: 'admin', organizationId: org.body.id })
  expect(inv.status).toBe(200)
  const mail = await sink.waitFor(email)
  const link = /https?:\/\/\S+/.exec(mail.text)?.[0]?.replace(/[)>.,]+$/, '') as string
  return { link, inviter: owner.email }
}

describe('hosted accept-invitation page', () => {
  it('signed out: sign up from the page, come back, accept', async () => {
    const email = uniqueEmail('invitee')
    const { link, inviter } = await invite(email, 'Acme Join')
    expect(link).toMatch(new RegExp(`^${server.base}/ui/accept-invitation\\?id=`))
    expect((await fetch(link)).status).toBe(200)

    const { page } = await newPage(browser)
    await page.goto(link)
    await page.getByRole('heading', { level: 1, name: 'You are invited' }).waitFor()
    await page.getByTestId('invitation-sign-up').click()
    await page.getByLabel(/^Name/).fill('New Invitee')
    await page.getByLabel(/^Email/).fill(email)
    await page.getByLabel(/^Password/).fill(PASSWORD)
    await page.getByRole('button', { name: /create account|sign up/i }).click()
    await page.waitForURL(link)
    await page.getByRole('heading', { level: 1, name: 'Join Acme Join' }).waitFor()
    // Named as the mail names the sender (issue 37 §7): "Name (email)".
    expect(await page.getByTestId('invitation-summary').textContent()).toBe(
      `Owner (${inviter}) invited ${email} to join Acme Join as admin.`,
    )
    await page.getByTestId('invitation-accept').click()
    expect(await page.getByTestId('invitation-done').textContent()).toContain('You are now a member of Acme Join.')
    const session = await page.evaluate(async (base) => (await fetch(`${base}/organization/list`)).json(), server.base)
    expect((session as Array<{ name: string }>).map((o) => o.name)).toEqual(['Acme Join'])
    await page.context().close()
  })

  it('signed in already: decline; an incomplete link says so', async () => {
    const user = await signUp(server.base, { password: PASSWORD, name: 'Existing' })
    const { link } = await invite(user.email, 'Other Org')
    const { page } = await newPage(browser)
    await page.goto(link)
    await page.getByTestId('invitation-sign-in').click()
    await page.getByLabel(/^Email or username/).fill(user.email)
    await page.getByLabel(/^Password/).fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL(link)
    await page.getByTestId('invitation-reject').click()
    expect(await page.getByTestId('invitation-done').textContent()).toContain('You declined the invitation to Other Org.')
    const memberships = await user.client.get<Array<{ name: string }>>('/organization/list')
    expect([memberships.status, memberships.body]).toEqual([200, []])
    // Declined: the invitation can be answered no more.
    const again = await user.client.post('/organization/accept-invitation', { invitationId: new URL(link).searchParams.get('id') })
    expect(again.status).toBe(400)

    await page.goto(`${server.base}/ui/accept-invitation`)
    await page.getByText('This invitation link is incomplete').waitFor()
    await page.context().close()
  })
})
