import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recentAuditEvents } from '../../../server/core/audit.js'
import { findUserById } from '../../../server/core/users.js'
import { HttpClient, signUp, type SignedUp } from '../../helpers/http.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { buildRenderer, launchChromium, type PanelHarness, screenshot, startPanelHarness } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/**
 * Issue 31 §3 in Chromium, keyboard first: the user drawer (edit, mails, lockout, roles, device
 * sessions, last login method), one search, bulk actions, organizations (add a member, team
 * members, rename, delete), API-key owners by search, rows that open from the keyboard and
 * drawers that are deep links. axe-core (WCAG 2 A/AA) on each drawer and dialog touched.
 */

let browser: Browser
let context: BrowserContext
let page: Page
let h: PanelHarness
let sink: SmtpSink
let people: SignedUp[] = []
const tag = `kb${Date.now().toString(36)}`

beforeAll(async () => {
  sink = await startSmtpSink()
  const [assets, launched] = await Promise.all([buildRenderer(), launchChromium()])
  browser = launched
  h = await startPanelHarness(assets, {
    config: {
      mail: { smtp: { url: sink.url } },
      security: { accountLockout: { maxFailures: 2 } },
      lastLoginMethod: { enabled: true, storeInDatabase: true },
      admin: { roles: { support: { user: ['list', 'get'] } } },
    },
  })
  context = await browser.newContext({ viewport: { width: 1440, height: 900 }, timezoneId: 'UTC', locale: 'en-GB', colorScheme: 'light' })
  page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(h.panel.loginURL)
  // More than a page of users (25), so paging shows in the checked views.
  people = []
  for (let i = 0; i < 27; i++) people.push(await signUp(h.server.base, { name: `${tag} person ${String(i).padStart(2, '0')}` }))
}, 180_000)
afterAll(async () => {
  await context?.close()
  await browser?.close()
  await h?.close()
  await sink?.close()
})

let loads = 0
async function openView(view: string, heading: string): Promise<void> {
  await page.goto(`${h.panel.origin}/?load=${++loads}#/${view}`)
  await page.getByRole('heading', { level: 2, name: heading }).waitFor({ timeout: 10_000 })
}

/** Presses Tab until the focused element carries `testId` (bounded): the keyboard-only way there. */
async function tabTo(testId: string, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if ((await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))) === testId) return
  }
  throw new Error(`Tab never reached ${testId}`)
}

const hash = () => page.evaluate(() => window.location.hash)

