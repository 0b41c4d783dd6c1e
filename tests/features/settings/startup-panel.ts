import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { vi } from 'vitest'
import { launchBrowser } from '../../helpers/browser.js'
import { callFromPage } from '../../helpers/panel-session.js'
import { type RunningServer, startServerProcess } from '../../helpers/process.js'

/**
 * What the start-up values' panel suites share: the real `gatehouse serve` process started with
 * values of its own (flags, a config file, environment variables), its printed panel link opened in
 * Chromium (the production renderer, built by the panel project's global setup), and what a test
 * asks of the signed-in page.
 */
export interface StartupPanel {
  server: RunningServer
  browser: Browser
  context: BrowserContext
  /** Signed in through the panel link, at 1360×900, en-GB, UTC, light. */
  page: Page
  /** A panel operation from the signed-in page (its cookie), as the renderer calls it: status and body. */
  op(name: string, input?: unknown): Promise<{ status: number; body: Record<string, unknown> }>
  /** The ids in an element's aria-describedby, read out as the text they name. */
  describedText(testId: string): Promise<string>
  /** Opens a view (a fresh load) and waits for its heading. */
  open(view: string, heading: string): Promise<void>
  close(): Promise<void>
}

/**
 * `setUp` is handed a temporary directory (removed by `close`) and says the flags beyond the two
 * ports (0: any free one) and the environment.
 */
export async function startStartupPanel(
  prefix: string,
  setUp: (dir: string) => { args: string[]; env?: Record<string, string> },
): Promise<StartupPanel> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const { args, env = {} } = setUp(dir)
  const browser = await launchBrowser()
  const server = await startServerProcess(['--port', '0', '--panel-port', '0', ...args], env, 90_000).catch(async (e: unknown) => {
    await browser.close()
    rmSync(dir, { recursive: true, force: true })
    throw e
  })
  // Printed once the panel's listener is up, a moment after the API's.
  const link = await vi.waitFor(
    () => {
      const found = /Panel recovery link: (\S+)/.exec(server.output())?.[1]
      if (!found) throw new Error(`no panel link yet:\n${server.output()}`)
      return found
    },
    { timeout: 60_000, interval: 100 },
  )
  const panelOrigin = new URL(link).origin
  const context = await browser.newContext({
    viewport: { width: 1360, height: 900 },
    timezoneId: 'UTC',
    locale: 'en-GB',
    colorScheme: 'light',
  })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(link)
  await page.getByRole('heading', { level: 2, name: 'Overview' }).waitFor({ timeout: 30_000 })
  return {
    server,
    browser,
    context,
    page,
    op: (name, input = {}) => callFromPage(page, name, input),
    async describedText(testId) {
      const ids = (await page.getByTestId(testId).getAttribute('aria-describedby')) ?? ''
      return page.evaluate(
        (list) =>
          list
            .split(/\s+/)
            .map((id) => document.getElementById(id)?.textContent ?? '')
            .join(' '),
        ids,
      )
    },
    async open(view, heading) {
      await page.goto(`${panelOrigin}/?at=${Date.now()}#/${view}`)
      await page.getByRole('heading', { level: 2, name: heading }).waitFor({ timeout: 15_000 })
    },
    async close() {
      await context.close()
      await browser.close()
      if (server.child.exitCode === null) {
        server.child.kill('SIGTERM')
        await server.exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
