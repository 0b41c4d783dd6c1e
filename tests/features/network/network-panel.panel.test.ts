import { packageVersion } from '../../../server/version.js'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { registerNetworkRuntime } from '../../../server/features/network/index.js'
import { system } from '../../../server/features/network/system.js'
import { signUp } from '../../helpers/http.js'
import { buildRenderer, launchChromium, type PanelHarness, screenshot, startPanelHarness } from '../../panel/harness.js'

/**
 * The Network section and the copy actions in Chromium, against the real server and its panel
 * listener. The machine's interfaces are described through the feature's `system` seam: listeners
 * are only ever bound on loopback (127.0.0.1), never on a LAN address.
 */

let assets: string
let browser: Browser
let h: PanelHarness
let context: BrowserContext
let page: Page
const realSystem = { ...system }
const servers: Server[] = []

beforeAll(async () => {
  ;[assets, browser] = await Promise.all([buildRenderer(), launchChromium()])
  h = await startPanelHarness(assets)
  context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' })
  // The copy buttons write the clipboard; the test reads it back.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.panel.origin })
  page = await context.newPage()
  page.setDefaultTimeout(15_000)
  await page.goto(h.panel.loginURL)
}, 120_000)

afterEach(async () => {
  Object.assign(system, realSystem)
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r))
})

afterAll(async () => {
  await context?.close()
  await browser?.close()
  await h?.close()
})

/** A machine with one LAN interface. Its "LAN" address is 127.0.0.1 so choosing it binds loopback only. */
function describeMachine() {
  system.hostname = () => 'gatehouse-box'
  system.interfaces = () => ({
    lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
    'lan-test': [
      { address: '127.0.0.1', netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '127.0.0.1/24' },
    ],
  })
}

const loopbackPort = (keep: boolean) =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      if (keep) {
        servers.push(server)
        resolve(port)
      } else server.close(() => resolve(port))
    })
  })

let loads = 0
async function open(view: string, heading: string): Promise<void> {
  await page.goto(`${h.panel.origin}/?load=${++loads}#/${view}`)
  await page.getByRole('heading', { level: 2, name: heading }).waitFor({ timeout: 25_000 })
}

const clipboard = () => page.evaluate(() => navigator.clipboard.readText())
const apiURL = () => h.server.gatehouse.ctx.baseURL
const stored = () => JSON.parse(readFileSync(join(h.server.dataDir, 'network.json'), 'utf8'))