describe('Users view', () => {
  it('one search finds by name, email or username; a row opens its drawer from the keyboard; the drawer is a deep link', {
    timeout: 90_000,
  }, async () => {
    const target = people[3] as SignedUp
    expect((await target.client.post('/update-user', { username: `${tag}_handle` })).status).toBe(200)
    await openView('users', 'Users')
    // Paging data: the pager shows, and the view passes axe.
    await page.getByTestId('users-total').waitFor()
    expect(await axe(page)).toEqual([])

    const search = page.getByTestId('user-search')
    await search.focus()
    await page.keyboard.type(`${tag}_HANDLE`)
    await page.getByTestId(`user-row-${target.email}`).waitFor()
    await expect.poll(() => page.locator('[data-testid^="user-row-"]').count()).toBe(1)
    await tabTo(`user-row-${target.email}`)
    await page.keyboard.press('Enter')
    const drawer = page.getByRole('dialog', { name: target.email, exact: true })
    await drawer.getByTestId('user-drawer').waitFor()
    expect(await hash()).toBe(`#/users/${target.user.id}`)

    // A reload opens the same drawer.
    await page.reload()
    await page.getByRole('dialog', { name: target.email, exact: true }).getByTestId('user-drawer').waitFor({ timeout: 10_000 })
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])
    // Closing it returns to the list's address; Space on a focused row opens it as well.
    await page.keyboard.press('Escape')
    await expect.poll(hash).toBe('#/users')
    await page.getByTestId(`user-row-${target.email}`).focus()
    await page.keyboard.press(' ')
    await page.getByRole('dialog', { name: target.email, exact: true }).getByTestId('user-drawer').waitFor()
    await page.keyboard.press('Escape')
  })

  it('edits name and email, mails a reset and a verification link, shows and lifts a lockout, offers the defined roles', {
    timeout: 90_000,
  }, async () => {
    const target = people[5] as SignedUp
    const http = new HttpClient(h.server.base)
    for (let i = 0; i < 2; i++) await http.post('/sign-in/email', { email: target.email, password: 'wrong password!' })
    expect((await http.post('/sign-in/email', { email: target.email, password: target.password })).status).toBe(429)

    await page.goto(`${h.panel.origin}/?load=${++loads}#/users/${target.user.id}`)
    const drawer = page.getByRole('dialog', { name: target.email, exact: true })
    await drawer.getByTestId('user-drawer').waitFor({ timeout: 10_000 })

    // Lockout: seen, then lifted; the user signs in again.
    const lockout = drawer.getByTestId('user-lockout')
    expect(await lockout.textContent()).toContain('Passwords: 2 failed attempts')
    await drawer.getByTestId('lift-lockout').focus()
    await page.keyboard.press('Enter')
    await lockout.waitFor({ state: 'detached' })
    expect((await http.post('/sign-in/email', { email: target.email, password: target.password })).status).toBe(200)

    // Roles: a choice of the defined roles (the custom one included), not free text.
    await drawer.getByTestId('user-roles').focus()
    await page.keyboard.press('ArrowDown')
    await page.getByRole('option', { name: 'support' }).waitFor()
    const options = await page.getByRole('option').allTextContents()
    expect(options).toEqual(expect.arrayContaining(['admin', 'support']))
    await page.keyboard.type('support')
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await drawer.getByRole('button', { name: 'Save roles' }).focus()
    await page.keyboard.press('Enter')
    await expect.poll(async () => (await findUserById(h.server.gatehouse.ctx, target.user.id))?.role).toBe('user,support')

    // Edit: a dialog, keyboard only; a taken email is the email field's error.
    await drawer.getByTestId('edit-user').focus()
    await page.keyboard.press('Enter')
    const dialog = page.getByRole('dialog', { name: `Edit ${target.email}` })
    await dialog.getByTestId('edit-name').waitFor()
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('Renamed Person')
    await page.keyboard.press('Tab')
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type((people[6] as SignedUp).email)
    await page.keyboard.press('Enter')
    const emailInput = dialog.getByTestId('edit-email')
    await expect.poll(() => emailInput.getAttribute('aria-invalid')).toBe('true')
    const newEmail = `renamed-${tag}@example.com`
    await emailInput.fill(newEmail)
    await page.keyboard.press('Enter')
    await dialog.waitFor({ state: 'hidden' })
    const renamed = page.getByRole('dialog', { name: newEmail, exact: true })
    await renamed.waitFor()
    const row = await findUserById(h.server.gatehouse.ctx, target.user.id)
    expect([row?.name, row?.email]).toEqual(['Renamed Person', newEmail])

    // Mails through the outbox: a reset link and (the new address being unverified) a verification link.
    await renamed.getByTestId('send-reset').focus()
    await page.keyboard.press('Enter')
    const reset = await sink.waitFor(newEmail, (m) => /reset-password\//.test(m.text))
    expect(reset.to).toEqual([newEmail])
    await renamed.getByTestId('send-verification').focus()
    await page.keyboard.press('Enter')
    await sink.waitFor(newEmail, (m) => /verify-email\?token=/.test(m.text))
    const types = (await recentAuditEvents(h.server.gatehouse.ctx, 50, target.user.id)).map((e) => e.type)
    expect(types).toEqual(
      expect.arrayContaining([
        'security.account-unlocked',
        'admin.update-user',
        'admin.send-password-reset',
        'admin.send-verification-email',
      ]),
    )
    await screenshot(page, 'user-drawer-actions')
    await page.keyboard.press('Escape')
  })

  it('shows device sessions (agent, IP, last seen) and the last login method; a session is revoked from the keyboard', {
    timeout: 60_000,
  }, async () => {
    const target = people[7] as SignedUp
    const kiosk = new HttpClient(h.server.base)
    expect(
      (await kiosk.post('/sign-in/email', { email: target.email, password: target.password }, { 'user-agent': 'KioskBrowser/1.0' })).status,
    ).toBe(200)
    await page.goto(`${h.panel.origin}/?load=${++loads}#/users/${target.user.id}`)
    const drawer = page.getByRole('dialog', { name: target.email, exact: true })
    await drawer.getByTestId('user-drawer').waitFor({ timeout: 10_000 })
    expect(await drawer.getByTestId('last-login-method').textContent()).toBe('email')
    const sessions = drawer.getByTestId('sessions-table')
    expect(await drawer.getByRole('tab', { name: /Device sessions \(2\)/ }).count()).toBe(1)
    expect(await sessions.textContent()).toContain('KioskBrowser/1.0')
    expect(await sessions.getByRole('columnheader', { name: 'Last seen' }).count()).toBe(1)
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])
    await drawer.getByRole('button', { name: 'Revoke the session from KioskBrowser/1.0' }).focus()
    await page.keyboard.press('Enter')
    await expect.poll(async () => (await kiosk.get('/get-session')).body).toBeNull()
    await expect.poll(() => sessions.textContent()).not.toContain('KioskBrowser/1.0')
    await page.keyboard.press('Escape')
  })

  it('bulk: selects users with the keyboard, confirms with the count, deletes them; each is audited', { timeout: 60_000 }, async () => {
    const [a, b] = [people[20] as SignedUp, people[21] as SignedUp]
    await openView('users', 'Users')
    await page.getByTestId('user-search').fill(`${tag} person 2`)
    await page.getByTestId(`user-row-${a.email}`).waitFor()
    await page.getByTestId(`select-${a.email}`).focus()
    await page.keyboard.press(' ')
    await page.getByTestId(`select-${b.email}`).focus()
    await page.keyboard.press(' ')
    expect(await page.getByTestId('bulk-count').textContent()).toBe('2 users selected')
    // Space on a checkbox selected it without opening the row's drawer.
    expect(await page.getByRole('dialog').count()).toBe(0)

    await page.getByTestId('bulk-revoke').focus()
    await page.keyboard.press('Enter')
    const revoke = page.getByRole('dialog', { name: 'Revoke the sessions of 2 users?' })
    await revoke.waitFor()
    await revoke.getByTestId('bulk-revoke-confirm').focus()
    await page.keyboard.press('Enter')
    await revoke.waitFor({ state: 'hidden' })
    await expect.poll(async () => (await a.client.get('/get-session')).body).toBeNull()

    await page.getByTestId('bulk-delete').focus()
    await page.keyboard.press('Enter')
    const confirm = page.getByRole('dialog', { name: 'Delete 2 users?' })
    await confirm.waitFor()
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])
    await confirm.getByRole('button', { name: 'Delete 2 users' }).focus()
    await page.keyboard.press('Enter')
    await confirm.waitFor({ state: 'hidden' })
    await page.getByTestId(`user-row-${a.email}`).waitFor({ state: 'detached' })
    expect(await page.getByTestId('bulk-bar').count()).toBe(0)
    expect(await findUserById(h.server.gatehouse.ctx, a.user.id)).toBeUndefined()
    expect(await findUserById(h.server.gatehouse.ctx, b.user.id)).toBeUndefined()
    const events = await recentAuditEvents(h.server.gatehouse.ctx, 100)
    for (const id of [a.user.id, b.user.id]) {
      expect(events.some((e) => e.type === 'admin.remove-user' && e.targetUserId === id)).toBe(true)
      expect(events.some((e) => e.type === 'admin.revoke-user-sessions' && e.targetUserId === id)).toBe(true)
    }
  })
})

