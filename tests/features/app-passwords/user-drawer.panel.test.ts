import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { verifyAppPassword } from '../../../server/features/app-passwords/verify.js'
import { signUp } from '../../helpers/http.js'
import { type PanelHarness, panelPageForFile } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/** The Users drawer in real Chromium against the real server: an admin sees a user's app passwords (never the secret) and revokes one. */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})

describe('panel: a user’s app passwords', () => {
  it('lists them in the drawer without the secret and revokes one', { timeout: 90_000 }, async () => {
    const who = await signUp(h.server.base, { name: 'Drawer Person' })
    const made: Array<{ id: string; password: string; hint: string }> = []
    for (const name of ['NAS', 'Jellyfin']) {
      const res = await who.client.post<{ id: string; password: string; hint: string }>('/app-password/create', { name })
      expect(res.status).toBe(200)
      made.push(res.body)
    }
    const [nas, jellyfin] = made as [(typeof made)[0], (typeof made)[0]]
    expect(await verifyAppPassword(h.server.gatehouse.ctx, who.user.id, jellyfin.password)).toBe(true)

    await page.goto(`${h.panel.origin}/?load=1#/users/${who.user.id}`)
    await page.getByTestId('user-drawer').waitFor()
    await page.getByRole('tab', { name: 'Second factors' }).click()
    const table = page.getByTestId('user-app-passwords')
    await table.waitFor()
    await expect.poll(() => table.textContent()).toContain('App passwords (2)')
    const text = (await table.textContent()) ?? ''
    expect(text).toContain('NAS')
    expect(text).toContain(`…${nas.hint}`)
    expect(text).toContain('never')
    expect(text).not.toContain(nas.password)
    expect(await page.content()).not.toContain(jellyfin.password)
    expect(await axe(page)).toEqual([])

    await page.getByTestId(`revoke-app-password-${nas.id}`).click()
    await page.getByTestId(`revoke-app-password-${nas.id}-confirm`).click()
    await expect.poll(() => table.textContent()).toContain('App passwords (1)')
    expect(await table.textContent()).not.toContain('NAS')
    expect(await verifyAppPassword(h.server.gatehouse.ctx, who.user.id, nas.password)).toBe(false)
    expect(await verifyAppPassword(h.server.gatehouse.ctx, who.user.id, jellyfin.password)).toBe(true)
  })
})
