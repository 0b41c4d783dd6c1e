import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { PanelCaller } from '../../server/core/panel-caller.js'
import { findUserById } from '../../server/core/user-store.js'
import { setRole, systemActor } from '../../server/features/admin/index.js'
import { apiURLOf, type BrowserPanel } from '../../server/panel/index.js'
import { PANEL_META } from '../../server/panel-frame/op.js'
import { createPanelService, type PanelService } from '../../server/panel/service.js'
import { newPage, PANEL_WINDOW } from './browser.js'
import { signUp } from './http.js'
import { silentLogger, type TestServer } from './server.js'

/**
 * What the panel suites that sign real admins in share: an operation run as the server's operator
 * (set-up), an operation called from a signed-in page with its cookies (what a view does, so the
 * server's refusals are seen), and a page signed in through the panel's own sign-in form.
 */

/** Runs a panel operation as the operator (no caller: everything allowed); throws on a refusal. */
export async function operatorCall(panel: BrowserPanel, op: string, input: unknown): Promise<unknown> {
  const result = await panel.service.dispatch(op, input)
  if (!result.ok) throw new Error(`${op}: ${result.error.code}`)
  return result.data
}

/** A panel operation called from the page, with its cookies: the status and the JSON body. */
export const callFromPage = (page: Page, op: string, input: unknown) =>
  page.evaluate(
    async ([name, body]) => {
      const res = await fetch(`./panel/api/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    },
    [op, input] as const,
  )

/**
 * A new page (its own context, added to `contexts` for closing) signed in to the panel with an
 * email and password, waiting for the Overview.
 */
export async function signedInPage(
  browser: Browser,
  panel: BrowserPanel,
  contexts: BrowserContext[],
  { email, password, colorScheme = 'light' }: { email: string; password: string; colorScheme?: 'light' | 'dark' },
): Promise<Page> {
  const { page } = await newPage(browser, { window: { ...PANEL_WINDOW, colorScheme }, contexts })
  await page.goto(`${panel.origin}/`)
  await page.getByTestId('sign-in-identifier').fill(email)
  await page.getByTestId('sign-in-password').fill(password)
  await page.getByTestId('sign-in-submit').click()
  await page.getByRole('heading', { level: 2, name: 'Overview' }).waitFor({ timeout: 20_000 })
  return page
}

/** The panel service of a test server, without a listener (operations dispatched directly, as IPC does). */
export function panelServiceOf(server: TestServer): PanelService {
  return createPanelService({
    gatehouse: server.gatehouse,
    apiURL: apiURLOf(server.gatehouse),
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
}

/** A panel caller acting as a Gatehouse administrator: a signed-up person given the admin role. */
export async function adminCaller(server: TestServer, email: string): Promise<PanelCaller & { kind: 'admin' }> {
  const person = await signUp(server.base, { email })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: person.user.id, role: 'admin' }, null)
  const row = await findUserById(server.gatehouse.ctx, person.user.id)
  if (!row) throw new Error(`${email} vanished`)
  return { kind: 'admin', user: row, access: 'full', meta: PANEL_META }
}
