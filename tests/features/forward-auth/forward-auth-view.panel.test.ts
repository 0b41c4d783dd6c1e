import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { verifiedSignUp } from '../../helpers/members.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/** The "Protected apps" view in real Chromium against the real server: add, reorder, save, snippets, Test box. */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

describe('Protected apps view', () => {
  it('adds rules, reorders them, saves, shows the snippets and answers the Test box', { timeout: 90_000 }, async () => {
    const who = await verifiedSignUp(h.server, { name: 'Viewer' })
    await open('protected-apps', 'Protected apps')
    await page.getByLabel('Forward auth enabled').click()

    const form = page.getByTestId('rule-form')
    await form.getByLabel('Domain').fill('*.apps.lan')
    await form.getByRole('button', { name: 'Add rule' }).click()
    await form.getByLabel('Domain').fill('wiki.apps.lan')
    await form.getByLabel(/^Paths/).fill('^/public/')
    await form.getByLabel('Policy', { exact: true }).click()
    await page.getByRole('option', { name: 'Bypass (no sign-in)' }).click()
    await form.getByRole('button', { name: 'Add rule' }).click()
    // A bad regular expression is refused beside the form.
    await form.getByLabel('Domain').fill('x.apps.lan')
    await form.getByLabel(/^Paths/).fill('^/(')
    await form.getByRole('button', { name: 'Add rule' }).click()
    await form.getByRole('alert').waitFor()

    // The bypass rule goes first, or the glob would decide /public/ too.
    const rows = page.getByTestId('forward-auth-rules').locator('tbody tr')
    await expect.poll(() => rows.count()).toBe(2)
    await rows.nth(1).getByRole('button', { name: 'Move up' }).click()
    expect(await rows.nth(0).textContent()).toContain('wiki.apps.lan')
    await page.getByTestId('forward-auth-save').click()
    await expect.poll(() => h.server.gatehouse.config.get().forwardAuth?.rules?.length).toBe(2)
    expect(h.server.gatehouse.config.get().forwardAuth).toMatchObject({
      enabled: true,
      rules: [
        { domain: 'wiki.apps.lan', resources: ['^/public/'], policy: 'bypass' },
        { domain: '*.apps.lan', policy: 'signed-in' },
      ],
    })
    await page.getByRole('tab', { name: 'Caddy' }).click()
    await expect.poll(() => page.getByText('request_header -Remote-User').first().isVisible()).toBe(true)

    const box = page.getByTestId('forward-auth-test')
    await box.getByLabel('URL').fill('https://wiki.apps.lan/private')
    await box.getByLabel(/^User email/).fill(who.email)
    await box.getByRole('button', { name: 'Test' }).click()
    const answer = page.getByTestId('forward-auth-test-answer')
    await expect.poll(() => answer.textContent()).toContain('allowed · decided by rules[1] *.apps.lan')
    expect(await answer.textContent()).toContain(`Remote-Email: ${who.email}`)
    expect(await axe(page)).toEqual([])
  })

  it('a rule naming an organization nobody created yet is flagged beside it (reserved: only an administrator creates it)', async () => {
    h.server.gatehouse.config.update({
      forwardAuth: {
        enabled: true,
        rules: [{ domain: 'ops.apps.lan', policy: 'signed-in', subject: { organizations: ['view-missing'] } }],
      },
    })
    await open('protected-apps', 'Protected apps')
    const names = page.getByTestId('group-names-rule-0')
    await expect
      .poll(() => names.textContent())
      .toContain('“view-missing”: no organization "view-missing" exists yet; the slug is reserved')
    expect(await axe(page)).toEqual([])
  })
})
