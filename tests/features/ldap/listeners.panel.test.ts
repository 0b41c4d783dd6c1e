import { createServer, type Server } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ldapListening } from '../../../server/features/ldap/index.js'
import { axe } from '../../helpers/axe.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { panelServiceOf } from '../../helpers/panel-session.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'
import { BASE, ldapsearch, ldapUtilsMissing, PASSWORD } from './helpers.js'

/**
 * Issue 50 §2 in Chromium: the Overview and the LDAP view show each listener's state (listening,
 * address, connections, last error), from `listeners.state`; in the LDAP view, an address another
 * process holds is refused beside the Address field, the listener keeps answering `ldapsearch` and
 * its last error is shown; the Metrics view shows its listener. axe finds nothing, light and dark.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
const open = viewOpener(session)
let port = 0
let holder: Server
const alice = { dn: `uid=alice,ou=people,${BASE}` }

warnSkipped('listeners panel: ldapsearch', ldapUtilsMissing)

beforeAll(async () => {
  ;({ h, page } = session)
  const service = panelServiceOf(h.server)
  await verifiedSignUp(h.server, { username: 'alice', name: 'Alice Liddell', email: 'alice@example.com' })
  const on = await service.dispatch('settings.update', { patch: { ldap: { enabled: true, address: `127.0.0.1:${await freePort()}` } } })
  if (!on.ok) throw new Error(on.error.message)
  for (let i = 0; i < 100 && !port; i++) {
    port = (await ldapListening(h.server.gatehouse.ctx))?.address.port ?? 0
    if (!port) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  if (!port) throw new Error('the LDAP listener did not open')
  holder = createServer()
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
}, 60_000)
afterAll(() => holder?.close())

const row = (name: string) => page.getByTestId(`listener-${name}`)

describe.skipIf(ldapUtilsMissing)('listener states in the panel', () => {
  it('the Overview shows LDAP listening on its address and metrics stopped', { timeout: 60_000 }, async () => {
    await open('overview', 'Overview')
    await expect.poll(() => row('ldap').getAttribute('data-state')).toBe('listening')
    expect(await page.getByTestId('listener-ldap-state').textContent()).toBe('listening')
    expect(await page.getByTestId('listener-ldap-address').textContent()).toBe(`127.0.0.1:${port}`)
    expect(await page.getByTestId('listener-ldap-connections').textContent()).toBe('0')
    expect(await page.getByTestId('listener-ldap-error').textContent()).toBe('—')
    expect(await row('metrics').getAttribute('data-state')).toBe('stopped')
    expect(await row('ldaps').getAttribute('data-state')).toBe('stopped')
    expect(await axe(page)).toEqual([])
  })

  it('the LDAP view refuses a port in use beside the Address field; the listener keeps answering and shows the error', {
    timeout: 90_000,
  }, async () => {
    await open('ldap', 'LDAP')
    const states = page.getByTestId('ldap-listener-states')
    await expect.poll(() => states.getByTestId('listener-ldap').getAttribute('data-state')).toBe('listening')
    // Only LDAP's listeners in its view.
    expect(await states.getByTestId('listener-metrics').count()).toBe(0)
    const busy = (holder.address() as { port: number }).port
    const form = page.getByTestId('ldap-form')
    await form.getByLabel('Address', { exact: true }).fill(`127.0.0.1:${busy}`)
    await page.getByTestId('ldap-save').click()
    await form.getByText(`ldap.address: cannot listen on 127.0.0.1:${busy} (EADDRINUSE); choose another ldap.address`).waitFor()
    expect(h.server.gatehouse.ctx.config().ldap.address).toBe(`127.0.0.1:${port}`)
    // Still listening where it was, the refusal as its last error.
    await states.getByTestId('listener-ldap-error').getByText(`127.0.0.1:${busy} (EADDRINUSE)`, { exact: false }).waitFor()
    expect(await states.getByTestId('listener-ldap').getAttribute('data-state')).toBe('listening')
    expect(await states.getByTestId('listener-ldap-address').textContent()).toBe(`127.0.0.1:${port}`)
    const found = await ldapsearch(
      { url: `ldap://127.0.0.1:${port}` },
      { bindDN: alice.dn, password: PASSWORD, base: BASE, scope: 'sub', filter: '(uid=alice)' },
    )
    expect(found.stdout).toContain(`dn: ${alice.dn}`)
    expect(await axe(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'dark' })
    await expect.poll(() => page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme'))).toBe('dark')
    expect(await axe(page), 'dark').toEqual([])
    await page.emulateMedia({ colorScheme: 'light' })
  })

  it('the Metrics view shows its listener and switches it on live', { timeout: 60_000 }, async () => {
    await open('metrics', 'Metrics')
    const states = page.getByTestId('metrics-listener-states')
    await expect.poll(() => states.getByTestId('listener-metrics').getAttribute('data-state')).toBe('stopped')
    const at = `127.0.0.1:${await freePort()}`
    const form = page.getByTestId('metrics-form')
    await form.getByRole('switch', { name: 'Metrics enabled' }).check({ force: true })
    await form.getByLabel('Address', { exact: true }).fill(at)
    await page.getByTestId('metrics-save').click()
    await expect.poll(() => states.getByTestId('listener-metrics').getAttribute('data-state'), { timeout: 15_000 }).toBe('listening')
    expect(await states.getByTestId('listener-metrics-address').textContent()).toBe(at)
    expect((await fetch(`http://${at}/metrics`)).status).toBe(200)
    expect(await axe(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'dark' })
    await expect.poll(() => page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme'))).toBe('dark')
    expect(await axe(page), 'dark').toEqual([])
    await page.emulateMedia({ colorScheme: 'light' })
  })
})
