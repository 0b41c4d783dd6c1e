import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createBrotliDecompress } from 'node:zlib'
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page, type Request } from 'playwright-core'
import { extractTar } from '../../server/features/backup/tar.js'

/**
 * The one way browser tests start Chromium. The system's Chromium (/usr/bin/chromium, or
 * GATEHOUSE_CHROMIUM) is used when present; otherwise the Chromium that npm installed with
 * @sparticuz/chromium (a dev dependency shipping a brotli-compressed headless shell, with the NSS
 * libraries and fonts it needs) is unpacked once into a cache folder and used. If neither can run,
 * launchBrowser() throws with the reason: a browser test never skips silently.
 *
 * GATEHOUSE_CHROMIUM=bundled ignores the system binary (how the fallback is tested).
 */

const SYSTEM_CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
]

export interface ChromiumBinary {
  executablePath: string
  source: 'system' | 'bundled'
  env: Record<string, string>
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

async function inflate(file: string, target: string, tar: boolean): Promise<void> {
  const source = createReadStream(file).pipe(createBrotliDecompress())
  if (tar) await extractTar(source, target)
  else await pipeline(source, (await import('node:fs')).createWriteStream(target, { mode: 0o755 }))
}

/**
 * Unpacks @sparticuz/chromium into <tmp>/gatehouse-chromium-<version> once. Concurrent test
 * workers wait for the one that holds the lock (a directory, created atomically).
 */
async function bundledChromium(): Promise<ChromiumBinary> {
  const require = createRequire(import.meta.url)
  let packageDir: string
  try {
    // build/index.js; the package exports nothing else.
    packageDir = join(dirname(require.resolve('@sparticuz/chromium')), '..')
  } catch {
    throw new Error('no Chromium: /usr/bin/chromium is absent and @sparticuz/chromium is not installed (run npm install)')
  }
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }
  const bin = join(packageDir, 'bin')
  const dir = join(tmpdir(), `gatehouse-chromium-${version}-${process.arch}`)
  const ready = join(dir, '.ready')
  const lock = `${dir}.lock`
  const result = (): ChromiumBinary => ({
    executablePath: join(dir, 'chromium'),
    source: 'bundled',
    env: {
      LD_LIBRARY_PATH: [join(dir, 'lib'), dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_PATH: dir,
      FONTCONFIG_FILE: join(dir, 'fonts.conf'),
    },
  })
  for (let waited = 0; !existsSync(ready); waited += 200) {
    let locked = false
    try {
      mkdirSync(lock)
      locked = true
    } catch {
      // Another worker unpacks; a lock older than two minutes belongs to a dead one.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true })
      } catch {}
    }
    if (locked) {
      try {
        if (!existsSync(ready)) {
          const staging = `${dir}.${process.pid}.tmp`
          rmSync(staging, { recursive: true, force: true })
          mkdirSync(staging, { recursive: true })
          await Promise.all([
            inflate(join(bin, 'chromium.br'), join(staging, 'chromium'), false),
            inflate(join(bin, 'swiftshader.tar.br'), staging, true),
            inflate(join(bin, 'fonts.tar.br'), staging, true),
            // NSS, NSPR and expat: absent on a machine with Node and nothing else.
            inflate(join(bin, 'al2023.tar.br'), staging, true),
          ])
          writeFileSync(
            join(staging, 'fonts.conf'),
            `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(dir, 'fonts')}</dir>\n  <dir>/usr/share/fonts</dir>\n  <cachedir>${join(dir, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
          )
          writeFileSync(join(staging, '.ready'), `${version}\n`)
          rmSync(dir, { recursive: true, force: true })
          renameSync(staging, dir)
        }
      } finally {
        rmSync(lock, { recursive: true, force: true })
      }
      break
    }
    if (waited > 180_000) throw new Error(`timed out waiting for another process to unpack Chromium into ${dir}`)
    await sleep(200)
  }
  return result()
}

/** Which Chromium the browser tests use (see the module comment). */
export async function findChromium(): Promise<ChromiumBinary> {
  const choice = process.env.GATEHOUSE_CHROMIUM
  if (choice && choice !== 'bundled' && choice !== 'system') {
    if (!existsSync(choice)) throw new Error(`GATEHOUSE_CHROMIUM=${choice}: no such file`)
    return { executablePath: choice, source: 'system', env: {} }
  }
  if (choice !== 'bundled') {
    const system = SYSTEM_CHROMIUM.find((path) => existsSync(path))
    if (system) return { executablePath: system, source: 'system', env: {} }
    if (choice === 'system') throw new Error('GATEHOUSE_CHROMIUM=system but no system Chromium is installed')
  }
  return bundledChromium()
}

/** Starts a headless Chromium for a test; close it in afterAll. */
export async function launchBrowser(options: { args?: string[] } = {}): Promise<Browser> {
  const binary = await findChromium()
  try {
    return await chromium.launch({
      executablePath: binary.executablePath,
      // Extra flags, e.g. --host-resolver-rules to reach loopback under several host names.
      args: [...FLAGS, ...(options.args ?? [])],
      env: { ...(process.env as Record<string, string>), ...binary.env },
    })
  } catch (error) {
    throw new Error(`could not start ${binary.source} Chromium (${binary.executablePath}): ${(error as Error).message}`)
  }
}

/** The window a hosted-page test opens: a laptop's, in British English. */
export const HOSTED_WINDOW: BrowserContextOptions = { viewport: { width: 1024, height: 800 }, locale: 'en-GB' }
/** The window a control-panel test opens: a desktop's, in British English, on UTC (the dates it shows). */
export const PANEL_WINDOW: BrowserContextOptions = { viewport: { width: 1360, height: 900 }, timezoneId: 'UTC', locale: 'en-GB' }

export interface NewPageOptions {
  /** The context's options (default HOSTED_WINDOW). */
  window?: BrowserContextOptions
  /** The default timeout of every wait and navigation (default 20 s). */
  timeout?: number
  /** Collects the page's uncaught errors, as `<url>: page error <message>`. */
  errors?: string[]
  /** Collects the page's Content Security Policy violations too, as `<url>: <message>`. */
  cspViolations?: string[]
  /** The context is added here, for the test to close in afterAll. */
  contexts?: BrowserContext[]
}

/** A fresh browser context (no cookies) and a page in it: the one way the browser tests open one. */
export async function newPage(browser: Browser, options: NewPageOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options.window ?? HOSTED_WINDOW)
  options.contexts?.push(context)
  const violations = options.cspViolations
  if (violations) {
    // Injected through the protocol (not an inline script): it sees every violation the page meets.
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`)
      })
    })
  }
  const page = await context.newPage()
  page.setDefaultTimeout(options.timeout ?? 20_000)
  if (violations) {
    page.on('console', (m) => {
      if (/Content Security Policy|CSP violation/i.test(m.text())) violations.push(`${page.url()}: ${m.text()}`)
    })
  }
  const errors = options.errors
  if (errors) page.on('pageerror', (e) => errors.push(`${page.url()}: page error ${e.message}`))
  return { context, page }
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
export const isWatchedFromStart = (page: Page): boolean => watchedFromStart.has(page)