describe('Organizations view', () => {
  it('a row opens from the keyboard and is a deep link; adds a user by search, sets team members, renames and deletes', {
    timeout: 90_000,
  }, async () => {
    const [owner, newcomer] = [people[10] as SignedUp, people[11] as SignedUp]
    const dispatch = async (op: string, input: unknown) => {
      const r = await h.panel.service.dispatch(op, input)
      if (!r.ok) throw new Error(`${op}: ${r.error.code}`)
      return r.data as unknown
    }
    const created = (await dispatch('orgs.create', { name: `${tag} Org`, slug: `${tag}-org`, ownerUserId: owner.user.id })) as {
      organization: { id: string }
    }
    const orgId = created.organization.id
    await openView('organizations', 'Organizations')
    await page.getByTestId(`org-row-${tag}-org`).waitFor()
    await tabTo(`org-row-${tag}-org`)
    await page.keyboard.press('Enter')
    let drawer = page.getByRole('dialog', { name: `${tag} Org` })
    await drawer.getByTestId('add-member').waitFor()
    expect(await hash()).toBe(`#/organizations/${orgId}`)
    await page.reload()
    drawer = page.getByRole('dialog', { name: `${tag} Org` })
    await drawer.getByTestId('add-member').waitFor({ timeout: 10_000 })
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])

    // Add an existing user: search by email, pick with the keyboard, choose the role, add.
    await drawer.getByTestId('add-member-user').focus()
    await page.keyboard.type(newcomer.email)
    await page.getByRole('option', { name: `${newcomer.user.name} <${newcomer.email}>` }).waitFor()
    await expect.poll(() => page.getByRole('option').count()).toBe(1)
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await drawer.getByTestId('add-member-role').click()
    await page.getByRole('option', { name: 'admin', exact: true }).click()
    await drawer.getByTestId('add-member-submit').click()
    await drawer.getByTestId('org-members').getByText(newcomer.email).waitFor()
    const detail = async () =>
      (await dispatch('orgs.get', { organizationId: orgId })) as unknown as {
        members: Array<{ userId: string; role: string }>
        teams: Array<{ id: string; name: string }>
        teamMembers: Array<{ teamId: string; userId: string }>
      }
    expect((await detail()).members.find((m) => m.userId === newcomer.user.id)?.role).toBe('admin')

    // Team members: the default team gets the newcomer too.
    await drawer.getByRole('tab', { name: /Teams/ }).click()
    const teamName = `${tag} Org`
    const teamPicker = drawer.getByLabel(`Members of ${teamName}`)
    await teamPicker.focus()
    await page.keyboard.type(newcomer.email)
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await expect
      .poll(async () => (await detail()).teamMembers.map((m) => m.userId).sort())
      .toEqual([owner.user.id, newcomer.user.id].sort())
    await page.keyboard.press('Escape')
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])

    // Rename (dialog), then delete (confirmed).
    await drawer.getByTestId('org-rename').focus()
    await page.keyboard.press('Enter')
    const rename = page.getByRole('dialog', { name: `Rename ${tag} Org` })
    await rename.getByTestId('org-rename-name').waitFor()
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])
    await rename.getByTestId('org-rename-name').fill(`${tag} Renamed`)
    await page.keyboard.press('Enter')
    await rename.waitFor({ state: 'hidden' })
    drawer = page.getByRole('dialog', { name: `${tag} Renamed`, exact: true })
    await drawer.waitFor()
    await page.getByTestId(`org-row-${tag}-org`).getByText(`${tag} Renamed`).waitFor()

    await drawer.getByTestId('org-delete').focus()
    await page.keyboard.press('Enter')
    const confirm = page.getByRole('dialog', { name: `Delete ${tag} Renamed?` })
    expect(await confirm.textContent()).toContain('its 2 memberships')
    await confirm.getByTestId('org-delete-confirm').focus()
    await page.keyboard.press('Enter')
    await page.getByTestId(`org-row-${tag}-org`).waitFor({ state: 'detached' })
    await expect.poll(hash).toBe('#/organizations')
    expect((await h.panel.service.dispatch('orgs.get', { organizationId: orgId })).ok).toBe(false)
    await screenshot(page, 'organizations-after-delete')
  })
})

