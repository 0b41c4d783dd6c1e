import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, inject } from 'vitest'
import { type BrowserPanel, startBrowserPanel } from '../../server/panel/index.js'
import { launchBrowser } from '../helpers/browser.js'
import { silentLogger, startTestServer, type TestServer, type TestServerOptions } from '../helpers/server.js'

const root = resolve(import.meta.dirname, '../..')
export const SCREENSHOTS = join(root, 'test-results', 'panel')
export const DOCS_SCREENSHOTS = join(root, 'docs', 'screenshots')

/**
 * The production renderer: out/renderer, built once for the whole run by `electron-vite build`
 * (tests/setup/renderer-build.ts, the `panel` project's global setup), the folder `gatehouse
 * serve` serves. Shared by every panel test file: nothing may write to or remove it.
 */
export async function buildRenderer(): Promise<string> {
  return inject('rendererDir')
}

/** Chromium for the panel tests: the shared launcher (system Chromium, else the one npm installed). */
export const launchChromium = launchBrowser

export interface PanelHarness {
  server: TestServer
  panel: BrowserPanel
  close(): Promise<void>
}

export async function startPanelHarness(assetsDir: string, options: TestServerOptions = {}): Promise<PanelHarness> {
  const server = await startTestServer(options)
  const panel = await startBrowserPanel(server.gatehouse, { port: 0, assetsDir, buildOnDemand: false, logger: silentLogger })
  return {
    server,
    panel,
    async close() {
      await panel.close()
      await server.close()
    },
  }
}

export async function screenshot(page: Page, name: string, docs = false): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
  if (docs && process.env.GATEHOUSE_UPDATE_DOCS_SCREENSHOTS === '1') {
    mkdirSync(DOCS_SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: join(DOCS_SCREENSHOTS, `${name}.png`) })
  }
}

export interface PanelPage {
  browser: Browser
  context: BrowserContext
  page: Page
  h: PanelHarness
}

/**
 * The set-up most panel tests share, registered as the file's first beforeAll/afterAll: the
 * renderer built, Chromium launched, the real server and panel listener started, one light-mode
 * page signed in through the printed URL (steps fail at 7 s, well inside a test's limit, with the
 * locator named). `session` is filled before the file's own beforeAll hooks run.
 */
export function panelPageForFile(timeout = 180_000): PanelPage {
  const session = {} as PanelPage
  beforeAll(async () => {
    const [assets, browser] = await Promise.all([buildRenderer(), launchChromium()])
    session.browser = browser
    session.h = await startPanelHarness(assets)
    session.context = await session.browser.newContext({
      viewport: { width: 1360, height: 900 },
      timezoneId: 'UTC',
      locale: 'en-GB',
      colorScheme: 'light',
    })
    session.page = await session.context.newPage()
    session.page.setDefaultTimeout(20_000)
    await session.page.goto(session.h.panel.loginURL)
  }, timeout)
  afterAll(async () => {
    await session.context?.close()
    await session.browser?.close()
    await session.h?.close()
  })
  return session
}

/** Opens a view by its hash and waits for its heading (a fresh load each time: no state carried over). */
export function viewOpener(session: PanelPage): (view: string, heading: string) => Promise<void> {
  let loads = 0
  return async (view, heading) => {
    await session.page.goto(`${session.h.panel.origin}/?load=${++loads}#/${view}`)
    await session.page.getByRole('heading', { level: 2, name: heading }).waitFor({ timeout: 20_000 })
  }
}
