import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page, Request } from 'playwright-core'

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

/** The requests each checked page has in flight (its data loading after a click, say). */
const inFlight = new WeakMap<Page, Set<Request>>()
function requestsOf(page: Page): Set<Request> {
  let requests = inFlight.get(page)
  if (!requests) {
    const set = new Set<Request>()
    page.on('request', (r) => set.add(r))
    page.on('requestfinished', (r) => set.delete(r))
    page.on('requestfailed', (r) => set.delete(r))
    inFlight.set(page, set)
    requests = set
  }
  return requests
}

/** Pages whose requests are counted from their first navigation on (`watchRequests`). */
const watchedFromStart = new WeakSet<Page>()

/**
 * Counts the page's requests in flight from now on; call it before the page's first navigation. A
 * page so watched needs no `networkidle` wait (500 ms of silence after each navigation) before a
 * check: `settled` knows when its requests have arrived. Other pages wait for `networkidle` too.
 */
export function watchRequests(page: Page): void {
  requestsOf(page)
  watchedFromStart.add(page)
}

/**
 * Waits until the page has settled, so colours are measured as they end up: no request in flight
 * (what a click or a tab asked for has arrived) and none of Mantine's transitions (drawers, modals,
 * notifications) still running. A transition or a request starts a frame or two after the state
 * that asks for it, so each look waits two frames first, and the page must look settled twice in a
 * row. Endless animations (a spinner's) do not count. Fails, naming what runs, after 10 s.
 */
export async function settled(page: Page): Promise<void> {
  const requests = requestsOf(page)
  // Runs in the page: after two frames, the animations still running, endless ones aside.
  const running = () =>
    new Promise<string[]>((resolve) =>
      requestAnimationFrame(() =>
        requestAnimationFrame(() =>
          resolve(
            document
              .getAnimations()
              .filter((a) => a.playState === 'running' && a.effect?.getComputedTiming().iterations !== Number.POSITIVE_INFINITY)
              .map((a) => `${a.constructor.name} ${(a as CSSTransition).transitionProperty ?? (a as CSSAnimation).animationName ?? ''}`),
          ),
        ),
      ),
    )
  const deadline = Date.now() + 10_000
  for (let quiet = 0; quiet < 2; ) {
    const animations = await page.evaluate(running)
    quiet = animations.length === 0 && requests.size === 0 ? quiet + 1 : 0
    if (quiet < 2 && Date.now() > deadline)
      throw new Error(
        `the page did not settle within 10 s: animations ${JSON.stringify(animations)}, requests ${JSON.stringify([...requests].map((r) => r.url()))}`,
      )
  }
}

/**
 * `within`: only the elements matching this selector (an open dialog, say) and what they hold; the
 * whole page when none matches.
 */
export async function axe(page: Page, options: { within?: string } = {}): Promise<Violation[]> {
  if (!watchedFromStart.has(page)) await page.waitForLoadState('networkidle')
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
