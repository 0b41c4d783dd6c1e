import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../../helpers/http.js'
import { type PanelHarness, screenshot, panelPageForFile, viewOpener } from '../../panel/harness.js'

/** The API-key and signing-key views in real Chromium against the real server. */

let h: PanelHarness
let page: Page

const session = panelPageForFile()
beforeAll(() => {
  ;({ h, page } = session)
})

const open = viewOpener(session)

describe('API keys view', () => {
  it('switches the feature on, creates a key shown once with a copy button, disables and deletes it', { timeout: 30_000 }, async () => {
    const owner = await signUp(h.server.base)
    const anonymous = new HttpClient(h.server.base, { origin: null })
    await open('api-keys', 'API keys')
    await page.getByTestId('apikey-enabled').click()
    await expect.poll(async () => (await anonymous.post('/api-key/verify', { key: 'x' })).status).toBe(200)

    // The owner is found by searching (here by email), not typed as a raw id.
    await page.getByTestId('apikey-owner').fill(owner.email)
    await page.getByRole('option', { name: `Test User <${owner.email}>` }).click()
    await page.getByTestId('apikey-name').fill('deploy bot')
    await page.getByTestId('apikey-create').click()
    const secret = (await page.getByTestId('apikey-secret').textContent())?.trim() ?? ''
    expect(secret).toMatch(/^[A-Za-z]{64}$/)
    await expect.poll(() => page.getByTestId('apikey-copy').isVisible()).toBe(true)
    const verified = await anonymous.post<{ valid: boolean; key: { id: string; name: string } }>('/api-key/verify', { key: secret })
    expect(verified.body.valid).toBe(true)
    expect(verified.body.key.name).toBe('deploy bot')
    const id = verified.body.key.id
    await page.getByRole('button', { name: 'Done' }).click()
    await expect.poll(() => page.getByTestId('apikey-secret').count()).toBe(0)

    // Search by the owner's email finds it; the secret is nowhere on the page any more.
    await page.getByTestId('apikey-search').fill(owner.email)
    const row = page.getByTestId(`apikey-row-${id}`)
    await row.waitFor()
    expect(await row.textContent()).toContain(owner.email)
    expect(await page.content()).not.toContain(secret)
    await screenshot(page, 'api-keys')

    await page.getByTestId(`apikey-toggle-${id}`).click()
    await expect
      .poll(async () => (await anonymous.post<{ error: { code: string } | null }>('/api-key/verify', { key: secret })).body.error?.code)
      .toBe('KEY_DISABLED')
    await page.getByTestId(`apikey-delete-${id}`).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
    await expect.poll(() => row.count()).toBe(0)
    const gone = await anonymous.post<{ error: { code: string } | null }>('/api-key/verify', { key: secret })
    expect(gone.body.error?.code).toBe('INVALID_API_KEY')
  })
})

describe('Signing keys view', () => {
  it('switches JWT on and rotates the signing key', { timeout: 30_000 }, async () => {
    const anonymous = new HttpClient(h.server.base, { origin: null })
    await open('signing-keys', 'Signing keys')
    await page.getByTestId('jwt-enabled').click()
    await expect.poll(async () => (await anonymous.get('/jwks')).status).toBe(200)
    const first = (await anonymous.get<{ keys: Array<{ kid: string }> }>('/jwks')).body.keys[0]?.kid as string
    await open('signing-keys', 'Signing keys')
    await page.getByTestId('jwt-keys').getByText(first).waitFor()
    await page.getByTestId('jwt-rotate').click()
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click()
    await expect.poll(async () => (await anonymous.get<{ keys: unknown[] }>('/jwks')).body.keys.length).toBe(2)
    const table = page.getByTestId('jwt-keys')
    await table.getByText('retired').waitFor()
    await table.getByText('signing').waitFor()
    await screenshot(page, 'signing-keys')
  })
})
