import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { BrowserPanel } from '../../server/panel/index.js'

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
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: 'UTC', locale: 'en-GB', colorScheme })
  contexts.push(context)
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(`${panel.origin}/`)
  await page.getByTestId('sign-in-identifier').fill(email)
  await page.getByTestId('sign-in-password').fill(password)
  await page.getByTestId('sign-in-submit').click()
  await page.getByRole('heading', { level: 2, name: 'Overview' }).waitFor({ timeout: 20_000 })
  return page
}
