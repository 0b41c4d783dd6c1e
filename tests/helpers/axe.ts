import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { isWatchedFromStart, settled } from './browser.js'

/**
 * axe-core's WCAG 2 A and AA rules on a page as it is now: the one copy the browser suites share
 * (the panel's views, drawers and dialogs; the hosted pages). Injected through the protocol: the
 * panel's CSP allows no inline script.
 */

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface Violation {
  id: string
  help: string
  /** Each failing element: its selector and axe's summary (contrast figures and the like). */
  nodes: string[]
}

/**
 * `within`: only the elements matching this selector (an open dialog, say) and what they hold; the
 * whole page when none matches.
 */
export async function axe(page: Page, options: { within?: string } = {}): Promise<Violation[]> {
  if (!isWatchedFromStart(page)) await page.waitForLoadState('networkidle')
  await settled(page)
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  return page.evaluate(async (within) => {
    const run = (
      window as unknown as {
        axe: {
          run: (
            ctx: unknown,
            options: unknown,
          ) => Promise<{ violations: Array<{ id: string; help: string; nodes: Array<{ target: string[]; failureSummary?: string }> }> }>
        }
      }
    ).axe.run
    const context = within && document.querySelector(within) ? { include: [[within]] } : document
    const result = await run(context, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    return result.violations.map((v) => ({
      id: v.id,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary ?? ''}`),
    }))
  }, options.within)
}
