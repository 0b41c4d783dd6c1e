import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import type { PanelCaller } from '../../../server/core/panel-caller.js'
import { axe } from '../../helpers/axe.js'
import { adminCaller } from '../../helpers/panel-session.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'

/**
 * Issue 50 §1 in Chromium: the LDAP view open in one browser while another admin switches
 * `ldap.allowMainPasswordWithSecondFactor` on. The stale view saving an unrelated field leaves
 * their switch on (only the changed field is sent); saving the switch itself is refused, and the
 * view names who changed it beside the field (here the idle timeout, changed by both).
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
const open = viewOpener(session)
let bea: PanelCaller & { kind: 'admin' }

beforeAll(async () => {
  ;({ h, page } = session)
  bea = await adminCaller(h.server, `bea-${Date.now()}@example.com`)
})

const ldap = () => h.server.gatehouse.config.get().ldap

describe('LDAP view beside another admin', () => {
  it('a stale save of one field keeps the other admin’s change; saving a field they changed shows the conflict', {
    timeout: 120_000,
  }, async () => {
    await open('ldap', 'LDAP')
    const form = page.getByTestId('ldap-form')
    const allow = form.getByRole('switch', { name: 'Allow the main password for people with a second factor' })
    expect(await allow.isChecked()).toBe(false)

    // Another admin, elsewhere, switches it on.
    const theirs = await h.panel.service.dispatch(
      'settings.update',
      { patch: { ldap: { allowMainPasswordWithSecondFactor: true } }, base: { 'ldap.allowMainPasswordWithSecondFactor': false } },
      bea,
    )
    expect(theirs.ok).toBe(true)

    // This view still shows it off, and changes only the idle timeout.
    await form.getByLabel('Idle timeout (seconds)').fill('600')
    await page.getByTestId('ldap-save').click()
    await page.getByText('The LDAP settings apply now.').waitFor()
    await expect.poll(() => ldap().idleTimeout).toBe(600)
    expect(ldap().allowMainPasswordWithSecondFactor).toBe(true)

    // The view read the saved values again (600, on). The other admin now sets the timeout to 900;
    // this view, still showing 600, sets 1200: refused, and who changed it is named beside the field.
    await expect.poll(() => allow.isChecked()).toBe(true)
    const again = await h.panel.service.dispatch(
      'settings.update',
      { patch: { ldap: { idleTimeout: 900 } }, base: { 'ldap.idleTimeout': 600 } },
      bea,
    )
    expect(again.ok).toBe(true)
    await form.getByLabel('Idle timeout (seconds)').fill('1200')
    await page.getByTestId('ldap-save').click()
    const beside = form.getByText(new RegExp(`^changed by ${bea.user.email.replace('.', '\\.')} at .+ to 900 since you opened this view$`))
    await beside.waitFor()
    expect(ldap().idleTimeout).toBe(900)
    expect(ldap().allowMainPasswordWithSecondFactor).toBe(true)
    expect(await axe(page)).toEqual([])
  })
})
