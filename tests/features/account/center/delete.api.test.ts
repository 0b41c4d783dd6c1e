import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findUserById } from '../../../../server/core/users.js'
import { HttpClient } from '../../../helpers/http.js'
import { type AccountHarness, accessibleEverywhere, open, person, startAccountHarness, ui } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

/**
 * The account center's Delete page (/ui/account/delete, issue 49 §9) in real Chromium against the
 * real server (SQLite, and PostgreSQL in the `postgres` project), with user.deleteUser.enabled: a
 * wrong password is announced on its field and deletes nothing; the right one deletes the account.
 */

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness({ user: { deleteUser: { enabled: true } } })
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

describe('account delete page', () => {
  it('refuses a wrong password on its field, then deletes the account with the right one', SLOW, async () => {
    const ada = await person(h)
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account'))
    await page.getByRole('link', { name: 'Delete your account' }).click()
    await page.waitForURL(ui(h, 'account/delete'))
    await page.getByRole('heading', { level: 1, name: 'Delete your account' }).waitFor()
    expect(await page.getByRole('button', { name: 'Delete my account' }).isDisabled()).toBe(true)
    await accessibleEverywhere(page)

    await page.getByLabel(/^Your password/).fill('not my password')
    await page.getByLabel('I understand my account cannot be restored').check()
    await page.getByRole('button', { name: 'Delete my account' }).click()
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('password')
    expect(await findUserById(h.server.gatehouse.ctx, ada.user.id)).toBeTruthy()

    await page.getByLabel(/^Your password/).fill(ada.password)
    await page.getByRole('button', { name: 'Delete my account' }).click()
    await page.getByTestId('account-deleted').waitFor()
    expect(await findUserById(h.server.gatehouse.ctx, ada.user.id)).toBeFalsy()
    expect((await new HttpClient(h.server.base).post('/sign-in/email', { email: ada.email, password: ada.password })).status).toBe(401)
    await accessibleEverywhere(page)
    await context.close()
  })
})
