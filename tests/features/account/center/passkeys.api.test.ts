import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listPasskeys } from '../../../../server/features/passkey/store.js'
import { type AccountHarness, accessibleEverywhere, open, person, startAccountHarness } from './harness.js'

/** A browser flow checked at two widths in two schemes takes its time on a loaded machine. */
const SLOW = { timeout: 180_000 }

/**
 * The account center's Passkeys page (/ui/account/passkeys, issue 49 §5) in real Chromium with its
 * virtual authenticator (CDP WebAuthn.addVirtualAuthenticator) against the real server (SQLite,
 * and PostgreSQL in the `postgres` project): add one named, sign in with it, rename it, remove it.
 * WebAuthn needs a domain for its relying party: the pages are opened at http://localhost:<port>.
 */

let h: AccountHarness
let local = ''

beforeAll(async () => {
  h = await startAccountHarness()
  local = `http://localhost:${new URL(h.server.origin).port}`
  h.server.gatehouse.config.update({ trustedOrigins: [local], passkey: { enabled: true, rpID: 'localhost', origin: local } })
}, 120_000)

afterAll(async () => {
  await h?.close()
  expect(h?.pageErrors ?? []).toEqual([])
})

async function virtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
}

describe('account passkeys page', () => {
  it('adds a named passkey that signs in, renames it and removes it', SLOW, async () => {
    const ada = await person(h)
    const { context, page } = await open(h, ada, { origin: local })
    await virtualAuthenticator(page)
    await page.goto(`${local}/api/auth/ui/account/passkeys`)
    await page.getByRole('heading', { level: 1, name: 'Passkeys' }).waitFor()
    await page.getByTestId('no-passkeys').waitFor()
    await accessibleEverywhere(page)

    await page.getByLabel(/^Name/).fill('Work laptop')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    expect(await page.getByRole('status').textContent()).toBe('Work laptop was added.')
    await page.getByRole('button', { name: 'Rename Work laptop' }).waitFor()
    const stored = await listPasskeys(h.server.gatehouse.ctx, ada.user.id)
    expect(stored.map((p) => p.name)).toEqual(['Work laptop'])
    await accessibleEverywhere(page)

    // The overview counts it.
    await page.goto(`${local}/api/auth/ui/account`)
    expect(await page.getByTestId('protection-passkeys').textContent()).toBe('Passkeys: 1')

    // It signs in, in a browser with no session (the same authenticator).
    await context.clearCookies()
    await page.goto(`${local}/api/auth/ui/sign-in?returnTo=${encodeURIComponent(`${local}/api/auth/ui/account/passkeys`)}`)
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await page.waitForURL(`${local}/api/auth/ui/account/passkeys`)

    // Rename, keyboard only: the button, the field (focused), Enter.
    await page.getByRole('button', { name: 'Rename Work laptop' }).focus()
    await page.keyboard.press('Enter')
    const field = page.getByRole('form', { name: 'Rename Work laptop' }).getByLabel(/^Name/)
    await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'name')
    await field.fill('')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true')
    await page.keyboard.type('Old laptop')
    await page.keyboard.press('Enter')
    expect(await page.getByRole('status').textContent()).toBe('Renamed to Old laptop.')
    await page.getByRole('button', { name: 'Remove Old laptop' }).waitFor()
    expect((await listPasskeys(h.server.gatehouse.ctx, ada.user.id)).map((p) => p.name)).toEqual(['Old laptop'])

    await page.getByRole('button', { name: 'Remove Old laptop' }).click()
    await page.getByTestId('no-passkeys').waitFor()
    expect(await page.getByRole('status').textContent()).toBe('Old laptop was removed.')
    expect(await listPasskeys(h.server.gatehouse.ctx, ada.user.id)).toEqual([])
    await context.close()
  })
})
