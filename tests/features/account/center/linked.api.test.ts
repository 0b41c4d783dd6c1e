import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account } from '../../../../server/db/schema.js'
import { FakeOidc } from '../../../helpers/fake-oidc.js'
import { type AccountHarness, accessibleEverywhere, open, person, startAccountHarness, ui } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

/**
 * The account center's Linked accounts page (/ui/account/linked, issue 49 §7) in real Chromium
 * against the real server (SQLite, and PostgreSQL in the `postgres` project) and a real OpenID
 * provider on loopback (generic OAuth): link through the provider's page and back, unlink, and the
 * last way to sign in cannot be unlinked.
 */

let h: AccountHarness
let op: FakeOidc

beforeAll(async () => {
  h = await startAccountHarness()
  op = await new FakeOidc('account-linked', 'account-linked-secret').start()
  h.server.gatehouse.config.update({
    genericOAuth: {
      config: [
        {
          providerId: 'corp-sso',
          name: 'Corp SSO',
          discoveryUrl: op.discoveryUrl,
          clientId: 'account-linked',
          clientSecret: 'account-linked-secret',
        },
      ],
    },
  })
}, 120_000)

afterAll(async () => {
  await op?.http.close()
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

const linked = async (userId: string) =>
  (await h.server.gatehouse.ctx.db.select({ providerId: account.providerId }).from(account).where(eq(account.userId, userId)))
    .map((a) => a.providerId)
    .sort()

describe('account linked accounts page', () => {
  it('links a provider through its page, unlinks it, and keeps the last way in', SLOW, async () => {
    const ada = await person(h)
    op.user = { sub: 'ada-at-corp', email: ada.email, email_verified: true, name: 'Ada at Corp' }
    const { context, page } = await open(h, ada)
    await page.goto(ui(h, 'account/linked'))
    await page.getByRole('heading', { level: 1, name: 'Linked accounts' }).waitFor()
    await page.getByRole('button', { name: 'Link Corp SSO' }).waitFor()
    await accessibleEverywhere(page)

    await page.getByRole('button', { name: 'Link Corp SSO' }).click()
    await page.waitForURL(ui(h, 'account/linked'))
    await page.getByRole('button', { name: 'Unlink Corp SSO' }).waitFor()
    expect(await linked(ada.user.id)).toEqual(['corp-sso', 'credential'])
    await accessibleEverywhere(page)

    await page.getByRole('button', { name: 'Unlink Corp SSO' }).click()
    expect(await page.getByRole('status').textContent()).toBe('Corp SSO is no longer linked.')
    await page.getByRole('button', { name: 'Link Corp SSO' }).waitFor()
    expect(await linked(ada.user.id)).toEqual(['credential'])

    // Without a password, the one linked provider is the last way in: not offered for unlinking.
    await page.getByRole('button', { name: 'Link Corp SSO' }).click()
    await page.waitForURL(ui(h, 'account/linked'))
    // Back from the provider and drawn (a reload before that aborts the navigation still under way).
    await page.getByRole('button', { name: 'Unlink Corp SSO' }).waitFor()
    await h.server.gatehouse.ctx.db.delete(account).where(and(eq(account.userId, ada.user.id), eq(account.providerId, 'credential')))
    await page.reload()
    await page.getByTestId('last-way-in').waitFor()
    expect(await page.getByRole('button', { name: 'Unlink Corp SSO' }).isDisabled()).toBe(true)
    expect((await ada.client.post('/unlink-account', { providerId: 'corp-sso' })).status).toBe(400)
    expect(await linked(ada.user.id)).toEqual(['corp-sso'])
    await accessibleEverywhere(page)
    await context.close()
  })
})