/**
 * Counts the page's requests in flight from now on; call it before the page's first navigation. A
 * page so watched needs no `networkidle` wait (500 ms of silence after each navigation) before a
 * check (tests/helpers/axe.ts): `settled` knows when its requests have arrived. Other pages wait for
 * `networkidle` too.
 */
export function watchRequests(page: Page): void {
  requestsOf(page)
  watchedFromStart.add(page)
}

/**
 * Waits until the page has settled, so a check sees it as it ends up (axe's colours, a dialog that
 * did or did not open): no request in flight (what a click or a tab asked for has arrived) and none
 * of Mantine's transitions (drawers, modals, notifications) still running. A transition or a
 * request starts a frame or two after the state that asks for it, so each look waits two frames
 * first, and the page must look settled twice in a row. Endless animations (a spinner's) do not
 * count. Fails, naming what runs, after 20 s (a deadline for a loaded machine; a settled page returns at once).
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
  const deadline = Date.now() + 20_000
  for (let quiet = 0; quiet < 2; ) {
    const animations = await page.evaluate(running)
    quiet = animations.length === 0 && requests.size === 0 ? quiet + 1 : 0
    if (quiet < 2 && Date.now() > deadline)
      throw new Error(
        `the page did not settle within 20 s: animations ${JSON.stringify(animations)}, requests ${JSON.stringify([...requests].map((r) => r.url()))}`,
      )
  }
}
