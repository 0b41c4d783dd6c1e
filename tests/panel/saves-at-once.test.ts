import { describe, expect, it } from 'vitest'
import { createClient } from '../../server/features/oidc-provider/clients.js'
import { findClient } from '../../server/features/oidc-provider/store.js'
import { panelPageForFile, viewOpener } from './harness.js'

/**
 * Controls that save at once (the `groups.*` switches, an OIDC client's switches) when the view's
 * reread after a save is slow (a loaded machine, a slow link): a control clicked again the moment
 * the server has stored the first change must act on the value as it is now. They once acted on
 * the value the view had last read, so the second click sent the old value as its base and the
 * server refused it as another admin's change (409): the admin's own second click was lost (CI,
 * stop 62, tests/features/oidc-provider/oidc-panel.panel.test.ts). Such a control is disabled
 * until its value is read again (renderer/src/api.ts `useRereading`).
 */

const session = panelPageForFile()
const open = viewOpener(session)

/** From now on every reread of `op` answers 1.5 s late, as on a loaded machine. */
const slowRereads = (op: string) =>
  session.page.route(`**/panel/api/${op}`, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    await route.continue()
  })

describe('controls that save at once', () => {
  it('a second click while the rule is still being reread applies to the stored rule', { timeout: 60_000 }, async () => {
    const { h, page } = session
    await open('sso', 'Single sign-on')
    const roles = page.getByTestId('oidc-groups-roles')
    await expect.poll(() => roles.isChecked()).toBe(true)
    await slowRereads('groups.settings')
    await roles.click()
    await expect.poll(() => h.server.gatehouse.config.get().groups.roles).toBe(false)
    await roles.click()
    await expect.poll(() => h.server.gatehouse.config.get().groups.roles, { timeout: 10_000 }).toBe(true)
    await expect.poll(() => roles.isChecked(), { timeout: 10_000 }).toBe(true)
    expect(await page.getByText('since you opened this view').count()).toBe(0)
    await page.unroute('**/panel/api/groups.settings')
  })

  it("an OIDC client's resource-server switch, clicked twice in a row, ends where the admin left it", { timeout: 60_000 }, async () => {
    const { h, page } = session
    const { client } = await createClient(h.server.gatehouse.ctx, { name: 'Wiki', redirectUris: ['https://wiki.lan/cb'] }, { via: 'cli' })
    await open('sso', 'Single sign-on')
    const resourceServer = page.getByTestId(`oidc-rs-${client.clientId}`)
    await expect.poll(() => resourceServer.isChecked()).toBe(false)
    await slowRereads('oidc.clients')
    await resourceServer.click()
    await expect.poll(async () => (await findClient(h.server.gatehouse.ctx, client.clientId))?.resourceServer).toBe(true)
    await resourceServer.click()
    await expect
      .poll(async () => (await findClient(h.server.gatehouse.ctx, client.clientId))?.resourceServer, { timeout: 10_000 })
      .toBe(false)
    await expect.poll(() => resourceServer.isChecked(), { timeout: 10_000 }).toBe(false)
    expect(await page.getByText('since you opened this view').count()).toBe(0)
    await page.unroute('**/panel/api/oidc.clients')
  })
})
