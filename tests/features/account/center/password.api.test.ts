import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account } from '../../../../server/db/schema.js'
import { HttpClient } from '../../../helpers/http.js'
import { type AccountHarness, accessibleEverywhere, linkIn, open, person, startAccountHarness, ui } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 120_000 }

/**
 * The account center's Password page (/ui/account/password, issue 49 §3) in real Chromium against
 * the real server (SQLite, and PostgreSQL in the `postgres` project): a wrong current password is
 * announced on its field (focus moved there, the message its description); a change with "sign
 * out my other devices" (checked by default) ends the other sessions and keeps this one; unchecked,
 * they stay; an account without a password (social sign-in only) sets one through a mailed link.
 */

const NEW_PASSWORD = 'a brand new passphrase'

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness()
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

const signInStatus = async (email: string, password: string) =>
  (await new HttpClient(h.server.base).post('/sign-in/email', { email, password })).status

/** A second device: a session of its own, signed in through the API. */
async function otherDevice(email: string, password: string): Promise<HttpClient> {
  const client = new HttpClient(h.server.base)
  expect((await client.post('/sign-in/email', { email, password })).status).toBe(200)
  return client
}

const stillSignedIn = async (client: HttpClient) => (await client.get<{ user?: unknown } | null>('/get-session')).body !== null

describe('account password page', () => {
  it('announces a wrong current password on its field, then changes it and signs out the other devices', SLOW, async () => {
    const ada = await person(h)
    const other = await otherDevice(ada.email, ada.password)
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account/password'))
    await page.getByRole('heading', { level: 1, name: 'Password' }).waitFor()
    expect(await page.getByLabel('Sign out my other devices').isChecked()).toBe(true)
    expect(await page.getByTestId('app-password-note').textContent()).toContain('Your app passwords stop working')
    await accessibleEverywhere(page)

    // Keyboard only: the fields and the button in order.
    await page.getByLabel(/^Current password/).focus()
    await page.keyboard.type('not my password')
    await page.keyboard.press('Tab')
    await page.keyboard.type(NEW_PASSWORD)
    await page.keyboard.press('Tab')
    await page.keyboard.type(NEW_PASSWORD)
    await page.keyboard.press('Enter')
    const current = page.getByLabel(/^Current password/)
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('currentPassword')
    expect(await current.getAttribute('aria-invalid')).toBe('true')
    const describedBy = (await current.getAttribute('aria-describedby')) ?? ''
    const description = await page.evaluate(
      (ids) =>
        ids
          .split(/\s+/)
          .map((id) => document.getElementById(id)?.textContent ?? '')
          .join(' '),
      describedBy,
    )
    expect(description).toContain('Invalid password')
    await accessibleEverywhere(page)
    expect(await signInStatus(ada.email, ada.password)).toBe(200)

    await current.fill(ada.password)
    await page.getByRole('button', { name: 'Change password' }).click()
    expect(await page.getByTestId('password-changed').textContent()).toBe('Your password was changed. Your other devices are signed out.')
    expect(await signInStatus(ada.email, ada.password)).toBe(401)
    expect(await signInStatus(ada.email, NEW_PASSWORD)).toBe(200)
    expect(await stillSignedIn(other)).toBe(false)
    // This browser got the new session.
    await page.goto(ui(h, 'account'))
    await page.getByTestId('account-name').waitFor()
    // The notice reached the person.
    await h.sink.waitFor(ada.email, (m) => /password/i.test(m.subject))
    await context.close()
  })

  it('unchecked, the other devices stay signed in; a new password the policy refuses is announced on its field', SLOW, async () => {
    const bob = await person(h, { name: 'Bob' })
    const other = await otherDevice(bob.email, bob.password)
    const { context, page } = await open(h, bob)
    await page.goto(ui(h, 'account/password'))
    await page.getByLabel(/^Current password/).fill(bob.password)
    await page.getByLabel(/^New password/).fill('short')
    await page.getByLabel(/^Repeat the new password/).fill('short')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'newPassword')
    expect(await page.getByLabel(/^New password/).getAttribute('aria-invalid')).toBe('true')

    await page.getByLabel(/^New password/).fill(NEW_PASSWORD)
    await page.getByLabel(/^Repeat the new password/).fill(NEW_PASSWORD)
    await page.getByLabel('Sign out my other devices').uncheck()
    await page.getByRole('button', { name: 'Change password' }).click()
    expect(await page.getByTestId('password-changed').textContent()).toBe('Your password was changed.')
    expect(await stillSignedIn(other)).toBe(true)
    expect(await signInStatus(bob.email, NEW_PASSWORD)).toBe(200)
    await context.close()
  })

  it('an account with no password (social sign-in only) sets one through a mailed link', SLOW, async () => {
    const cleo = await person(h, { name: 'Cleo' })
    await h.server.gatehouse.ctx.db.delete(account).where(and(eq(account.userId, cleo.user.id), eq(account.providerId, 'credential')))
    const { context, page } = await open(h, cleo)
    await page.goto(ui(h, 'account/password'))
    await page.getByTestId('no-password').waitFor()
    expect(await page.getByRole('button', { name: 'Change password' }).count()).toBe(0)
    await accessibleEverywhere(page)
    await page.getByRole('button', { name: 'Email me a link to set a password' }).click()
    await page.getByTestId('set-password-sent').waitFor()
    const mail = await h.sink.waitFor(cleo.email, (m) => /reset/i.test(m.subject))
    await page.goto(linkIn(mail.text))
    await page.getByLabel(/^New password/).fill(NEW_PASSWORD)
    await page.getByLabel(/^Repeat the new password/).fill(NEW_PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByTestId('password-changed').waitFor()
    expect(await signInStatus(cleo.email, NEW_PASSWORD)).toBe(200)
    await context.close()
  })
})
