import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../../helpers/http.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'

/**
 * Issue 27 in the panel: the Users list marks anonymous users and can leave them out (the admin
 * list-users domain function's filter on isAnonymous), in Chromium against the real server.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

const api = async (op: string, body: unknown) => {
  const res = await fetch(`${h.panel.origin}/panel/api/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.panel.token}` },
    body: JSON.stringify(body),
  })
  return (await res.json()) as { users: { email: string; isAnonymous: boolean }[]; total: number }
}

describe('anonymous users in the Users view', () => {
  it('are marked, and the Show filter keeps them out or shows only them', { timeout: 30_000 }, async () => {
    await h.server.gatehouse.config.update({ anonymous: { enabled: true } })
    const person = await signUp(h.server.base)
    const visitor = await new HttpClient(h.server.base).post<{ user: { email: string } }>('/sign-in/anonymous')
    expect(visitor.status).toBe(200)
    const anonEmail = visitor.body.user.email

    // The panel operation: the flag on each row, and the filter both ways.
    const all = await api('users.list', { limit: 500 })
    expect(all.users.find((u) => u.email === anonEmail)?.isAnonymous).toBe(true)
    expect(all.users.find((u) => u.email === person.email)?.isAnonymous).toBe(false)
    const without = await api('users.list', { filterField: 'isAnonymous', filterValue: true, filterOperator: 'ne', limit: 500 })
    expect(without.users.map((u) => u.email)).toContain(person.email)
    expect(without.users.some((u) => u.isAnonymous)).toBe(false)
    const only = await api('users.list', { filterField: 'isAnonymous', filterValue: true, filterOperator: 'eq', limit: 500 })
    expect(only.users.map((u) => u.email)).toEqual([anonEmail])
    expect(only.total).toBe(1)

    await open('users', 'Users')
    const anonRow = page.getByTestId(`user-row-${anonEmail}`)
    await anonRow.getByTestId('anonymous-badge').waitFor()
    expect(await page.getByTestId(`user-row-${person.email}`).getByTestId('anonymous-badge').count()).toBe(0)

    const show = async (label: string) => {
      await page.getByTestId('user-filter').click()
      await page.getByRole('option', { name: label, exact: true }).click()
    }
    await show('Without anonymous')
    await page.getByTestId(`user-row-${person.email}`).waitFor()
    await anonRow.waitFor({ state: 'detached' })
    await show('Anonymous')
    await anonRow.waitFor()
    await page.getByTestId(`user-row-${person.email}`).waitFor({ state: 'detached' })
    await page.getByTestId('users-total').filter({ hasText: '1 user' }).waitFor()
  })
})