describe('API keys view', () => {
  it('chooses the owner by searching; an email that matches nobody says so instead of UNAUTHORIZED_SESSION', {
    timeout: 60_000,
  }, async () => {
    const owner = people[12] as SignedUp
    await openView('api-keys', 'API keys')
    await page.getByTestId('apikey-enabled').click()
    const picker = page.getByTestId('apikey-owner')
    await picker.fill('nobody-here@example.com')
    await page.getByText('No user matches').waitFor()
    await picker.fill(owner.email)
    await page.getByRole('option', { name: `${owner.user.name} <${owner.email}>` }).waitFor()
    await expect.poll(() => page.getByRole('option').count()).toBe(1)
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await page.getByTestId('apikey-name').fill('picked by search')
    await page.getByTestId('apikey-create').click()
    await page.getByTestId('apikey-secret').waitFor()
    expect(await page.getByText('UNAUTHORIZED_SESSION').count()).toBe(0)
    expect(await page.getByText('Unauthorized or invalid session').count()).toBe(0)
    await page.getByRole('button', { name: 'Done' }).click()
  })
})

describe('Single sign-on view', () => {
  it('a client has its own address: #/sso/<clientId> opens its dialog, also after a reload', { timeout: 60_000 }, async () => {
    expect((await h.panel.service.dispatch('oidc.configure', { patch: { enabled: true } })).ok).toBe(true)
    const created = await h.panel.service.dispatch('oidc.createClient', {
      name: `${tag} Wiki`,
      redirectUris: ['https://wiki.example.com/cb'],
    })
    if (!created.ok) throw new Error(created.error.code)
    const { clientId } = (created.data as { client: { clientId: string } }).client
    await openView('sso', 'Single sign-on')
    await page.getByTestId(`oidc-access-${clientId}`).focus()
    await page.keyboard.press('Enter')
    const dialog = page.getByRole('dialog', { name: `Who may sign in to ${tag} Wiki` })
    await dialog.waitFor()
    expect(await hash()).toBe(`#/sso/${encodeURIComponent(clientId)}`)
    await page.reload()
    await page.getByRole('dialog', { name: `Who may sign in to ${tag} Wiki` }).waitFor({ timeout: 10_000 })
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])
    await page.keyboard.press('Escape')
    await expect.poll(hash).toBe('#/sso')
  })
})
