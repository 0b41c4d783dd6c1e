import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findUserById } from '../../../../server/core/users.js'
import { type AccountHarness, accessibleEverywhere, linkIn, open, person, startAccountHarness, ui, uniqueAddress } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

/**
 * The account center's Profile page (/ui/account/profile, issue 49 §2) in real Chromium against
 * the real server (SQLite, and PostgreSQL in the `postgres` project): name, username and picture
 * saved through /update-user; a taken username announced on its field; a new email address
 * confirmed through the link mailed to the current (verified) address, read from the SMTP sink.
 */

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness({ user: { changeEmail: { enabled: true } } })
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

describe('account profile page', () => {
  it('saves name, username and picture; a taken username is announced on its field', SLOW, async () => {
    await person(h, { name: 'Taken', username: 'taken_name' })
    const ada = await person(h, { username: 'ada_l' })
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account/profile'))
    await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor()
    expect(await page.getByLabel(/^Username/).inputValue()).toBe('ada_l')
    await accessibleEverywhere(page)

    await page.getByLabel(/^Username/).fill('taken_name')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'username')
    expect(await page.getByLabel(/^Username/).getAttribute('aria-invalid')).toBe('true')
    await page.getByText('Username is already taken').waitFor()
    await accessibleEverywhere(page)

    await page.getByLabel(/^Name/).fill('Ada King')
    await page.getByLabel(/^Username/).fill('ada_king')
    const picture = `${h.server.origin}/no-such-picture.png`
    await page.getByLabel(/^Picture/).fill(picture)
    await page.getByRole('button', { name: 'Save' }).click()
    expect(await page.getByRole('status').textContent()).toBe('Your profile is saved.')
    const saved = await findUserById(h.server.gatehouse.ctx, ada.user.id)
    expect([saved?.name, saved?.username, saved?.image]).toEqual(['Ada King', 'ada_king', picture])
    await page.goto(ui(h, 'account'))
    expect(await page.getByTestId('account-name').textContent()).toBe('Ada King')
    await context.close()
  })

  it('changes the email address through the link mailed to the current one', SLOW, async () => {
    const ada = await person(h)
    const next = uniqueAddress('ada-new')
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account/profile'))
    await page.getByLabel(/^New email address/).fill('not an address')
    await page.getByRole('button', { name: 'Change email' }).click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'newEmail')
    await page.getByLabel(/^New email address/).fill(next)
    await page.getByRole('button', { name: 'Change email' }).click()
    expect(await page.getByRole('status').textContent()).toBe(
      `To confirm, open the link we sent to ${ada.email}. Your address changes to ${next} then.`,
    )
    await accessibleEverywhere(page)
    expect((await findUserById(h.server.gatehouse.ctx, ada.user.id))?.email).toBe(ada.email)

    const mail = await h.sink.waitFor(ada.email, (m) => m.text.includes(next))
    await page.goto(linkIn(mail.text))
    await page.waitForURL(ui(h, 'account/profile'))
    expect(await page.getByTestId('current-email').textContent()).toBe(`Now: ${next}`)
    expect((await findUserById(h.server.gatehouse.ctx, ada.user.id))?.email).toBe(next)
    await context.close()
  })
})
