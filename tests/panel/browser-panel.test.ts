import type { BrowserContext, Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp, uniqueEmail } from '../helpers/http.js'
import { startSmtpSink } from '../helpers/smtp.js'
import { type PanelHarness, screenshot, panelPageForFile, viewOpener } from './harness.js'

/**
 * The browser control panel against the real server: Debian's Chromium driven by playwright-core,
 * the renderer built as `npm run build` builds it, the panel's own loopback listener and token.
 */

let h: PanelHarness
let context: BrowserContext
let page: Page

const session = panelPageForFile()
beforeAll(() => {
  ;({ h, context, page } = session)
})

const api = (op: string, init: RequestInit = {}) =>
  fetch(`${h.panel.origin}/panel/api/${op}`, {
    method: 'POST',
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    body: init.body ?? '{}',
  })

/** A full page load of a view (a hash change alone would keep the cached data). */
const open = viewOpener(session)

describe('browser panel', () => {
  it('is bound to 127.0.0.1; its operations need a signed-in admin or the start-up (recovery) token', { timeout: 45_000 }, async () => {
    expect(h.panel.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(h.panel.loginURL).toBe(`${h.panel.origin}/?token=${h.panel.token}`)

    // The page and its code are public (the sign-in page, tests/panel/panel-admins.test.ts); the
    // operations and downloads are not. A wrong token is refused.
    const bare = await fetch(`${h.panel.origin}/`)
    expect(bare.status).toBe(200)
    expect(await bare.text()).toContain('<div id="root">')
    expect((await fetch(`${h.panel.origin}/?token=${h.panel.token}x`)).status).toBe(401)
    expect((await fetch(`${h.panel.origin}/panel/download/backup/x.tar.gz`)).status).toBe(401)
    const signIn = { code: 'PANEL_SIGN_IN_REQUIRED', message: 'Sign in to the control panel' }
    const noToken = await api('server.info')
    expect(noToken.status).toBe(401)
    expect(await noToken.json()).toEqual(signIn)
    const wrongCookie = await api('server.info', { headers: { cookie: `gatehouse_panel_${h.panel.port}=nope` } })
    expect([wrongCookie.status, await wrongCookie.json()]).toEqual([401, signIn])

    // Even with the token: other sites, other Host names (DNS rebinding) and non-JSON bodies are refused.
    const bearer = { authorization: `Bearer ${h.panel.token}` }
    const answer = async (res: Response) => [res.status, await res.json()]
    const invalidOrigin = [403, { code: 'INVALID_ORIGIN', message: 'Invalid origin' }]
    expect(await answer(await api('server.info', { headers: { ...bearer, origin: 'https://evil.example' } }))).toEqual(invalidOrigin)
    expect(await answer(await api('server.info', { headers: { ...bearer, 'sec-fetch-site': 'cross-site' } }))).toEqual(invalidOrigin)
    expect(await answer(await api('server.info', { headers: { ...bearer, 'content-type': 'text/plain' } }))).toEqual([
      415,
      { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send application/json' },
    ])
    const unknown = await api('nope.nothing', { headers: bearer })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toMatchObject({ code: 'UNKNOWN_OPERATION', message: 'Unknown operation nope.nothing' })

    // In the browser: a wrong token shows the refusal; the printed URL logs in and drops the token from the URL.
    const wrong = await page.goto(`${h.panel.origin}/?token=wrong`)
    expect(wrong?.status()).toBe(401)
    await page.getByText('recovery link expired').first().waitFor()
    await page.goto(h.panel.loginURL)
    expect(page.url()).toBe(`${h.panel.origin}/`)
    await page.getByRole('heading', { level: 2, name: 'Overview' }).waitFor({ timeout: 10_000 })
    const cookie = (await context.cookies()).find((c) => c.name === `gatehouse_panel_${h.panel.port}`)
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', value: h.panel.token })
    await page.getByTestId('api-url').filter({ hasText: h.server.base }).waitFor()
    const index = await fetch(`${h.panel.origin}/`, { headers: bearer })
    expect(index.status).toBe(200)
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(index.headers.get('x-frame-options')).toBe('DENY')
  })

  it('overview shows the real counts, activity and recent events', { timeout: 45_000 }, async () => {
    const a = await signUp(h.server.base)
    await signUp(h.server.base)
    const client = new HttpClient(h.server.base)
    expect((await client.post('/sign-in/email', { email: a.email, password: 'wrong password!' })).status).toBe(401)
    expect((await client.post('/sign-in/email', { email: a.email, password: a.password })).status).toBe(200)
    h.server.clock.advance(-2 * 3600_000)
    await signUp(h.server.base)
    h.server.clock.advance(2 * 3600_000)

    await open('overview', 'Overview')
    // Whole numbers, not substrings ('3' would also match 13 or 30).
    await page.getByTestId('count-users').filter({ hasText: /^3$/ }).waitFor()
    await page.getByTestId('count-sessions').filter({ hasText: /^4$/ }).waitFor()
    await page.getByTestId('count-organizations').filter({ hasText: /^0$/ }).waitFor()
    await page.getByText('Sign-ins and failures').waitFor()
    // Recent events come from the audit log: the failed sign-in is there.
    await page.getByTestId('audit-table').getByText('failure').first().waitFor()
    await screenshot(page, 'overview', true)
  })

  it('a trusted origin added in the panel is accepted by the API at once', { timeout: 45_000 }, async () => {
    const app = 'http://app.panel-test.example:3000'
    const fromApp = new HttpClient(h.server.base, { origin: app })
    const before = await fromApp.post('/sign-up/email', { name: 'Before', email: uniqueEmail(), password: 'correct horse battery' })
    expect(before.status).toBe(403)
    expect(before.body).toEqual({ code: 'INVALID_ORIGIN', message: 'Invalid origin' })

    await open('settings', 'Settings')
    await page.getByTestId('no-origins').waitFor()
    // The config schema's rules, inline: a path is refused with the reason.
    await page.getByTestId('new-origin').fill('https://app.example.com/callback')
    await page.getByTestId('add-origin').click()
    await page.getByText('must be an origin only (scheme, host and port), like https://app.example.com').waitFor()
    await page.getByTestId('new-origin').fill(app)
    await page.getByTestId('add-origin').click()
    await page.getByRole('textbox', { name: 'Trusted origin 1' }).waitFor()
    await page.getByTestId('unsaved').waitFor()
    await page.getByTestId('save-settings').click()
    // Before saving, the list of what will change.
    await page.getByTestId('review-changes').getByText(`none → ${app}`).waitFor()
    await page.getByTestId('confirm-save').click()
    await page.getByText('Application and URLs saved').waitFor()
    expect(h.server.gatehouse.config.get().trustedOrigins).toEqual([app])

    const after = await fromApp.post('/sign-up/email', { name: 'After', email: uniqueEmail(), password: 'correct horse battery' })
    expect(after.status).toBe(200)
    // Start-up overrides are flagged (the test server turns rate limiting off with an override).
    await page.getByTestId('settings-nav-rate-limits').click()
    await page.getByTestId('section-rate-limits').getByText('set at start-up').first().waitFor()
    await screenshot(page, 'settings', true)
  })

  it('refuses an invalid setting with the reason next to the field and changes nothing', { timeout: 45_000 }, async () => {
    await open('settings?section=sign-in', 'Settings')
    const min = page.getByTestId('setting-emailAndPassword.minPasswordLength')
    await min.fill('500')
    // Checked while typing, in the words of the field it names; nothing can be saved meanwhile.
    await page.getByText('Must not exceed “Longest password” (128)').first().waitFor()
    expect(await page.getByTestId('save-settings').isDisabled()).toBe(true)
    expect(h.server.gatehouse.config.get().emailAndPassword.minPasswordLength).toBe(8)
    await min.fill('10')
    await page.getByTestId('save-settings').click()
    await page.getByTestId('review-changes').getByText('Shortest password').waitFor()
    await page.getByTestId('confirm-save').click()
    await page.getByText('Sign-in and passwords saved').first().waitFor()
    expect(h.server.gatehouse.config.get().emailAndPassword.minPasswordLength).toBe(10)
    const short = await new HttpClient(h.server.base).post('/sign-up/email', { name: 'S', email: uniqueEmail(), password: '123456789' })
    expect(short.body).toEqual({ code: 'PASSWORD_TOO_SHORT', message: 'Password too short' })
    h.server.gatehouse.config.update({ emailAndPassword: { minPasswordLength: 8 } })
  })

  it('audit log filters by outcome and user, and exports what it shows', { timeout: 45_000 }, async () => {
    const victim = await signUp(h.server.base)
    expect((await new HttpClient(h.server.base).post('/sign-in/email', { email: victim.email, password: 'not it at all' })).status).toBe(
      401,
    )

    await open('audit', 'Audit log')
    await page.getByTestId('filter-user').fill(victim.email)
    // The sign-up, its sign-in (autoSignIn: through the sign-in pipeline) and the refused sign-in.
    await page.getByTestId('audit-total').filter({ hasText: '3 events' }).waitFor()
    await page.getByTestId('filter-outcome').getByText('Failure').click()
    await page.getByTestId('audit-total').filter({ hasText: '1 event' }).waitFor()
    await page.getByTestId('audit-table').getByText('INVALID_PASSWORD').waitFor()

    const download = page.waitForEvent('download')
    await page.getByTestId('export-json').click()
    const file = await download
    expect(file.suggestedFilename()).toMatch(/^gatehouse-audit-.*\.json$/)
    const exported = JSON.parse(await streamText(await file.createReadStream())) as Array<Record<string, unknown>>
    expect(exported).toHaveLength(1)
    expect(exported[0]).toMatchObject({ type: 'user.sign-in', outcome: 'failure', targetUserId: victim.user.id })
    await screenshot(page, 'audit', true)
  })

  it('a user created in the panel signs in over the HTTP API', { timeout: 45_000 }, async () => {
    const email = uniqueEmail('panel')
    await open('users', 'Users')
    await page.getByTestId('create-user').click()
    await page.getByTestId('create-name').fill('Panel Made')
    await page.getByTestId('create-email').fill(email)
    await page.getByTestId('create-password').fill('short')
    await page.getByTestId('create-submit').click()
    await page.getByText('Password too short').waitFor()
    await page.getByTestId('create-password').fill('panel-made password')
    await page.getByTestId('create-submit').click()
    await page.getByTestId(`user-row-${email}`).waitFor()

    const client = new HttpClient(h.server.base)
    const signIn = await client.post<{ user: { email: string; name: string } }>('/sign-in/email', {
      email,
      password: 'panel-made password',
    })
    expect(signIn.status).toBe(200)
    expect(signIn.body.user).toMatchObject({ email, name: 'Panel Made' })
    await page.getByTestId(`user-row-${email}`).click()
    await page.getByTestId('user-drawer').waitFor()
    await page.getByTestId('sessions-table').waitFor()
    await screenshot(page, 'users', true)
  })

  it('creating a user with a taken email shows the error beside the email field', { timeout: 45_000 }, async () => {
    const taken = await signUp(h.server.base)
    await open('users', 'Users')
    await page.getByTestId('create-user').click()
    await page.getByTestId('create-name').fill('Second Holder')
    await page.getByTestId('create-email').fill(taken.email)
    await page.getByTestId('create-password').fill('second holder password')
    await page.getByTestId('create-submit').click()

    // The server's error names the field: the email input is marked invalid and described by it.
    const email = page.getByTestId('create-email')
    await expect.poll(() => email.getAttribute('aria-invalid')).toBe('true')
    const described = ((await email.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
    const texts = await Promise.all(described.map((id) => page.locator(`[id="${id}"]`).textContent()))
    expect(texts).toContain('User already exists')
    // Beside the email only: not on another field, not as a notification.
    expect(await page.getByTestId('create-password').getAttribute('aria-invalid')).not.toBe('true')
    expect(await page.getByTestId('create-name').getAttribute('aria-invalid')).not.toBe('true')
    expect(await page.getByText('User not created').count()).toBe(0)
    // And nothing was created.
    const listed = await api('users.list', {
      headers: { authorization: `Bearer ${h.panel.token}` },
      body: JSON.stringify({ searchValue: taken.email }),
    })
    expect(((await listed.json()) as { total: number }).total).toBe(1)
    await screenshot(page, 'users-create-taken-email')
    await page.keyboard.press('Escape')
  })

  it('banning a user in the panel kills their API session', { timeout: 45_000 }, async () => {
    const victim = await signUp(h.server.base)
    expect((await victim.client.get<{ user: { id: string } }>('/get-session')).body?.user.id).toBe(victim.user.id)

    await open('users', 'Users')
    await page.getByTestId('user-search').fill(victim.email)
    await page.getByTestId(`user-row-${victim.email}`).click()
    await page.getByTestId('ban-user').click()
    await page.getByTestId('ban-reason').fill('panel test')
    await page.getByTestId('ban-confirm').click()
    await page.getByTestId('banned-badge').waitFor()

    expect((await victim.client.get('/get-session', { 'cache-control': 'no-cache' })).body).toBeNull()
    const again = await new HttpClient(h.server.base).post('/sign-in/email', { email: victim.email, password: victim.password })
    expect(again.status).toBe(403)
    expect(again.body).toMatchObject({ code: 'BANNED_USER' })
    await screenshot(page, 'users-ban')

    await page.getByTestId('unban-user').click()
    await page.getByTestId('ban-user').waitFor()
    expect((await new HttpClient(h.server.base).post('/sign-in/email', { email: victim.email, password: victim.password })).status).toBe(
      200,
    )
  })

  it('a provider configured in the panel is used by /sign-in/social at once', { timeout: 45_000 }, async () => {
    const social = () =>
      new HttpClient(h.server.base).post<{ url: string; redirect: boolean }>('/sign-in/social', {
        provider: 'github',
        callbackURL: '/done',
      })
    expect((await social()).status).toBe(404)

    await open('providers', 'Providers')
    const row = page.getByTestId('provider-github')
    await row.getByText(`${h.server.base}/callback/github`).waitFor()
    await page.getByTestId('provider-github-status').filter({ hasText: 'off' }).waitFor()
    await page.getByTestId('provider-github-configure').click()
    const card = page.getByRole('dialog', { name: 'GitHub sign-in' })
    await page.getByTestId('provider-github-client-id').fill('panel-client-id-123')
    await page.getByTestId('provider-github-secret').fill('panel-client-secret-456')
    await page.getByTestId('provider-github-enabled').check()
    await page.getByTestId('provider-github-save').click()
    await page.getByText('GitHub saved').waitFor()

    const answer = await social()
    expect(answer.status).toBe(200)
    const url = new URL(answer.body.url)
    expect(url.origin).toBe('https://github.com')
    expect(url.searchParams.get('client_id')).toBe('panel-client-id-123')
    expect(url.searchParams.get('redirect_uri')).toBe(`${h.server.base}/callback/github`)
    // The secret is sealed at rest and never sent back to the renderer.
    const stored = h.server.gatehouse.config.storedLayer() as { socialProviders: { github: { clientSecret: string } } }
    expect(stored.socialProviders.github.clientSecret).toMatch(/^enc:/)
    expect(stored.socialProviders.github.clientSecret).not.toContain('panel-client-secret-456')
    await card.getByText('Stored (encrypted). Leave empty to keep it.').waitFor()
    await page.getByTestId('provider-github-status').filter({ hasText: 'enabled' }).waitFor()
    await screenshot(page, 'provider-configured', true)
    await page.keyboard.press('Escape')
  })

  it('a provider form shows the refusal beside the field the server named (clientId), not in a guess from the text', {
    timeout: 15_000,
  }, async () => {
    await open('providers', 'Providers')
    await page.getByTestId('provider-gitlab-configure').click()
    const input = page.getByTestId('provider-gitlab-client-id')
    await input.fill('')
    await page.getByTestId('provider-gitlab-enabled').check()
    await page.getByTestId('provider-gitlab-save').click()
    await page.getByText('GitLab not saved').waitFor()
    // The field is marked invalid and its own error text (aria-describedby) carries the message.
    expect(await input.getAttribute('aria-invalid')).toBe('true')
    const describedBy = (await input.getAttribute('aria-describedby')) ?? ''
    const errorId = describedBy.split(' ').find((id) => id.endsWith('-error'))
    expect(errorId).toBeTruthy()
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toBe('required to enable the provider')
    // Nothing was stored.
    const stored = h.server.gatehouse.config.storedLayer() as { socialProviders?: { gitlab?: unknown } }
    expect(stored.socialProviders?.gitlab).toBeUndefined()
    await page.keyboard.press('Escape')
  })

  it('SMTP set in the panel delivers a test email to a loopback sink', { timeout: 45_000 }, async () => {
    const sink = await startSmtpSink()
    try {
      await open('email', 'Email')
      await page.getByTestId('smtp-host').fill('127.0.0.1')
      await page.getByTestId('smtp-port').fill(String(sink.port))
      await page.getByTestId('smtp-save').click()
      await page.getByText('SMTP saved').waitFor()
      const to = uniqueEmail('smtp')
      await page.getByTestId('test-to').fill(to)
      await page.getByTestId('test-send').click()
      const mail = await sink.waitFor(to, () => true, 8_000)
      expect(mail.subject).toBe('Gatehouse test email')
      await page.getByText('Test email sent').waitFor()
      await page.getByRole('tab', { name: 'Outbox' }).click()
      await page.getByTestId('outbox-table').getByText(to).waitFor()
      await screenshot(page, 'email', true)
    } finally {
      await sink.close()
    }
  })

  it('shows accounts locked by failed passwords and lifts a lock', { timeout: 45_000 }, async () => {
    const { email, password } = await signUp(h.server.base)
    for (let i = 0; i < 11; i++) await new HttpClient(h.server.base).post('/sign-in/email', { email, password: 'not-the-password' })
    expect((await new HttpClient(h.server.base).post('/sign-in/email', { email, password })).status).toBe(429)

    await open('settings?section=rate-limits', 'Settings')
    const row = page.getByTestId('locked-accounts').getByRole('row', { name: new RegExp(`email:${email}`) })
    await row.getByRole('button', { name: 'Unlock' }).click()
    await page.getByText(`email:${email} unlocked`).waitFor()
    expect((await new HttpClient(h.server.base).post('/sign-in/email', { email, password })).status).toBe(200)
  })

  it('every view renders (screenshots)', { timeout: 45_000 }, async () => {
    for (const [view, heading] of [
      ['organizations', 'Organizations'],
      ['providers', 'Providers'],
      ['email', 'Email'],
    ] as const) {
      await open(view, heading)
      await page.waitForLoadState('networkidle')
      expect(await page.getByTestId('not-available').count()).toBe(0)
      expect(await page.getByTestId('error-notice').count()).toBe(0)
      await screenshot(page, `view-${view}`, view === 'organizations')
    }
  })

  it('creating an organization with a taken slug shows the error beside the slug field', { timeout: 60_000 }, async () => {
    const owner = await signUp(h.server.base)
    const slug = `taken-${Date.now().toString(36)}`
    const first = await api('orgs.create', {
      headers: { authorization: `Bearer ${h.panel.token}` },
      body: JSON.stringify({ name: 'First', slug, ownerUserId: owner.user.id }),
    })
    expect(first.status).toBe(200)
    // The panel's failure names the field (kept off the auth API's wire, which stays {code, message}).
    const again = await api('orgs.create', {
      headers: { authorization: `Bearer ${h.panel.token}` },
      body: JSON.stringify({ name: 'Again', slug, ownerUserId: owner.user.id }),
    })
    expect([again.status, await again.json()]).toEqual([
      400,
      { code: 'ORGANIZATION_ALREADY_EXISTS', message: 'Organization already exists', status: 400, field: 'slug' },
    ])

    await open('organizations', 'Organizations')
    await page.getByRole('button', { name: 'Create organization' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create organization' })
    await dialog.getByLabel('Name').fill('Second')
    const slugInput = dialog.getByRole('textbox', { name: 'Slug' })
    await slugInput.fill(slug)
    await page.getByTestId('org-owner').click()
    await page.getByRole('option', { name: `Test User <${owner.email}>` }).click()
    await dialog.getByRole('button', { name: 'Create' }).click()

    // The server names the field (PanelFailure.field = 'slug'); the form shows the catalogue's message under it.
    await expect.poll(() => slugInput.getAttribute('aria-invalid')).toBe('true')
    const describedBy = (await slugInput.getAttribute('aria-describedby')) ?? ''
    const errorId = describedBy.split(' ').find((id) => id.endsWith('-error'))
    expect(errorId).toBeTruthy()
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toBe('Organization already exists')
    // The other fields carry no error, and no notification stood in for the field error.
    expect(await dialog.getByLabel('Name').getAttribute('aria-invalid')).not.toBe('true')
    expect(await page.getByText('Not created').count()).toBe(0)
    await screenshot(page, 'organization-slug-taken')

    // Another slug goes through, and the dialog closes.
    await slugInput.fill(`${slug}-2`)
    await expect.poll(() => slugInput.getAttribute('aria-invalid')).not.toBe('true')
    await dialog.getByRole('button', { name: 'Create' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByTestId('orgs-table').getByText(`${slug}-2`).waitFor()

    // Inviting someone who is already a member: the message sits beside the email field.
    await page.getByTestId('orgs-table').getByText(`${slug}-2`).click()
    await page.getByRole('tab', { name: /Invitations/ }).click()
    const email = page.getByRole('textbox', { name: 'Invite email' })
    await email.fill(owner.email)
    await page.getByRole('button', { name: 'Invite' }).click()
    await expect.poll(() => email.getAttribute('aria-invalid')).toBe('true')
    const emailError = ((await email.getAttribute('aria-describedby')) ?? '').split(' ').find((id) => id.endsWith('-error'))
    expect(await page.locator(`[id="${emailError}"]`).textContent()).toBe('User is already a member of this organization')
    expect(await page.getByText('Not invited').count()).toBe(0)
  })
})

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}
