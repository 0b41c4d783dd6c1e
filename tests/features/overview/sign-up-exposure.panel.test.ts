import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'

/**
 * Issue 47 §2: the Overview says when anyone who reaches the server can create an account (open
 * sign-up, and whether email verification is required), and one click makes sign-up
 * invitation-only. Real Chromium, the production renderer, the real server.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

describe('Overview: open sign-up', () => {
  it('warns while sign-up is open, says when apps are told of an unverified account, and switches to invitation-only in one click', {
    timeout: 60_000,
  }, async () => {
    expect(h.server.gatehouse.ctx.config().signUp.mode).toBe('open')
    await open('overview', 'Overview')
    const warning = page.getByTestId('open-sign-up')
    await warning.waitFor()
    expect(await warning.innerText()).toContain('Anyone who reaches this server can create an account')
    expect(await warning.innerText()).toContain('Sign-up is open (email and password).')
    // identity.requireVerifiedEmail (the default): the faces wait for verification.
    expect(await warning.innerText()).toContain('your apps are told of it only once it verifies its email')

    await page.getByTestId('sign-up-invitation-only').click()
    await warning.waitFor({ state: 'hidden' })
    expect(h.server.gatehouse.ctx.config().signUp.mode).toBe('invitation')
    await open('overview', 'Overview')
    await page.getByTestId('count-users').waitFor()
    expect(await page.getByTestId('open-sign-up').count()).toBe(0)

    // Open again with verification required: the warning says so.
    h.server.gatehouse.config.update({ signUp: { mode: 'open' }, emailAndPassword: { requireEmailVerification: true } })
    await open('overview', 'Overview')
    await warning.waitFor()
    expect(await warning.innerText()).toContain('A new account must verify its email before it signs in.')
    // Neither: any claimed address is vouched for.
    h.server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: false }, identity: { requireVerifiedEmail: false } })
    await open('overview', 'Overview')
    await expect.poll(() => warning.innerText()).toContain('Email verification is not required')
    h.server.gatehouse.config.update({ identity: { requireVerifiedEmail: true } })
  })
})
