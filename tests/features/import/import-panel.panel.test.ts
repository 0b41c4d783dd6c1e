import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hash as argon2Hash } from '@node-rs/argon2'
import { betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import Database from 'better-sqlite3'
import bcrypt from 'bcryptjs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser } from '../../helpers/browser.js'
import { HttpClient } from '../../helpers/http.js'
import { buildRenderer, type PanelHarness, screenshot, startPanelHarness } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/**
 * The Users view's Import step (issue 29) in real Chromium against the real server: a users file
 * chosen in the browser (uploaded in parts), checked (counts, hash formats, problems by line in the
 * file's own words), imported with progress, then the summary; a better-auth database by path,
 * whose users then sign in with the old password and keep their session. Hashes are made by
 * bcryptjs and @node-rs/argon2, the better-auth database by better-auth 1.7.25 itself. axe-core
 * WCAG 2 A/AA on the dialog's steps.
 */

const SECRET = 'the-apps-better-auth-secret-0123456789abcdef'

let assets: string
let browser: Browser
let h: PanelHarness
let page: Page
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-import-panel-'))
/** The panel's upload directories in the temporary directory (gatehouse-import-XXXXXX). */
const uploadDirs = () => readdirSync(tmpdir()).filter((name) => /^gatehouse-import-[A-Za-z0-9]{6}$/.test(name))
const uploadsBefore = new Set(uploadDirs())

beforeAll(async () => {
  ;[assets, browser] = await Promise.all([buildRenderer(), launchBrowser()])
  // The app's secret: sessions of an imported better-auth database keep working.
  h = await startPanelHarness(assets, { secret: SECRET })
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' })
  page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(h.panel.loginURL)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await h?.close()
  rmSync(dir, { recursive: true, force: true })
  // The server removed what the panel received (the last check's file was still kept for its import).
  expect(uploadDirs().filter((name) => !uploadsBefore.has(name))).toEqual([])
})

let loads = 0
async function openImport(): Promise<void> {
  await page.goto(`${h.panel.origin}/?load=${++loads}#/users`)
  await page.getByRole('heading', { level: 2, name: 'Users' }).waitFor()
  await page.getByTestId('import-users').click()
  await page.getByRole('dialog', { name: 'Import users' }).waitFor()
}

const signIn = (email: string, password: string) =>
  new HttpClient(h.server.base).post<{ user: { id: string } }>('/sign-in/email', { email, password })

async function audited(): Promise<Array<{ detail: unknown }>> {
  const result = await h.panel.service.dispatch('audit.list', { type: 'users.imported' })
  if (!result.ok) throw new Error(result.error.message)
  return (result.data as { events: Array<{ type: string; detail: unknown }> }).events.filter((e) => e.type === 'users.imported')
}

describe('the Import step of the Users view', () => {
  it('checks a users file: problems by line and field in the file’s own words, nothing importable, nothing changed', {
    timeout: 60_000,
  }, async () => {
    const good = bcrypt.hashSync('bcrypt pw', 6)
    const csv = [
      'email,name,passwordHash',
      `grace@example.com,Grace,${good}`,
      'not-an-email,Broken,',
      `grace@example.com,Grace again,`,
      'hedy@example.com,Hedy,$2b$10$truncated',
      'ida@example.com,Ida,md5:abcdef',
      '"unterminated@example.com,Quote,',
    ].join('\n')
    await openImport()
    expect(await axe(page, { within: '.mantine-Modal-content' })).toEqual([])
    await page.locator('input[type=file]').setInputFiles({ name: 'users.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) })
    await page.getByTestId('import-check').click()
    const problems = page.getByTestId('import-problems')
    await problems.waitFor()
    expect(await page.getByTestId('import-preview').textContent()).toBe(
      'Nothing can be imported from users.csv until these problems are fixed.',
    )
    const rows = await problems
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent)))
    expect(rows.slice(0, 4)).toEqual([
      ['3', 'email', 'not an email address'],
      ['4', 'email', 'duplicate email grace@example.com: an earlier row of this file has it'],
      ['5', 'passwordHash', 'truncated or malformed bcrypt hash'],
      ['6', 'passwordHash', expect.stringContaining('unknown password hash format')],
    ])
    // The broken quoting, with its line.
    expect(rows.length).toBe(5)
    expect(rows[4]?.[0]).toBe('7')
    expect(await page.getByTestId('import-run').isDisabled()).toBe(true)
    expect(await axe(page, { within: '.mantine-Modal-content' })).toEqual([])
    await screenshot(page, 'import-problems')
    expect((await signIn('grace@example.com', 'bcrypt pw')).status).toBe(401)
    await page.getByRole('button', { name: 'Back' }).click()
    await page.getByTestId('import-check').waitFor()
  })

  it('imports a users file of several parts with progress and the summary; the old passwords sign in; audited once with the counts', {
    timeout: 90_000,
  }, async () => {
    const bcryptHash = bcrypt.hashSync('bcrypt pw', 6)
    const argonHash = await argon2Hash('argon pw')
    const people = [
      { email: 'Ada@Example.com', name: 'Ada', passwordHash: bcryptHash, emailVerified: true },
      { email: 'linus@example.com', name: 'Linus', passwordHash: argonHash },
      // Many more users without passwords, so the file comes up in several parts (512 KiB each).
      ...Array.from({ length: 12000 }, (_, i) => ({ email: `bulk${i}@example.com`, name: `Bulk user number ${i} ${'x'.repeat(60)}` })),
    ]
    const json = Buffer.from(JSON.stringify(people))
    expect(json.length).toBeGreaterThan(2 * 512 * 1024) // three parts at least
    await openImport()
    await page.locator('input[type=file]').setInputFiles({ name: 'people.json', mimeType: 'application/json', buffer: json })
    await page.getByTestId('import-check').click()
    await page.getByTestId('import-preview').waitFor({ timeout: 30_000 })
    expect(await page.getByTestId('import-preview').textContent()).toBe(
      'Checked people.json: nothing is changed yet. An import would bring in:',
    )
    const counts = await page.getByTestId('import-counts').locator('tr').allTextContents()
    expect(counts).toEqual(['Users12002', 'Passwords (accounts)2', 'Already here (skipped)0'])
    expect(await page.getByTestId('import-hash-formats').locator('.mantine-Badge-root').allTextContents()).toEqual([
      'bcrypt: 1',
      'argon2id: 1',
    ])
    expect(await axe(page, { within: '.mantine-Modal-content' })).toEqual([])
    await screenshot(page, 'import-preview', true)
    expect((await signIn('ada@example.com', 'bcrypt pw')).status).toBe(401)

    // Import: the progress bar while it runs, then the summary.
    const run = page.getByTestId('import-run')
    expect(await run.textContent()).toBe('Import 12002 users')
    const progress = page.getByRole('progressbar', { name: 'Import progress' }).waitFor({ timeout: 30_000 })
    await run.click()
    await progress
    await page.getByTestId('import-done').waitFor({ timeout: 60_000 })
    expect(await page.getByTestId('import-done').textContent()).toContain('Imported 12002 users from people.json.')
    expect(await axe(page, { within: '.mantine-Modal-content' })).toEqual([])
    await page.getByTestId('import-close').click()
    await page.getByRole('dialog', { name: 'Import users' }).waitFor({ state: 'hidden' })
    // The list shows them.
    await page.getByText('bulk11999@example.com').or(page.getByText('ada@example.com')).first().waitFor()

    expect((await signIn('ada@example.com', 'bcrypt pw')).status).toBe(200)
    expect((await signIn('linus@example.com', 'argon pw')).status).toBe(200)
    const events = await audited()
    expect(events.map((e) => e.detail)).toEqual([
      { via: 'panel', actor: 'recovery-link', source: 'users-file', format: 'json', users: 12002, accounts: 2, skipped: 0, errors: 0 },
    ])

    // The same file again: nothing new, every row reported as already here.
    await openImport()
    await page.locator('input[type=file]').setInputFiles({ name: 'people.json', mimeType: 'application/json', buffer: json })
    await page.getByTestId('import-check').click()
    await page.getByTestId('import-nothing').waitFor({ timeout: 30_000 })
    expect(await page.getByTestId('import-counts').locator('tr').allTextContents()).toEqual([
      'Users0',
      'Passwords (accounts)0',
      'Already here (skipped)12002',
    ])
    expect(await page.getByTestId('import-run').isDisabled()).toBe(true)
  })

  it('imports a better-auth database by path: the old password signs in and the old session is kept', { timeout: 60_000 }, async () => {
    const file = join(dir, 'app.db')
    const sqlite = new Database(file)
    const options = {
      database: sqlite,
      baseURL: 'http://127.0.0.1:3000',
      secret: SECRET,
      emailAndPassword: { enabled: true },
      telemetry: { enabled: false },
      logger: { disabled: true },
    }
    await (await getMigrations(options)).runMigrations()
    const auth = betterAuth(options)
    const res = await auth.api.signUpEmail({
      body: { email: 'margaret@example.com', password: 'apollo guidance', name: 'Margaret' },
      asResponse: true,
    })
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string
    const { user } = (await res.json()) as { user: { id: string } }
    sqlite.close()

    await openImport()
    await page
      .getByRole('dialog')
      .locator('label')
      .filter({ hasText: /^better-auth database$/ })
      .click()
    await page.getByTestId('import-from').waitFor()
    await page.getByTestId('import-from').fill(join(dir, 'missing.db'))
    await page.getByTestId('import-check').click()
    await page.getByTestId('import-failure').waitFor()
    expect(await page.getByTestId('import-failure').textContent()).toContain(`no such better-auth database: ${join(dir, 'missing.db')}`)
    expect(await axe(page, { within: '.mantine-Modal-content' })).toEqual([])

    await page.getByTestId('import-from').fill(file)
    await page.getByTestId('import-check').click()
    await page.getByTestId('import-preview').waitFor()
    expect(await page.getByTestId('import-counts').locator('tr').allTextContents()).toEqual([
      'Users1',
      'Passwords (accounts)1',
      'Sessions1',
      'Organizations0',
      'Already here (skipped)0',
    ])
    const kept = () => new HttpClient(h.server.base).get<{ user: { id: string } } | null>('/get-session', { cookie })
    expect((await kept()).body).toBeNull()
    await page.getByTestId('import-run').click()
    await page.getByTestId('import-done').waitFor()
    expect(await page.getByTestId('import-done').textContent()).toContain(`Imported 1 users from ${file}.`)

    const session = await kept()
    expect([session.status, session.body?.user.id]).toEqual([200, user.id])
    const signedIn = await signIn('margaret@example.com', 'apollo guidance')
    expect([signedIn.status, signedIn.body.user.id]).toEqual([200, user.id])
    expect((await audited()).map((e) => (e.detail as { source: string }).source)).toEqual(['better-auth', 'users-file'])
  })
})
