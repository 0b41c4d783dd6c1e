import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordAudit } from '../../../../server/core/audit.js'
import { HttpClient } from '../../../helpers/http.js'
import { type AccountHarness, accessibleEverywhere, open, person, startAccountHarness, ui } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

/**
 * The account center's Activity page (/ui/account/activity, issue 49 §8) and its endpoint
 * GET /audit/own-events, in real Chromium against the real server (SQLite, and PostgreSQL in the
 * `postgres` project): the person's own sign-ins (and the refused one that named their address)
 * and changes of the last 30 days, newest first; nobody else's; nothing older.
 */

let h: AccountHarness

beforeAll(async () => {
  h = await startAccountHarness()
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

describe('account activity', () => {
  it('lists their own sign-ins, the refused one and a change, and nothing of anyone else or older than 30 days', SLOW, async () => {
    const ada = await person(h)
    const eve = await person(h, { name: 'Eve' })
    const api = new HttpClient(h.server.base)
    // An event 31 days old: out of the window.
    const { ctx } = h.server.gatehouse
    h.server.clock.advance(-31 * 86_400_000)
    await recordAudit(ctx, { type: 'user.password-changed', actorUserId: ada.user.id })
    h.server.clock.advance(31 * 86_400_000)
    expect((await api.post('/sign-in/email', { email: ada.email, password: 'wrong password here' })).status).toBe(401)
    expect((await api.post('/sign-in/email', { email: eve.email, password: 'wrong password here' })).status).toBe(401)
    expect((await ada.client.post('/app-password/create', { name: 'NAS' })).status).toBe(200)

    const own = await ada.client.get<{ days: number; events: Array<{ type: string; outcome: string; method: string | null }> }>(
      '/audit/own-events',
    )
    expect(own.status).toBe(200)
    expect(own.body.days).toBe(30)
    expect(own.body.events.map((e) => [e.type, e.outcome])).toEqual([
      ['app-password.created', 'success'],
      ['user.sign-in', 'failure'],
      // Signing up signs in.
      ['user.sign-in', 'success'],
      ['user.sign-up', 'success'],
    ])
    expect(Object.keys(own.body.events[0] ?? {}).sort()).toEqual(
      ['byAnother', 'createdAt', 'id', 'ipAddress', 'method', 'outcome', 'type', 'userAgent'].sort(),
    )
    expect((await new HttpClient(h.server.base).get('/audit/own-events')).status).toBe(401)

    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account/activity'))
    await page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor()
    await page.getByTestId('activity-app-password.created').waitFor()
    const entries = await page.getByTestId('activity').locator('li').allTextContents()
    expect(entries).toHaveLength(4)
    expect(entries[0]).toMatch(/^App password created/)
    expect(entries[1]).toMatch(/^Sign-in refusedrefused.* · from 127\.0\.0\.1$/)
    expect(entries[2]).toMatch(/^Signed in.* · from 127\.0\.0\.1$/)
    expect(entries[3]).toMatch(/^Account created/)
    await accessibleEverywhere(page)
    await context.close()
  })
})
