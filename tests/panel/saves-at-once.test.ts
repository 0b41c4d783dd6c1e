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
 * until its value is read again (renderer/src/api.ts `useRereading`). Forms with a Save button
 * met the same refusal when saved twice before the reread (the lifetimes, the protected apps): a
 * save's own values are the next save's base from the moment it succeeds.
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

  it('token lifetimes saved twice before the view reads them back: the second save applies over the first', {
    timeout: 60_000,
  }, async () => {
    const { h, page } = session
    const ttl = () => h.server.gatehouse.config.get().oidcProvider.ttl.accessToken
    await open('sso', 'Single sign-on')
    await slowRereads('oidc.settings')
    const field = page.getByTestId('oidc-ttl-accessToken')
    const saveAs = async (seconds: number) => {
      await field.fill(String(seconds))
      await field.blur()
      await page.getByTestId('oidc-ttl-save').click()
      await page.getByTestId('oidc-ttl-confirm').click()
      await expect.poll(ttl, { timeout: 10_000 }).toBe(seconds)
    }
    await saveAs(1234)
    // Until the reread, the field shows what this admin saved, not the value from before.
    expect(await field.inputValue()).toBe('1234 s')
    await saveAs(2345)
    await expect.poll(() => field.inputValue(), { timeout: 10_000 }).toBe('2345 s')
    expect(await page.getByText('since you opened this view').count()).toBe(0)
    await expect.poll(() => page.getByTestId('oidc-ttl-unsaved').count(), { timeout: 10_000 }).toBe(0)
    await page.unroute('**/panel/api/oidc.settings')
  })

  it('protected apps saved twice before the view reads them back: the second save applies, an edit made meanwhile stays', {
    timeout: 60_000,
  }, async () => {
    const { h, page } = session
    const enabled = () => h.server.gatehouse.config.get().forwardAuth.enabled
    await open('protected-apps', 'Protected apps')
    const toggle = page.getByLabel('Forward auth enabled')
    const before = enabled()
    await expect.poll(() => toggle.isChecked()).toBe(before)
    await slowRereads('forwardAuth.get')
    await toggle.click()
    await page.getByTestId('forward-auth-save').click()
    await expect.poll(enabled).toBe(!before)
    // Edited again while the view is still reading the first save back.
    await toggle.click()
    await page.getByTestId('forward-auth-save').click()
    await expect.poll(enabled, { timeout: 10_000 }).toBe(before)
    await expect.poll(() => toggle.isChecked(), { timeout: 10_000 }).toBe(before)
    expect(await page.getByText('since you opened this view').count()).toBe(0)
    await page.unroute('**/panel/api/forwardAuth.get')
  })
})
