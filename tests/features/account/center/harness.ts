import { rmSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { user } from '../../../../server/db/schema.js'
import type { GatehouseConfigInput } from '../../../../server/config/schema.js'
import { axe } from '../../../helpers/axe.js'
import { launchBrowser, watchRequests } from '../../../helpers/browser.js'
import { buildHostedPages } from '../../../helpers/hosted.js'
import { type SignedUp, signUp, uniqueEmail } from '../../../helpers/http.js'

export { uniqueEmail as uniqueAddress }
import { startTestServer, TestClock, type TestServer } from '../../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../../helpers/smtp.js'

/**
 * The account center's suites share one shape: the hosted pages built as `npm run build` does,
 * real Chromium, the real server on loopback with the real SMTP sink. People are created through
 * the API (sign-up) with their email verified, and signed in by handing their session cookie to a
 * fresh browser context.
 */
export interface AccountHarness {
  server: TestServer
  sink: SmtpSink
  browser: Browser
  /** Page errors of every page opened through `open`: the suites expect none. */
  pageErrors: string[]
  close(): Promise<void>
}

export async function startAccountHarness(config: GatehouseConfigInput = {}): Promise<AccountHarness> {
  const [assets, browser, sink] = await Promise.all([buildHostedPages(), launchBrowser(), startSmtpSink()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  const server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    config: { ...config, mail: { smtp: { url: sink.url } } },
  })
  const pageErrors: string[] = []
  return {
    server,
    sink,
    browser,
    pageErrors,
    async close() {
      await server.close()
      await browser.close()
      await sink.close()
      delete process.env.GATEHOUSE_HOSTED_ASSETS
      rmSync(assets, { recursive: true, force: true })
    },
  }
}

/** A new person through the API, email verified unless told otherwise. */
export async function person(h: AccountHarness, overrides: Record<string, unknown> = {}, verified = true): Promise<SignedUp> {
  const created = await signUp(h.server.base, { name: 'Ada Lovelace', ...overrides })
  if (verified) await h.server.gatehouse.ctx.db.update(user).set({ emailVerified: true }).where(eq(user.id, created.user.id))
  return created
}

export const SESSION_COOKIE = 'better-auth.session_token'

/** A fresh context (no cookies, or the person's session) and its page, at a phone's or a desktop's width. */
export async function open(
  h: AccountHarness,
  who: SignedUp | null,
  options: { width?: number; colorScheme?: 'light' | 'dark'; userAgent?: string; origin?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const width = options.width ?? 1280
  const context = await h.browser.newContext({
    viewport: { width, height: 900 },
    locale: 'en-GB',
    colorScheme: options.colorScheme ?? 'light',
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
  })
  if (who)
    await context.addCookies([
      { name: SESSION_COOKIE, value: who.client.jar.get(SESSION_COOKIE) ?? '', url: options.origin ?? h.server.origin },
    ])
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  watchRequests(page)
  page.on('pageerror', (e) => h.pageErrors.push(`${page.url()}: ${e.message}`))
  return { context, page }
}

export const ui = (h: AccountHarness, page: string, params: Record<string, string> = {}): string => {
  const url = new URL(`${h.server.base}/ui/${page}`)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

/**
 * The scheme the page is drawn in, read off its pixels: the page's and the card's backgrounds and
 * the heading's text, each light or dark (relative luminance above or below 0.4); `mixed` otherwise.
 */
export async function drawnScheme(page: Page): Promise<'light' | 'dark' | 'mixed'> {
  const lum = await page.evaluate(() => {
    const luminance = (css: string): number => {
      const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
        const c = Number(v) / 255
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
      }) as [number, number, number]
      return 0.2126 * r + 0.7152 * g + 0.0722 * b
    }
    const main = document.querySelector('main')
    const card = document.querySelector('main .mantine-Paper-root')
    const heading = document.querySelector('main h1')
    if (!main || !card || !heading) return null
    return {
      page: luminance(getComputedStyle(main).backgroundColor),
      card: luminance(getComputedStyle(card).backgroundColor),
      text: luminance(getComputedStyle(heading).color),
    }
  })
  if (!lum) return 'mixed'
  if (lum.page > 0.4 && lum.card > 0.4 && lum.text < 0.4) return 'light'
  if (lum.page < 0.4 && lum.card < 0.4 && lum.text > 0.4) return 'dark'
  return 'mixed'
}

/**
 * axe (WCAG 2 A/AA) finds nothing on the page at 360 px and at 1280 px, in the light and the dark
 * colour scheme the browser asks for, and nothing sticks out sideways at 360 px.
 */
export async function accessibleEverywhere(page: Page): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    // The pages follow the browser's scheme (a real dark theme, not the light one checked twice).
    await expect.poll(() => drawnScheme(page), { timeout: 5_000 }).toBe(scheme)
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 900 })
      expect(await axe(page), `${scheme} at ${width} px`).toEqual([])
      if (width === 360) {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
        expect(overflow, `horizontal overflow at 360 px (${scheme})`).toBeLessThanOrEqual(0)
      }
    }
  }
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize({ width: 1280, height: 900 })
}

/** Signs in through the hosted sign-in page (a session of this browser, with its user agent), landing on `page`. */
export async function signInThroughPage(h: AccountHarness, page: Page, who: SignedUp, to: string): Promise<void> {
  await page.goto(ui(h, 'sign-in', { returnTo: ui(h, to) }))
  await page.getByLabel(/^Email or username/).fill(who.email)
  await page.getByLabel(/^Password/).fill(who.password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForURL(ui(h, to))
}

/** The mail text's first link. */
export const linkIn = (text: string): string => {
  const found = /https?:\/\/\S+/.exec(text)?.[0]
  if (!found) throw new Error(`no link in mail: ${text}`)
  return found.replace(/[)>.,]+$/, '')
}
