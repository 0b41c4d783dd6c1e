import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { queryAuditEvents } from '../../../server/core/audit.js'
import { findClient } from '../../../server/features/oidc-provider/store.js'
import { registrationTokens } from '../../../server/features/oidc-provider/registration.js'
import { axe } from '../../helpers/axe.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { callFromPage, operatorCall, signedInPage } from '../../helpers/panel-session.js'
import { buildRenderer, launchChromium, type PanelHarness, startPanelHarness } from '../../panel/harness.js'

/**
 * Issue 38's initial access tokens in the Single sign-on view, in real Chromium against the real
 * server: an administrator switches dynamic client registration on, creates a token (shown once,
 * with a warning), an application registers itself with it through a real `POST
 * ISSUER/oauth2/register`, the client list marks it "registered by token …", and after a revoke
 * the same token is refused (401 invalid_token). A view-only admin sees the tokens but gets no
 * create form and no revoke, and the server refuses both. axe on each state, light and dark.
 */

const PASSWORD = 'correct horse battery'
let h: PanelHarness
let browser: Browser
const contexts: BrowserContext[] = []
const people = {} as Record<'ada' | 'sam', { id: string; email: string }>

const operator = (op: string, input: unknown) => operatorCall(h.panel, op, input)

const register = (token: string, name: string) =>
  fetch(`${h.server.base}/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ redirect_uris: ['https://agent.example.test/callback'], client_name: name }),
  })

const signedIn = (email: string, colorScheme: 'light' | 'dark') =>
  signedInPage(browser, h.panel, contexts, { email, password: PASSWORD, colorScheme })

async function openView(page: Page): Promise<void> {
  await page.goto(`${h.panel.origin}/?v=${Date.now()}#/sso`)
  await page.getByRole('heading', { level: 2, name: 'Single sign-on' }).waitFor({ timeout: 10_000 })
  await page.getByTestId('oidc-registration').waitFor()
}

/** axe with the pointer parked in the corner (a hovered button is measured in its hover colours). */
async function a11y(page: Page) {
  await page.mouse.move(0, 0)
  return axe(page)
}

beforeAll(async () => {
  const [assets, b] = await Promise.all([buildRenderer(), launchChromium()])
  browser = b
  h = await startPanelHarness(assets, {
    config: { oidcProvider: { enabled: true }, admin: { roles: { support: { user: ['list' as const, 'get' as const] } } } },
  })
  for (const [key, name, role] of [
    ['ada', 'Ada Admin', 'admin'],
    ['sam', 'Sam Support', 'support'],
  ] as const) {
    const { user } = await verifiedSignUp(h.server, { name, password: PASSWORD })
    await operator('users.setRole', { userId: user.id, role })
    people[key] = { id: user.id, email: user.email }
  }
}, 180_000)

afterAll(async () => {
  for (const context of contexts) await context.close()
  await browser?.close()
  await h?.close()
})

