import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAppPassword } from '../../../../server/features/app-passwords/rules.js'
import { HttpClient } from '../../../helpers/http.js'
import { type AccountHarness, accessibleEverywhere, linkIn, open, person, startAccountHarness, ui } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 120_000 }

/**
 * The account center's front page (/ui/account, issue 49 §1) in real Chromium against the real
 * server: who the person is, whether their email is verified (with a new link from the SMTP sink
 * that verifies it), what protects the account, a link to every page; reachable from the sign-out
 * and Connected apps pages; the Connected apps page with the OIDC provider off (§ "Around it").
 */

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness({ twoFactor: { enabled: true }, emailVerification: { sendOnSignUp: false } })
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

describe('account overview', () => {
  it('signed out, it offers to sign in and come back; signed in, it lands on the overview', SLOW, async () => {
    const ada = await person(h)
    const { context, page } = await open(h, null)
    await page.goto(ui(h, 'account'))
    await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor()
    await page.getByTestId('signed-out').waitFor()
    await accessibleEverywhere(page)
    await page.getByRole('link', { name: 'Sign in' }).click()
    await page.getByLabel(/^Email or username/).fill(ada.email)
    await page.getByLabel(/^Password/).fill(ada.password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL(ui(h, 'account'))
    await page.getByTestId('account-name').waitFor()
    expect(await page.getByTestId('account-email').textContent()).toBe(ada.email)
    await context.close()
  })

  it('shows name, verified email and what protects the account, and links to every page', SLOW, async () => {
    const ada = await person(h, { name: 'Ada Byron' })
    await createAppPassword(h.server.gatehouse.ctx, ada.user.id, { name: 'NAS' }, null)
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account'))
    expect(await page.getByTestId('account-name').textContent()).toBe('Ada Byron')
    await page.getByTestId('email-verified-badge').waitFor()
    await page.getByTestId('protection-app-passwords').waitFor()
    expect(await page.getByTestId('protection').locator('li').allTextContents()).toEqual([
      'Password: set',
      'Authenticator app: off',
      'App passwords: 1',
      expect.stringMatching(/^Member since /),
    ])
    const links = await page
      .getByTestId('account-links')
      .getByRole('link')
      .evaluateAll((as) => as.map((a) => [a.textContent, (a as HTMLAnchorElement).href]))
    expect(links).toEqual([
      ['Profile', ui(h, 'account/profile')],
      ['Password', ui(h, 'account/password')],
      ['Two-factor authentication', ui(h, 'account/two-factor')],
      ['Sessions', ui(h, 'account/sessions')],
      ['Activity', ui(h, 'account/activity')],
      ['Connected apps', ui(h, 'account/apps')],
      ['App passwords', ui(h, 'account/app-passwords')],
      ['Sign out', ui(h, 'sign-out')],
    ])
    await accessibleEverywhere(page)
    // Every link the overview gives opens a page that is there (no 404 page, no console error).
    for (const [, href] of links) {
      const answer = await new HttpClient(h.server.base).get(new URL(href as string).pathname.replace('/api/auth', ''))
      expect(answer.status).toBe(200)
    }
    await context.close()
  })

  it('an unverified email says so and sends a new link that verifies it', SLOW, async () => {
    const bob = await person(h, { name: 'Bob' }, false)
    const { context, page } = await open(h, bob)
    await page.goto(ui(h, 'account'))
    await page.getByTestId('email-unverified-badge').waitFor()
    await accessibleEverywhere(page)
    await page.getByRole('button', { name: 'Send a verification link' }).click()
    expect(await page.getByRole('status').textContent()).toBe(`We sent a verification link to ${bob.email}.`)
    const mail = await h.sink.waitFor(bob.email)
    await page.goto(linkIn(mail.text))
    await page.getByRole('heading', { level: 1, name: 'Email verified' }).waitFor()
    await page.goto(ui(h, 'account'))
    await page.getByTestId('email-verified-badge').waitFor()
    await context.close()
  })

  it('is one click away from the sign-out page and the Connected apps page', SLOW, async () => {
    const ada = await person(h)
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'sign-out'))
    await page.getByRole('link', { name: 'Your account' }).click()
    await page.waitForURL(ui(h, 'account'))
    await page.getByTestId('account-name').waitFor()
    await page.getByRole('link', { name: 'Connected apps' }).click()
    await page.waitForURL(ui(h, 'account/apps'))
    await page.getByRole('link', { name: 'Back to your account' }).click()
    await page.waitForURL(ui(h, 'account'))
    await context.close()
  })
})

describe('Connected apps with the OIDC provider off', () => {
  it('lists no app and offers app passwords instead of "Not Found"', SLOW, async () => {
    expect(h.server.gatehouse.ctx.config().oidcProvider.enabled).toBe(false)
    const ada = await person(h)
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account/apps'))
    await page.getByTestId('no-apps').waitFor()
    expect(await page.getByRole('alert').count()).toBe(0)
    expect(await page.getByText('Not Found').count()).toBe(0)
    await page.getByTestId('app-passwords-link').getByRole('link', { name: 'app password' }).waitFor()
    await accessibleEverywhere(page)
    await context.close()
  })
})
