import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPanelService } from '../../../server/panel/service.js'
import { Client } from 'ldapts'
import { freePort } from '../../helpers/engines.js'
import { signUp } from '../../helpers/http.js'
import { silentLogger } from '../../helpers/server.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/**
 * The panel's LDAP view in real Chromium against the real server: the `ldap.*` settings through the
 * Settings operations, the service users (people in ldap.searchRoles) and the app recipes with this
 * server's values. Saving needs the LDAP server's config section (branch ldap): until it is in the
 * build, that test would fail.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

describe('LDAP view', () => {
  it('lists the service users and shows each app’s settings with this server’s values', { timeout: 90_000 }, async () => {
    await signUp(h.server.base, { name: 'Directory Reader' })
    const admin = await signUp(h.server.base, { name: 'Ada Admin' })
    await setRole(admin.user.id, 'admin')

    await open('ldap', 'LDAP')
    const users = page.getByTestId('ldap-service-users')
    await expect.poll(() => users.textContent()).toContain('Ada Admin')
    expect(await users.textContent()).not.toContain('Directory Reader')
    const uid = admin.email.toLowerCase()
    expect(await users.textContent()).toContain(uid)

    await page.getByLabel('Host the apps connect to').fill('auth.home.arpa')
    const recipe = page.getByTestId('ldap-recipe-jellyfin')
    await expect.poll(() => recipe.textContent()).toContain('LDAP Server: auth.home.arpa')
    // This server has no ldap.tls: the recipes are plain LDAP, under the loopback-only warning.
    expect(await page.getByTestId('ldap-recipes-plain').textContent()).toContain('only for an app on this machine')
    expect(await recipe.textContent()).toContain('StartTls: off')
    expect(await recipe.textContent()).toContain(`LDAP Bind User: uid=${uid},ou=people,dc=gatehouse,dc=lan`)
    await page.getByTestId('ldap-recipe-app').click()
    await page.getByRole('option', { name: 'Apache mod_authnz_ldap' }).click()
    await expect
      .poll(() => page.getByTestId('ldap-recipe-apache').textContent())
      .toContain('AuthLDAPURL "ldap://auth.home.arpa:3890/ou=people,dc=gatehouse,dc=lan?uid?sub?(objectClass=person)"')
    expect(await axe(page)).toEqual([])
  })

  it('saves the ldap settings, and the listener answers on the address saved', { timeout: 90_000 }, async () => {
    const port = await freePort()
    await open('ldap', 'LDAP')
    await page.getByLabel('Address', { exact: true }).fill(`127.0.0.1:${port}`)
    await page.getByLabel('LDAP server enabled').click()
    await page.getByLabel('Base DN').fill('dc=acme,dc=test')
    await page.getByLabel('Idle timeout (seconds)').fill('120')
    await page.getByTestId('ldap-save').click()
    await expect.poll(() => (h.server.gatehouse.config.get() as { ldap?: { baseDN?: string } }).ldap?.baseDN).toBe('dc=acme,dc=test')
    expect(h.server.gatehouse.config.get().ldap).toMatchObject({ enabled: true, idleTimeout: 120, address: `127.0.0.1:${port}` })
    // The switch took effect live: the root DSE answers there, naming the saved base DN.
    const c = new Client({ url: `ldap://127.0.0.1:${port}`, timeout: 5_000, connectTimeout: 5_000 })
    await expect
      .poll(
        async () =>
          (await c.search('', { scope: 'base', attributes: ['namingContexts'] }).catch(() => null))?.searchEntries[0]?.namingContexts,
        {
          timeout: 15_000,
        },
      )
      .toBe('dc=acme,dc=test')
    await c.unbind()
  })
})

/** An admin through the panel's own operation (as the Users view sets it). */
async function setRole(userId: string, role: string): Promise<void> {
  const service = createPanelService({
    gatehouse: h.server.gatehouse,
    apiURL: () => h.server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
  const result = await service.dispatch('users.setRole', { userId, role })
  if (!result.ok) throw new Error(`users.setRole: ${result.error.code} ${result.error.message}`)
}
