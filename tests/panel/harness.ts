import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Page } from 'playwright-core'
import { type BrowserPanel, startBrowserPanel } from '../../server/panel/index.js'
import { launchBrowser } from '../helpers/browser.js'
import { silentLogger, startTestServer, type TestServer, type TestServerOptions } from '../helpers/server.js'

const root = resolve(import.meta.dirname, '../..')
export const SCREENSHOTS = join(root, 'test-results', 'panel')
export const DOCS_SCREENSHOTS = join(root, 'docs', 'screenshots')

/** Builds the renderer exactly as `npm run build` does, into a temporary folder. */
export async function buildRenderer(): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-renderer-'))
  const { build } = await import('vite')
  await build({
    configFile: join(root, 'vite.renderer.config.ts'),
    logLevel: 'silent',
    build: { outDir, emptyOutDir: true },
  })
  return outDir
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