describe('copy actions write the clipboard', () => {
  it('"Copy API URL" in the header copies the API URL, then says Copied', { timeout: 45_000 }, async () => {
    await open('overview', 'Overview')
    await page.getByRole('button', { name: 'Copy API URL' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    expect(await clipboard()).toBe(apiURL())
  })

  it('the redirect URI of a provider is copied as shown', { timeout: 45_000 }, async () => {
    await open('providers', 'Providers')
    await page.getByTestId('provider-github').getByRole('button', { name: 'Copy redirect URI' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    expect(await clipboard()).toBe(`${apiURL()}/callback/github`)
  })

  it('the impersonation link is copied before the panel says so', { timeout: 45_000 }, async () => {
    const target = await signUp(h.server.base)
    await page.evaluate(() => navigator.clipboard.writeText('before'))
    await open('users', 'Users')
    await page.getByTestId('user-search').fill(target.email)
    await page.getByTestId(`user-row-${target.email}`).click()
    await page.getByRole('button', { name: 'Impersonation link' }).click()
    await page.getByText('Impersonation link copied').waitFor()
    const link = await clipboard()
    expect(link).not.toBe('before')
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//)
  })
})

describe('Network section', () => {
  it('shows where the API listens and proposes base URLs from the LAN address and the host name', { timeout: 45_000 }, async () => {
    describeMachine()
    const { port } = h.server.gatehouse.listening()!
    await open('network', 'Network')
    expect(await page.getByTestId('network-current').textContent()).toBe(`127.0.0.1:${port}`)
    expect(await page.getByTestId('network-api-url').textContent()).toBe(apiURL())
    await page.getByText('http://127.0.0.1:4280', { exact: true }).waitFor()
    await page.getByText('http://gatehouse-box.local:4280', { exact: true }).waitFor()
    expect(await page.getByTestId('network-override').count()).toBe(0)
    await screenshot(page, 'network', true)
  })

  it('applies a new port by restarting the listener only; the API answers there and the setting is saved', {
    timeout: 45_000,
  }, async () => {
    const before = h.server.gatehouse.listening()!.port
    const next = await loopbackPort(false)
    await open('network', 'Network')
    await page.getByTestId('network-port').fill(String(next))
    await page.getByTestId('network-apply').click()
    await page.getByText('Listener restarted').waitFor()
    expect(h.server.gatehouse.listening()).toEqual({ host: '127.0.0.1', port: next })
    expect(await (await fetch(`http://127.0.0.1:${next}/api/auth/ok`)).json()).toEqual({ ok: true, version: packageVersion() })
    await expect(fetch(`http://127.0.0.1:${before}/api/auth/ok`)).rejects.toThrow()
    expect(stored()).toEqual({ listen: 'loopback', interface: null, port: next, baseURL: null })
    // The panel kept working (its own listener) and shows the new address.
    await open('network', 'Network')
    expect(await page.getByTestId('network-current').textContent()).toBe(`127.0.0.1:${next}`)
  })

  it('a taken port leaves the listener as it was and offers the next free one', { timeout: 45_000 }, async () => {
    const before = h.server.gatehouse.listening()!
    const taken = await loopbackPort(true)
    await open('network', 'Network')
    await page.getByTestId('network-port').fill(String(taken))
    await page.getByTestId('network-apply').click()
    const alert = page.getByTestId('network-port-taken')
    await alert.getByText(`Port ${taken} is already in use on 127.0.0.1. The listener was not changed.`).waitFor()
    expect(h.server.gatehouse.listening()).toEqual(before)
    expect((await fetch(`http://127.0.0.1:${before.port}/api/auth/ok`)).status).toBe(200)
    await screenshot(page, 'network-port-taken')

    const offer = page.getByTestId('network-use-free-port')
    const suggested = Number((await offer.textContent())!.replace('Use port ', ''))
    expect(suggested).toBeGreaterThan(taken)
    await offer.click()
    await page.getByText('Listener restarted').waitFor()
    expect(h.server.gatehouse.listening()).toEqual({ host: '127.0.0.1', port: suggested })
    expect(stored().port).toBe(suggested)
  })

  it('checks a base URL from the machine itself: this Gatehouse, or no answer', { timeout: 45_000 }, async () => {
    const { port } = h.server.gatehouse.listening()!
    const closed = await loopbackPort(false)
    await open('network', 'Network')
    await page.getByTestId('network-base-url').fill(`http://127.0.0.1:${port}`)
    await page.getByTestId('network-check').click()
    await page.getByTestId('network-check-result').getByText('Gatehouse answered at this address').waitFor()

    await page.getByTestId('network-base-url').fill(`http://127.0.0.1:${closed}`)
    await page.getByTestId('network-check').click()
    await page
      .getByTestId('network-check-result')
      .getByText(/No answer from this machine \(ECONNREFUSED\)/)
      .waitFor()
  })

  it('listens on a chosen LAN interface and applies a base URL picked from the proposals', { timeout: 45_000 }, async () => {
    describeMachine()
    const { port } = h.server.gatehouse.listening()!
    await open('network', 'Network')
    await page.getByTestId('listen-lan').check()
    await page.getByTestId('network-interface').click()
    await page.getByRole('option', { name: 'lan-test (127.0.0.1)' }).click()
    await page.getByText(`http://127.0.0.1:${port}`, { exact: true }).waitFor()
    await page.getByTestId('network-use-proposal').first().click()
    expect(await page.getByTestId('network-base-url').inputValue()).toBe(`http://127.0.0.1:${port}`)
    await page.getByTestId('network-apply').click()
    await page.getByText('Listener restarted').waitFor()
    expect(stored()).toEqual({ listen: 'lan', interface: 'lan-test', port, baseURL: `http://127.0.0.1:${port}` })
    expect(h.server.gatehouse.listening()).toEqual({ host: '127.0.0.1', port })
    expect(apiURL()).toBe(`http://127.0.0.1:${port}/api/auth`)
  })

  it('values given at start-up (flags, GATEHOUSE_* variables) are marked, read-only, focusable and say why', {
    timeout: 45_000,
  }, async () => {
    const { port } = h.server.gatehouse.listening()!
    registerNetworkRuntime(h.server.gatehouse, {
      dataDir: h.server.dataDir,
      overrides: { port: { value: port, source: '--port' }, host: { value: '127.0.0.1', source: 'GATEHOUSE_HOST' } },
    })
    try {
      await open('network', 'Network')
      await page.getByText('Set at start-up by --port').waitFor()
      await page.getByText('Set at start-up by GATEHOUSE_HOST').waitFor()
      const portField = page.getByTestId('network-port')
      expect(await portField.isEditable()).toBe(false)
      expect(await portField.isDisabled()).toBe(false)
      expect(await portField.inputValue()).toBe(String(port))
      // Focusable, and described by the reason (the field's description).
      await portField.focus()
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('network-port')
      const describedBy = (await portField.getAttribute('aria-describedby')) ?? ''
      const reason = await page.evaluate(
        (ids) =>
          ids
            .split(' ')
            .map((id) => document.getElementById(id)?.textContent ?? '')
            .join(' '),
        describedBy,
      )
      expect(reason).toContain('--port sets it at start-up')
      await page.keyboard.type('1')
      await page.keyboard.press('ArrowUp')
      expect(await portField.inputValue()).toBe(String(port))
      const lan = await page.getByTestId('listen-lan').isChecked()
      await page.getByTestId(lan ? 'listen-loopback' : 'listen-lan').click({ force: true })
      expect(await page.getByTestId('listen-lan').isChecked()).toBe(lan)
      await screenshot(page, 'network-overrides')
    } finally {
      registerNetworkRuntime(h.server.gatehouse, { dataDir: h.server.dataDir, overrides: {} })
    }
  })
})
