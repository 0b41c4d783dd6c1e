import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient } from '../../../helpers/http.js'
import { type AccountHarness, linkIn, open, person, startAccountHarness, ui } from './harness.js'

/** A browser flow on a loaded machine takes its time. */
const SLOW = { timeout: 120_000 }

/**
 * Every hosted form announces its refusals (issue 49 §12): the refusal is a role=alert message, or
 * focus moves to the invalid field whose description is the message. Before, a wrong password on
 * the sign-in page was painted under the field while focus dropped to the page body. Real Chromium
 * against the real server. (The account pages' own forms are checked in their suites.)
 */

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness({ deviceAuthorization: { enabled: true } })
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

/**
 * What a screen reader hears of the refusal: the focused invalid field's description, or the text
 * of a visible role=alert. Waits until one of them is there.
 */
async function announced(page: Page): Promise<{ how: 'field' | 'alert'; name: string | null; text: string }> {
  const handle = await page.waitForFunction(() => {
    const active = document.activeElement as HTMLElement | null
    if (active?.getAttribute('aria-invalid') === 'true') {
      const ids = (active.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean)
      const text = ids
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' ')
        .trim()
      if (text) return { how: 'field' as const, name: active.getAttribute('name'), text }
    }
    const alert = [...document.querySelectorAll<HTMLElement>('[role="alert"]')].find((el) => el.offsetParent !== null && el.textContent)
    return alert ? { how: 'alert' as const, name: null, text: alert.textContent ?? '' } : null
  })
  return (await handle.jsonValue()) as { how: 'field' | 'alert'; name: string | null; text: string }
}

describe('hosted forms announce their refusals', () => {
  it('sign-in: a wrong password moves focus to the password field, described by the message', SLOW, async () => {
    const ada = await person(h)
    const { context, page } = await open(h, null)
    await page.goto(ui(h, 'sign-in'))
    await page.getByLabel(/^Email or username/).fill(ada.email)
    await page.getByLabel(/^Password/).fill('not the password')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    expect(await announced(page)).toEqual({ how: 'field', name: 'password', text: expect.stringContaining('Invalid email or password') })
    await context.close()
  })

  it('sign-up: a refused password moves focus to it', SLOW, async () => {
    const { context, page } = await open(h, null)
    await page.goto(ui(h, 'sign-up'))
    await page.getByLabel(/^Name/).fill('Short Password')
    await page.getByLabel(/^Email/).fill(`short-${Date.now()}@example.com`)
    await page.getByLabel(/^Password/).fill('short')
    await page.getByRole('button', { name: /create/i }).click()
    expect(await announced(page)).toEqual({ how: 'field', name: 'password', text: expect.stringContaining('Password too short') })
    await context.close()
  })

  it('reset: a refused new password moves focus to it', SLOW, async () => {
    const ada = await person(h)
    await new HttpClient(h.server.base).post('/request-password-reset', { email: ada.email, redirectTo: ui(h, 'reset-password') })
    const mail = await h.sink.waitFor(ada.email, (m) => /reset/i.test(m.subject))
    const { context, page } = await open(h, null)
    await page.goto(linkIn(mail.text))
    await page.getByLabel(/^New password/).fill('short')
    await page.getByLabel(/^Repeat the new password/).fill('short')
    await page.getByRole('button', { name: 'Change password' }).click()
    expect(await announced(page)).toEqual({ how: 'field', name: 'password', text: expect.stringContaining('Password too short') })
    await context.close()
  })

  it('forgot password: an empty address moves focus to the field', SLOW, async () => {
    const { context, page } = await open(h, null)
    await page.goto(ui(h, 'forgot-password'))
    await page.getByRole('button', { name: 'Send reset link' }).click()
    expect(await announced(page)).toEqual({ how: 'field', name: 'email', text: 'Enter your email' })
    await context.close()
  })

  it('device: an unknown code is a role=alert message', SLOW, async () => {
    const ada = await person(h)
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'device'))
    await page.getByTestId('device-code-input').fill('WXYZ-WXYZ')
    await page.getByTestId('device-code-submit').click()
    expect((await announced(page)).how).toBe('alert')
    await context.close()
  })
})
