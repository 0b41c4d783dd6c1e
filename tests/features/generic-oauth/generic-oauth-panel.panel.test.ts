import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axe } from '../../helpers/axe.js'
import { FakeOidc } from '../../helpers/fake-oidc.js'
import { type PanelHarness, panelPageForFile, screenshot, viewOpener } from '../../panel/harness.js'

/**
 * The Providers view's generic OAuth section in real Chromium against the real server: add an
 * OpenID provider by its discovery URL, test it (the provider is a fake on loopback with a real
 * key), and remove it (issue 27).
 */
let h: PanelHarness
let page: Page
const session = panelPageForFile()
const op = new FakeOidc('panel-generic', 'panel-generic-secret')
beforeAll(async () => {
  ;({ h, page } = session)
  await op.start()
  op.now = () => h.server.clock.now()
  op.user = { sub: 'panel-sub-1', email: 'tester@corp.example', email_verified: true, name: 'Panel Tester' }
})
afterAll(() => op.close())
const open = viewOpener(session)
async function dispatch(name: string, input: unknown = {}) {
  const result = await h.panel.service.dispatch(name, input)
  if (!result.ok) throw new Error(`${name}: ${result.error.code} ${result.error.message}`)
  return result.data as never
}

describe('Providers view: generic OAuth providers', () => {
  it('adds an OpenID provider by discovery, tests its sign-in and removes it', { timeout: 90_000 }, async () => {
    await open('providers', 'Providers')
    const section = page.getByTestId('generic-providers')
    await section.getByText('None yet.').waitFor()
    await section.getByRole('button', { name: 'Add provider' }).click()
    const drawer = page.getByRole('dialog', { name: 'Add an OpenID Connect or OAuth 2.0 provider' })
    await drawer.waitFor()
    expect(await axe(page)).toEqual([])

    // A built-in provider's id is refused beside the field.
    await drawer.getByLabel(/^Provider id/).fill('github')
    await drawer.getByLabel(/^Client id/).fill('panel-generic')
    await drawer.getByLabel(/^Discovery URL/).fill(op.discoveryUrl)
    await drawer.getByRole('button', { name: 'Add provider' }).click()
    await drawer.getByText('a built-in provider').waitFor()

    await drawer.getByLabel(/^Provider id/).fill('corp')
    await drawer.getByLabel(/^Button name/).fill('Corp SSO')
    await drawer.getByLabel(/^Client secret/).fill('panel-generic-secret')
    await drawer.getByRole('button', { name: 'Add provider' }).click()
    await page.getByText('Corp SSO saved').waitFor()
    const saved = page.getByRole('dialog', { name: 'Corp SSO sign-in' })
    await saved.waitFor()
    expect(await saved.getByTestId('generic-redirect-uri').textContent()).toBe(`${h.server.base}/callback/corp`)

    // Stored with the secret sealed, and offered to sign-in at once.
    const stored = h.server.gatehouse.config.storedLayer() as { genericOAuth: { config: Array<Record<string, unknown>> } }
    expect(stored.genericOAuth.config).toEqual([
      {
        providerId: 'corp',
        name: 'Corp SSO',
        discoveryUrl: op.discoveryUrl,
        clientId: 'panel-generic',
        clientSecret: expect.stringMatching(/^enc:v1:/),
        scopes: ['email', 'profile'],
        pkce: true,
      },
    ])
    const listed = await dispatch('genericOAuth.list')
    expect(listed).toMatchObject([{ providerId: 'corp', name: 'Corp SSO', hasClientSecret: true, pkce: true }])

    // Test sign-in: the provider's page opens, calls back, and the drawer reports who it said.
    const popup = page.waitForEvent('popup')
    await saved.getByTestId('test-sign-in-start').click()
    const window1 = await popup
    const result = saved.getByTestId('test-sign-in-result')
    await result.getByText('Test sign-in worked').waitFor({ timeout: 10_000 })
    if (!window1.isClosed()) await window1.close()
    await result.getByText('Panel Tester <tester@corp.example>').waitFor()
    await screenshot(page, 'generic-provider-drawer')

    // A provider whose ID token does not verify: the failure's code is shown.
    op.tamper = { key: op.strangerKey }
    const again = page.waitForEvent('popup')
    await saved.getByTestId('test-sign-in-start').click()
    const window2 = await again
    await result.getByText('Test sign-in failed').waitFor({ timeout: 10_000 })
    if (!window2.isClosed()) await window2.close()
    await result.getByText('unable_to_get_user_info').waitFor()
    op.tamper = {}

    // The operations' refusals name the field (a bad URL) or the provider (an unknown one).
    const form = {
      providerId: 'corp',
      name: 'Corp SSO',
      authorizationUrl: '',
      tokenUrl: '',
      userInfoUrl: '',
      clientId: 'c',
      scopes: [],
      pkce: true,
    }
    const bad = await h.panel.service.dispatch('genericOAuth.save', { ...form, discoveryUrl: 'not a url' })
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_CONFIG', issues: [{ path: 'discoveryUrl' }] } })
    const none = await h.panel.service.dispatch('genericOAuth.save', { ...form, discoveryUrl: '' })
    expect(none).toMatchObject({
      ok: false,
      error: {
        code: 'INVALID_CONFIG',
        issues: [{ path: 'discoveryUrl', message: 'needs discoveryUrl, or authorizationUrl and tokenUrl' }],
      },
    })
    expect(await h.panel.service.dispatch('genericOAuth.remove', { providerId: 'nobody' })).toMatchObject({
      ok: false,
      error: { code: 'PROVIDER_NOT_FOUND', status: 404 },
    })
    // Still the saved provider, secret kept.
    expect(await dispatch('genericOAuth.list')).toMatchObject([
      { providerId: 'corp', discoveryUrl: op.discoveryUrl, hasClientSecret: true },
    ])

    // Remove it: gone from the view, the config and sign-in.
    await saved.getByRole('button', { name: 'Remove' }).click()
    await page.getByText('Corp SSO removed').waitFor()
    await page.getByTestId('generic-providers').getByText('None yet.').waitFor()
    expect(await dispatch('genericOAuth.list')).toEqual([])
    const res = await fetch(`${h.server.base}/sign-in/social`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: h.server.origin },
      body: JSON.stringify({ provider: 'corp' }),
    })
    expect(res.status).toBe(404)
  })
  it('the drawer checks the form before Save; an unreachable discovery URL is said to be unreachable, on save and on test sign-in', {
    timeout: 60_000,
  }, async () => {
    // A loopback port nobody listens on.
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo
        probe.close(() => done(port))
      })
    })
    const unreachable = `http://127.0.0.1:${port}/.well-known/openid-configuration`
    await open('providers', 'Providers')
    await page.getByTestId('generic-providers').getByRole('button', { name: 'Add provider' }).click()
    const drawer = page.getByRole('dialog', { name: 'Add an OpenID Connect or OAuth 2.0 provider' })
    await drawer.waitFor()
    const add = drawer.getByRole('button', { name: 'Add provider' })

    // Nothing filled in: the form says what is missing, beside each field, before anything is sent.
    await add.click()
    await drawer.getByText('needs discoveryUrl, or authorizationUrl and tokenUrl').waitFor()
    expect(await drawer.getByText('required', { exact: true }).count()).toBe(2)
    await drawer.getByLabel(/^Provider id/).fill('down')
    await drawer.getByLabel(/^Client id/).fill('down-client')
    await drawer.getByLabel(/^Discovery URL/).fill('ftp://idp.example.com/.well-known/openid-configuration')
    await add.click()
    await drawer.getByText('must start with https:// or http://').waitFor()
    expect(await dispatch('genericOAuth.list')).toEqual([])

    // A well-formed URL nobody answers: unreachable, said beside the field, and not saved.
    await drawer.getByLabel(/^Discovery URL/).fill(unreachable)
    await add.click()
    await drawer.getByText(/^unreachable \(ECONNREFUSED\)$/).waitFor({ timeout: 15_000 })
    // The refusal's toast never covers the drawer's Save button (nor its close button), wide or narrow.
    for (const size of [
      { width: 1360, height: 900 },
      { width: 1024, height: 700 },
    ]) {
      await page.setViewportSize(size)
      await add.click()
      const toast = page.locator('.mantine-Notification-root').filter({ hasText: 'Provider not saved' }).last()
      await toast.waitFor()
      const [a, b, c] = [
        await toast.boundingBox(),
        await add.boundingBox(),
        await drawer.getByRole('button', { name: 'Close' }).boundingBox(),
      ]
      const overlaps = (x: typeof a, y: typeof a) =>
        Boolean(x && y && x.x < y.x + y.width && y.x < x.x + x.width && x.y < y.y + y.height && y.y < x.y + x.height)
      expect({ size, save: overlaps(a, b), close: overlaps(a, c) }).toEqual({ size, save: false, close: false })
    }
    await page.setViewportSize({ width: 1360, height: 900 })
    expect(await dispatch('genericOAuth.list')).toEqual([])
    expect(await axe(page)).toEqual([])
    await page.keyboard.press('Escape')
    const form = {
      providerId: 'down',
      name: '',
      authorizationUrl: '',
      tokenUrl: '',
      userInfoUrl: '',
      clientId: 'c',
      scopes: [],
      pkce: true,
    }
    expect(await h.panel.service.dispatch('genericOAuth.save', { ...form, discoveryUrl: unreachable })).toMatchObject({
      ok: false,
      error: { code: 'DISCOVERY_UNREACHABLE', status: 502, issues: [{ path: 'discoveryUrl', message: 'unreachable (ECONNREFUSED)' }] },
    })

    // A provider saved while its identity provider answered, tried once it is gone: unreachable, not "not found".
    h.server.gatehouse.config.update({ genericOAuth: { config: [{ providerId: 'gone', clientId: 'c', discoveryUrl: unreachable }] } })
    expect(await h.panel.service.dispatch('providers.testSignIn', { id: 'gone' })).toMatchObject({
      ok: false,
      error: { code: 'DISCOVERY_UNREACHABLE', status: 502 },
    })
    expect(await h.panel.service.dispatch('providers.testSignIn', { id: 'nobody' })).toMatchObject({
      ok: false,
      error: { code: 'PROVIDER_NOT_FOUND' },
    })
    h.server.gatehouse.config.update({ genericOAuth: { config: [] } })
  })
})