describe('registration tokens in the Single sign-on view', () => {
  for (const scheme of ['light', 'dark'] as const) {
    it(`an admin creates a token, an application registers with it and shows as registered by it, the revoked token is refused (${scheme})`, {
      timeout: 120_000,
    }, async () => {
      const ctx = h.server.gatehouse.ctx
      const page = await signedIn(people.ada.email, scheme)
      await openView(page)
      const registration = page.getByTestId('oidc-registration')
      if (!ctx.config().oidcProvider.registration.enabled) {
        // Off by default, and the view says so; switched on here, live.
        await registration.getByTestId('oidc-registration-off').waitFor()
        expect(await page.getByTestId('oidc-registration-enabled').isChecked()).toBe(false)
        await page.getByTestId('oidc-registration-enabled').click()
        await expect.poll(() => ctx.config().oidcProvider.registration.enabled).toBe(true)
      }
      await expect.poll(() => page.getByTestId('oidc-registration-enabled').isChecked()).toBe(true)
      expect(await registration.getByTestId('oidc-registration-off').count()).toBe(0)
      expect(await a11y(page), 'the view').toEqual([])

      // Create: a label, 2 uses, expiring in a day; the token is shown once, with a warning.
      const label = `CI agents ${scheme}`
      await page.getByTestId('oidc-regtoken-label').fill(label)
      await page.getByTestId('oidc-regtoken-uses').fill('2')
      await page.getByTestId('oidc-regtoken-create').click()
      const dialog = page.getByRole('dialog')
      await dialog.getByTestId('oidc-regtoken-warning').waitFor()
      expect(await dialog.getByTestId('oidc-regtoken-warning').textContent()).toContain('Shown this once')
      const token = ((await dialog.getByTestId('oidc-regtoken-new').textContent()) ?? '').trim()
      expect(token).toMatch(/^ghrt_[\w-]{20,}$/)
      expect(((await dialog.getByTestId('oidc-regtoken-endpoint').textContent()) ?? '').trim()).toBe(`${h.server.base}/oauth2/register`)
      await dialog.getByTestId('oidc-regtoken-new-copy').waitFor()
      expect(await a11y(page), 'the new token dialog').toEqual([])
      await dialog.getByTestId('oidc-regtoken-done').click()
      await dialog.waitFor({ state: 'detached' })
      expect(await page.content()).not.toContain(token)

      // The list: the stored token (never the token itself), who created it, its uses and expiry.
      const stored = (await registrationTokens(ctx)).find((t) => t.label === label)
      expect(stored).toMatchObject({ usesLeft: 2, used: 0, active: true, createdBy: people.ada.email })
      expect(stored?.expiresAt).toBe((stored?.createdAt ?? 0) + 86_400_000)
      const id = stored?.id as string
      const row = page.getByTestId(`oidc-regtoken-${id}`)
      await row.waitFor()
      const text = (await row.textContent()) ?? ''
      for (const part of [id, label, people.ada.email, '2 (0 used)', 'active']) expect(text).toContain(part)

      // A real registration with it (RFC 7591): 201, a client the list marks as registered by it.
      const res = await register(token, `Agent ${scheme}`)
      expect(res.status).toBe(201)
      const registered = (await res.json()) as { client_id: string; client_secret: string }
      expect(registered.client_secret).toEqual(expect.any(String))
      expect(await findClient(ctx, registered.client_id)).toMatchObject({ name: `Agent ${scheme}` })
      await openView(page)
      const badge = page.getByTestId(`oidc-registered-${registered.client_id}`)
      await badge.waitFor()
      expect((await badge.textContent())?.trim()).toBe(`registered by token ${id} (${label})`)
      expect(await page.getByTestId(`oidc-regtoken-${id}`).textContent()).toContain('1 (1 used)')
      expect(await a11y(page), 'the view with the registered client').toEqual([])

      // Revoke, behind a confirmation; then the same token is refused with 401 invalid_token.
      await page.getByTestId(`oidc-regtoken-revoke-${id}`).click()
      const confirm = page.getByRole('dialog', { name: `Revoke registration token ${id}?` })
      await confirm.waitFor()
      expect(await a11y(page), 'the revoke dialog').toEqual([])
      await confirm.getByTestId(`oidc-regtoken-revoke-${id}-confirm`).click()
      await expect.poll(async () => (await registrationTokens(ctx)).find((t) => t.id === id)?.revokedAt).toEqual(expect.any(Number))
      await expect.poll(async () => page.getByTestId(`oidc-regtoken-${id}`).textContent()).toContain('revoked')
      expect(await page.getByTestId(`oidc-regtoken-revoke-${id}`).count()).toBe(0)
      const refused = await register(token, 'Too late')
      expect(refused.status).toBe(401)
      expect(await refused.json()).toMatchObject({ error: 'invalid_token' })
      // The client it registered stays, still marked.
      await page.getByTestId(`oidc-registered-${registered.client_id}`).waitFor()

      // Audited with Ada as the actor.
      const { events } = await queryAuditEvents(ctx, { type: 'oidc.*' }, {})
      expect(
        events
          .filter((e) => e.target === id)
          .reverse()
          .map((e) => [e.type, e.actorUserId]),
      ).toEqual([
        ['oidc.registration-token-created', people.ada.id],
        ['oidc.registration-token-revoked', people.ada.id],
      ])
    })
  }

  it('a view-only admin sees the tokens but no create form and no revoke; the server refuses both', { timeout: 90_000 }, async () => {
    const created = (await operator('oidc.createRegistrationToken', { uses: 5, label: 'for Sam to see' })) as {
      registrationToken: { id: string }
    }
    const id = created.registrationToken.id
    for (const scheme of ['light', 'dark'] as const) {
      const page = await signedIn(people.sam.email, scheme)
      await page.getByTestId('panel-caller').filter({ hasText: 'view only' }).waitFor()
      await openView(page)
      const row = page.getByTestId(`oidc-regtoken-${id}`)
      await row.waitFor()
      expect(await row.textContent()).toContain('for Sam to see')
      expect(await page.getByTestId('oidc-regtoken-create').count()).toBe(0)
      expect(await page.getByTestId('oidc-regtoken-label').count()).toBe(0)
      expect(await page.getByTestId(`oidc-regtoken-revoke-${id}`).count()).toBe(0)
      expect(await page.getByTestId('oidc-registration-enabled').isEditable()).toBe(false)
      expect(await a11y(page), `the view, view only (${scheme})`).toEqual([])
    }
    const page = await signedIn(people.sam.email, 'light')
    for (const [op, input] of [
      ['oidc.createRegistrationToken', { uses: 1 }],
      ['oidc.revokeRegistrationToken', { id }],
    ] as const) {
      expect(await callFromPage(page, op, input), op).toMatchObject({ status: 403, body: { code: 'PANEL_FORBIDDEN' } })
    }
    expect((await registrationTokens(h.server.gatehouse.ctx)).find((t) => t.id === id)).toMatchObject({ active: true, revokedAt: null })
  })
})
