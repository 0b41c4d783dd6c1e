import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { type TOTP, URI } from 'otpauth'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { user } from '../../../server/db/schema.js'
import type { OidcLogoutDeliveryRow } from '../../../server/features/oidc-provider/schema.js'
import { graceDeadline } from '../../../server/features/two-factor/service.js'
import {
  type Apache,
  apacheMissing,
  docRecipe,
  envOf,
  runRecipe,
  startApache,
  writeApacheConfig,
  writeEnvCgi,
} from '../../helpers/apache.js'
import { axe } from '../../helpers/axe.js'
import { listLogoutDeliveries } from '../../../server/features/oidc-provider/store.js'
import { administrator, type Member, verifiedSignUp } from '../../helpers/members.js'
import { launchBrowser, newPage, type NewPageOptions } from '../../helpers/browser.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { buildHostedPages } from '../../helpers/hosted.js'
import type { SignedUp } from '../../helpers/http.js'
import { serverLog, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'

/**
 * A real back-channel relying party: Apache httpd with Debian's mod_auth_openidc, started here in
 * the foreground on loopback with its own configuration in a temporary directory, set up by the two
 * blocks of docs/SSO.md run as written (`gatehouse oidc client create … --backchannel-logout-uri`,
 * the Apache block with its placeholders filled), and driven by Chromium through Gatehouse's hosted
 * pages. Two applications on the one Apache (two virtual hosts on two loopback addresses, so two
 * cookie jars, each its own client): a person signs in to both (SSO), their Gatehouse session ends
 * each of the five ways, and both applications' own sessions are gone on their next request (a 302
 * to Gatehouse's authorization endpoint instead of the page). With RP-initiated logout through
 * application A's logout URL, A ends its own session and B learns it by the back channel. Then
 * Apache is down during a sign-out: the notice is queued and retried, and once Apache is back (its
 * file cache kept the sessions) the token arrives and the sessions end.
 */

const reason = apacheMissing({
  'mod_auth_openidc.so': 'mod_auth_openidc is not installed (Debian: libapache2-mod-auth-openidc)',
  'mod_cgi.so': 'mod_cgi is not installed (Debian: apache2)',
})
warnSkipped('tests/features/oidc-provider/mod-auth-openidc.test.ts (Apache httpd + mod_auth_openidc as the back-channel RP)', reason)

interface App {
  name: 'A' | 'B'
  /** The application's public URL (its own loopback address: its own cookies). */
  url: string
  host: string
  port: number
  clientId: string
  /** Its access log: one line per request, `METHOD URI STATUS`. */
  accessLog: string
}

let server: TestServer
let clock: TestClock
let work: string
let assets: string
let browser: Browser
let admin: Member
let apache: Apache | undefined
const apps: App[] = []
const appA = (): App => apps[0] as App
const appB = (): App => apps[1] as App

const errorLog = (): string => apache?.errorLog() ?? ''

/** The whole Apache configuration: docs/SSO.md's block once per virtual host, placeholders filled. */
function writeConfig(secrets: Map<string, string>): void {
  mkdirSync(join(work, 'htdocs'), { recursive: true })
  writeFileSync(join(work, 'htdocs', 'index.html'), '<!doctype html><title>home</title><p>home of the application</p>\n')
  // The protected application: what mod_auth_openidc hands it.
  writeEnvCgi(work, 'echo "REMOTE_USER=$REMOTE_USER"\nenv | grep \'^OIDC_CLAIM_\' | sort\n')
  const passphrase = randomBytes(24).toString('base64url')
  const hosts: string[] = []
  for (const app of apps) {
    const cache = join(work, `cache-${app.name}`)
    mkdirSync(cache, { recursive: true })
    const block = docRecipe('SSO.md', 'openidc-apache')
      .replaceAll('https://auth.example.com/api/auth', server.base)
      .replaceAll('https://app.example.com', app.url)
      .replace('CLIENT_ID', app.clientId)
      .replace('CLIENT_SECRET', secrets.get(app.clientId) as string)
      .replace('A_LONG_RANDOM_PASSPHRASE', passphrase)
      .replace('/var/cache/apache2/mod_auth_openidc/cache', cache)
    writeFileSync(join(work, `openidc-${app.name}.conf`), block)
    hosts.push(
      `Listen ${app.host}:${app.port}`,
      `<VirtualHost ${app.host}:${app.port}>`,
      `    ServerName ${app.host}:${app.port}`,
      `    DocumentRoot "${work}/htdocs"`,
      `    CustomLog "${app.accessLog}" "%m %U%q %>s"`,
      `    ScriptAlias /protected/env "${work}/cgi/env.cgi"`,
      `    Include openidc-${app.name}.conf`,
      '</VirtualHost>',
    )
  }
  writeApacheConfig(work, {
    modules: [
      ['mime_module', 'mod_mime.so'],
      ['dir_module', 'mod_dir.so'],
      ['auth_openidc_module', 'mod_auth_openidc.so'],
    ],
    lines: ['TypesConfig /etc/mime.types', 'DirectoryIndex index.html', ...hosts],
    maxSpareServers: 3,
    maxRequestWorkers: 6,
  })
}

const startApacheForApps = async (): Promise<void> => {
  apache = await startApache(
    work,
    apps.map((app) => `${app.url}/`),
  )
}

async function stopApache(): Promise<void> {
  await apache?.stop()
  // Its ports are closed once it has exited: the applications are unreachable.
  for (const app of apps) await expect(fetch(`${app.url}/`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow()
}

beforeAll(async () => {
  if (reason) return
  work = mkdtempSync(join(tmpdir(), 'gatehouse-openidc-'))
  const [gatehousePort, portA, portB] = await Promise.all([freePort(), freePort(), freePort()])
  ;[assets, browser] = await Promise.all([buildHostedPages(), launchBrowser()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  // A clock near real time (mod_auth_openidc checks the tokens' iat and exp against its own), moved
  // on by hand where a test waits for a retry.
  clock = new TestClock(Date.now())
  server = await startTestServer({
    port: gatehousePort,
    baseURL: `http://127.0.0.1:${gatehousePort}`,
    clock,
    config: { oidcProvider: { enabled: true } },
  })
  admin = await administrator(server)
  // Application A on 127.0.0.1, B on 127.0.0.2 (another loopback address: the browser keeps their cookies apart).
  const secrets = new Map<string, string>()
  for (const [name, host, port] of [
    ['A', '127.0.0.1', portA],
    ['B', '127.0.0.2', portB],
  ] as const) {
    const url = `http://${host}:${port}`
    const out = await runRecipe(docRecipe('SSO.md', 'openidc-setup'), {
      env: { APP_URL: url, GATEHOUSE_DATA_DIR: server.dataDir },
      timeoutMs: 120_000,
    })
    const created = JSON.parse(out.slice(out.indexOf('{'))) as { clientId: string; clientSecret: string }
    expect(created.clientSecret.length).toBeGreaterThan(20)
    secrets.set(created.clientId, created.clientSecret)
    apps.push({ name, url, host, port, clientId: created.clientId, accessLog: join(work, 'logs', `access-${name}.log`) })
  }
  writeConfig(secrets)
  await startApacheForApps()
}, 240_000)

afterAll(async () => {
  await browser?.close()
  await stopApache().catch(() => {})
  await server?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  for (const dir of [work, assets]) if (dir) rmSync(dir, { recursive: true, force: true })
}, 60_000)

beforeEach(() => {
  // Catch the server's clock up with the wall clock mod_auth_openidc reads.
  if (clock && Date.now() > clock.now()) clock.advance(Date.now() - clock.now())
})

/** Pages in British English, in Playwright's default window (1280×720). */
const PAGE: NewPageOptions = { window: { locale: 'en-GB' }, timeout: 30_000 }

/** The first request of a navigation (the one the browser made before following redirects). */
function firstOf(request: Request): Request {
  let first = request
  for (let from = first.redirectedFrom(); from; from = from.redirectedFrom()) first = from
  return first
}

/** The protected page, answered by the application itself (its session): REMOTE_USER and the claims. */
async function protectedPage(page: Page, app: App): Promise<Record<string, string>> {
  const response = await page.goto(`${app.url}/protected/env`)
  expect(response?.status()).toBe(200)
  expect(response?.request().redirectedFrom()).toBeNull()
  expect(page.url()).toBe(`${app.url}/protected/env`)
  return envOf(await page.locator('body').innerText())
}

/** The application's next request has no session: mod_auth_openidc sends the browser to Gatehouse's authorization endpoint. */
async function expectNoSessionAt(page: Page, app: App): Promise<void> {
  const response = await page.goto(`${app.url}/protected/env`)
  const first = firstOf(response?.request() as Request)
  expect(first.url()).toBe(`${app.url}/protected/env`)
  const answer = await first.response()
  expect(answer?.status()).toBe(302)
  const location = new URL(answer?.headers().location as string)
  expect(location.origin + location.pathname).toBe(`${server.base}/oauth2/authorize`)
  expect(location.searchParams.get('client_id')).toBe(app.clientId)
  // The Gatehouse session is gone too: the browser ends on the sign-in page.
  await page.waitForURL(/\/api\/auth\/ui\/sign-in/)
}

/** Through the hosted pages: the sign-in form when asked, the consent page (Allow) when shown, back at the protected page. */
async function signInAt(page: Page, app: App, person: SignedUp): Promise<Record<string, string>> {
  await page.goto(`${app.url}/protected/env`)
  const target = `${app.url}/protected/env`
  await page.waitForURL((url) => url.href === target || /\/api\/auth\/ui\/(sign-in|consent)/.test(url.pathname))
  if (page.url().includes('/ui/sign-in')) {
    await page.getByLabel(/^Email or username/).fill(person.email)
    await page.getByLabel(/^Password/).fill(person.password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL((url) => url.href === target || url.pathname.endsWith('/ui/consent'))
  }
  if (page.url().includes('/ui/consent')) {
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL(target)
  }
  return protectedPage(page, app)
}

interface SignedIn {
  person: SignedUp
  context: BrowserContext
  page: Page
  /** The `sid` each application's session holds (the claim it was handed). */
  sids: Map<App, string>
}

/** A new person signs in to A (the sign-in page) and to B (single sign-on, no sign-in page). */
async function signedInToBoth(): Promise<SignedIn> {
  const person = await verifiedSignUp(server, { name: 'Ada Lovelace' })
  const { context, page } = await newPage(browser, PAGE)
  const sids = new Map<App, string>()
  for (const app of apps) {
    const env = await signInAt(page, app, person)
    expect(env.REMOTE_USER).toBe(person.email)
    expect(env.OIDC_CLAIM_email).toBe(person.email)
    expect(env.OIDC_CLAIM_sub).toBe(person.user.id)
    expect(env.OIDC_CLAIM_name).toBe('Ada Lovelace')
    expect(env.OIDC_CLAIM_groups).toBe('user')
    expect(env.OIDC_CLAIM_sid).toMatch(/\S/)
    sids.set(app, env.OIDC_CLAIM_sid as string)
  }
  expect(sids.get(appA())).not.toBe(sids.get(appB()))
  return { person, context, page, sids }
}

const deliveriesOf = async (signedIn: SignedIn): Promise<OidcLogoutDeliveryRow[]> => {
  const rows = await listLogoutDeliveries(server.gatehouse.ctx)
  return apps.flatMap((app) => rows.filter((r) => r.clientId === app.clientId && r.sid === signedIn.sids.get(app)))
}

/** Polls (bounded) until `done` holds for this person's deliveries, one per application; returns them. */
async function waitForDeliveries(
  signedIn: SignedIn,
  done: (row: OidcLogoutDeliveryRow) => boolean,
  what: string,
): Promise<OidcLogoutDeliveryRow[]> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const rows = await deliveriesOf(signedIn)
    if (rows.length === apps.length && rows.every(done)) return rows
    if (Date.now() > deadline)
      throw new Error(`logout deliveries not ${what} in time: ${JSON.stringify(rows, null, 1)}\napache error log:\n${errorLog()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The back-channel POSTs Apache answered, as `STATUS` per line, from an application's access log. */
const backchannelPosts = (app: App): string[] =>
  (existsSync(app.accessLog) ? readFileSync(app.accessLog, 'utf8') : '')
    .split('\n')
    .filter((line) => line.startsWith('POST /protected/redirect_uri?logout=backchannel '))
    .map((line) => line.slice(line.lastIndexOf(' ') + 1))

const ways = [
  'the hosted sign-out page',
  'RP-initiated logout from application A',
  'an admin revoking the sessions',
  'a ban',
  'deleting the person',
] as const

describe.skipIf(reason)('mod_auth_openidc as the back-channel relying party', () => {
  for (const way of ways) {
    it(`${way}: the logout tokens are delivered and both applications’ sessions are gone on their next request`, async () => {
      const signedIn = await signedInToBoth()
      const { page, person } = signedIn
      const postsBefore = apps.map((app) => backchannelPosts(app).length)
      // Still signed in at both, right before.
      for (const app of apps) expect((await protectedPage(page, app)).REMOTE_USER).toBe(person.email)

      if (way === 'the hosted sign-out page') {
        await page.goto(`${server.base}/ui/sign-out`)
        await page.getByRole('button', { name: 'Sign out' }).click()
        await page.getByTestId('signed-out').waitFor()
      } else if (way === 'RP-initiated logout from application A') {
        // mod_auth_openidc's logout URL: it ends its own session, then Gatehouse's end-session
        // endpoint (with id_token_hint) confirms on the hosted sign-out page and sends the browser back.
        const back = `${appA().url}/`
        await page.goto(`${appA().url}/protected/redirect_uri?logout=${encodeURIComponent(back)}`)
        await page.waitForURL(/\/api\/auth\/ui\/sign-out/)
        await page.getByRole('button', { name: 'Sign out' }).click()
        await page.waitForURL(back)
        await page.getByText('home of the application').waitFor()
      } else {
        const userId = person.user.id
        const answer =
          way === 'a ban'
            ? await admin.client.admin.banUser({ userId })
            : way === 'deleting the person'
              ? await admin.client.admin.removeUser({ userId })
              : await admin.client.admin.revokeUserSessions({ userId })
        expect(answer.error).toBeNull()
      }

      const rows = await waitForDeliveries(signedIn, (r) => r.sentAt !== null, 'delivered')
      for (const row of rows) expect(row.lastError).toBeNull()
      // Apache answered each application's back-channel POST with 200 (mod_auth_openidc took the token).
      apps.forEach((app, i) => {
        expect(backchannelPosts(app).slice(postsBefore[i])).toEqual(['200'])
      })
      for (const app of apps) await expectNoSessionAt(page, app)
      await signedIn.context.close()
    }, 240_000)
  }

  it('Apache down during a sign-out: the notices are queued and retried; once it is back they arrive and the sessions end', async () => {
    serverLog.allowWarning(/^Back-channel logout to client/)
    const signedIn = await signedInToBoth()
    const { page } = signedIn
    const postsBefore = apps.map((app) => backchannelPosts(app).length)
    await stopApache()

    // The hosted sign-out completes while neither application can be reached.
    await page.goto(`${server.base}/ui/sign-out`)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByTestId('signed-out').waitFor()
    const failed = await waitForDeliveries(signedIn, (r) => r.lastError !== null && r.attempts >= 1, 'tried')
    for (const row of failed) {
      expect(row.sentAt).toBeNull()
      expect(row.lastError).toMatch(/fetch failed|ECONNREFUSED/)
      expect(row.nextAttemptAt.getTime()).toBeGreaterThan(clock.now())
    }

    // Apache again, on the same file cache: its sessions survived the restart (no token yet).
    await startApacheForApps()
    for (const app of apps) expect((await protectedPage(page, app)).REMOTE_USER).toBe(signedIn.person.email)
    const waiting = await deliveriesOf(signedIn)
    expect(waiting.every((r) => r.sentAt === null)).toBe(true)

    // The retry falls due on the server's clock: the tokens arrive and the sessions end.
    const due = Math.max(...waiting.map((r) => r.nextAttemptAt.getTime()))
    clock.advance(due - clock.now() + 1_000)
    const rows = await waitForDeliveries(signedIn, (r) => r.sentAt !== null, 'delivered after the restart')
    for (const row of rows) expect(row.attempts).toBeGreaterThanOrEqual(2)
    apps.forEach((app, i) => {
      expect(backchannelPosts(app).slice(postsBefore[i])).toEqual(['200'])
    })
    for (const app of apps) await expectNoSessionAt(page, app)
    await signedIn.context.close()
  }, 300_000)
})

/**
 * Issue 49 §10: two-factor enforcement (`twoFactor.enforcement`) sends mod_auth_openidc's sign-in
 * through the hosted Two-factor page's enrolment step and back. During the grace the page says when
 * it ends and how long is left, and "Skip for now" goes on to the authorization (the application
 * opens); once the grace is over there is no skip, the application stays refused (its next request
 * comes back to the enrolment step), and after enrolling with a code computed by otpauth from the
 * shown secret, "Continue" finishes the authorization and the application opens.
 */
describe.skipIf(reason)('mod_auth_openidc: two-factor enrolment when required', () => {
  const ENFORCED = 'staff'

  async function enforced(gracePeriod: number): Promise<SignedUp> {
    server.gatehouse.config.update({ twoFactor: { enabled: true, enforcement: { roles: [ENFORCED], gracePeriod } } })
    const person = await verifiedSignUp(server, { name: 'Grace Hopper' })
    await server.gatehouse.ctx.db.update(user).set({ role: ENFORCED }).where(eq(user.id, person.user.id))
    return person
  }

  /** mod_auth_openidc sends the browser to Gatehouse; the person signs in on the hosted page and lands on the enrolment step. */
  async function signInToEnrolment(page: Page, person: SignedUp): Promise<URL> {
    await page.goto(`${appA().url}/protected/env`)
    await page.waitForURL(/\/api\/auth\/ui\/sign-in/)
    await page.getByLabel(/^Email or username/).fill(person.email)
    await page.getByLabel(/^Password/).fill(person.password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL(/\/api\/auth\/ui\/account\/two-factor\?/)
    const url = new URL(page.url())
    expect(url.searchParams.get('enrol')).toBe('1')
    // The way back is the authorization's interaction, kept through the step.
    expect(url.searchParams.get('returnTo')).toMatch(new RegExp(`^${server.base}/oidc/interaction/[\\w-]+$`))
    await page.getByTestId('enrolment-required').waitFor()
    return url
  }

  /** Past the consent page (shown the first time this person uses the application): the protected page itself. */
  async function backAtApplication(page: Page, person: SignedUp): Promise<void> {
    const target = `${appA().url}/protected/env`
    await page.waitForURL((url) => url.href === target || url.pathname.endsWith('/ui/consent'))
    if (page.url().includes('/ui/consent')) {
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL(target)
    }
    expect(envOf(await page.locator('body').innerText()).REMOTE_USER).toBe(person.email)
  }

  const localeTime = (page: Page, at: number): Promise<string> =>
    page.evaluate((t) => new Date(t).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }), at)

  it('during the grace: the enrolment step says how long is left; Skip for now opens the application', async () => {
    try {
      const person = await enforced(3 * 86_400)
      const { context, page } = await newPage(browser, PAGE)
      await signInToEnrolment(page, person)
      const deadline = await graceDeadline(server.gatehouse.ctx, person.user.id)
      expect(deadline).toBe(clock.now() + 3 * 86_400_000)
      const notice = await page.getByTestId('enrolment-required').innerText()
      expect(notice).toContain('A second factor is required')
      expect(notice).toContain(
        `Your account must have a second factor by ${await localeTime(page, deadline as number)} (3 days left). Set up an authenticator app or codes by email below.`,
      )
      expect(await axe(page)).toEqual([])
      await page.getByRole('button', { name: 'Skip for now' }).click()
      await backAtApplication(page, person)
      await context.close()
    } finally {
      server.gatehouse.config.update({ twoFactor: { enabled: false, enforcement: null } })
    }
  }, 240_000)

  it('grace over: no skip, the application stays refused until a TOTP is enrolled; Continue then opens it', async () => {
    try {
      // A grace of 0: over at the first sign-in.
      const person = await enforced(0)
      const { context, page } = await newPage(browser, PAGE)
      const step = await signInToEnrolment(page, person)
      const notice = await page.getByTestId('enrolment-required').innerText()
      expect(notice).toContain('Set up a second factor to continue')
      expect(notice).toContain('Applications will not let you in until you set up an authenticator app or codes by email below.')
      expect(await page.getByRole('button', { name: 'Skip for now' }).count()).toBe(0)
      expect(await axe(page)).toEqual([])

      // The refusal stays: the application's next sign-in comes back to the enrolment step, not to it.
      await page.goto(`${appA().url}/protected/env`)
      await page.waitForURL(/\/api\/auth\/ui\/account\/two-factor\?/)
      expect(new URL(page.url()).searchParams.get('enrol')).toBe('1')
      expect(await page.getByRole('button', { name: 'Skip for now' }).count()).toBe(0)
      await page.goto(step.href)

      // A wrong password is announced on its field.
      const setUp = page.getByRole('form', { name: 'Set up an authenticator app' })
      await setUp.getByLabel(/^Your password/).fill('not the password')
      await setUp.getByRole('button', { name: 'Set up' }).click()
      await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true')
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('password')
      await setUp.getByLabel(/^Your password/).fill(person.password)
      await setUp.getByRole('button', { name: 'Set up' }).click()
      const totp = URI.parse((await page.getByTestId('totp-uri').textContent()) ?? '') as TOTP
      expect(await page.getByTestId('totp-secret').textContent()).toBe(totp.secret.base32)
      expect(await page.getByRole('button', { name: 'Continue' }).count()).toBe(0)
      const confirm = page.getByRole('form', { name: 'Confirm the authenticator app' })
      await confirm.getByLabel(/^Code from the app/).fill(totp.generate({ timestamp: clock.now() }))
      await confirm.getByRole('button', { name: 'Turn on' }).click()
      // The backup codes are shown once, with Continue beside them.
      await page.getByTestId('backup-codes').waitFor()
      expect(await page.getByTestId('backup-codes').locator('li').count()).toBe(10)
      await page.getByRole('button', { name: 'Continue' }).click()
      await backAtApplication(page, person)
      await context.close()
    } finally {
      server.gatehouse.config.update({ twoFactor: { enabled: false, enforcement: null } })
    }
  }, 240_000)
})
