import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type TOTP, URI } from 'otpauth'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { banUser, setRole, systemActor } from '../../server/features/admin/index.js'
import { launchBrowser } from '../helpers/browser.js'
import { freePort, warnSkipped } from '../helpers/engines.js'
import { HttpClient, rawRequest, uniqueEmail } from '../helpers/http.js'
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js'

/**
 * Forward auth behind the real proxies (issue 28): Debian's nginx (auth_request) and Caddy
 * (forward_auth), each started here on loopback with its own config in a temporary folder, in front
 * of a small echo app that answers the headers it received. Chromium signs in on the hosted page.
 *
 * Host names and cookies on loopback: everything listens on 127.0.0.1 (different ports), and
 * Chromium maps `*.gh.localtest` to it (--host-resolver-rules). Gatehouse is
 * `http://auth.gh.localtest:<port>` with `advanced.crossSubDomainCookies: { enabled, domain:
 * 'gh.localtest' }`, the protected apps `app.gh.localtest:<nginx>` and `app.gh.localtest:<caddy>`:
 * the session cookie carries `Domain=gh.localtest`, so the browser sends it to the apps exactly as
 * it would on a LAN with `auth.example.lan` and `wiki.example.lan` (cookies ignore ports; a
 * two-label domain under an unknown top-level name is accepted as a cookie domain). Requests made
 * by the test itself go to 127.0.0.1 with the Host header the proxy expects.
 */

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p))
const CADDY = ['/usr/bin/caddy', '/usr/local/bin/caddy'].find((p) => existsSync(p))
const missing = [!NGINX && 'nginx', !CADDY && 'caddy'].filter(Boolean).join(' and ')
const skipReason = missing ? `${missing} not installed (apt-get install -y nginx caddy; .ci/run does it)` : undefined
warnSkipped('forward auth behind real nginx and Caddy (tests/hosted/forward-auth-proxies.test.ts)', skipReason)

const root = resolve(import.meta.dirname, '../..')
const PASSWORD = 'correct horse battery'
const DOMAIN = 'gh.localtest'

let dir = ''
let assets = ''
let server: TestServer
let browser: Browser
let echo: Server
let gatehousePort = 0
let authOrigin = ''
const children: ChildProcess[] = []
const proxies: Record<'nginx' | 'caddy', number> = { nginx: 0, caddy: 0 }

async function buildHosted(): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-hosted-'))
  const { build } = await import('vite')
  await build({ configFile: join(root, 'vite.hosted.config.ts'), logLevel: 'silent', build: { outDir, emptyOutDir: true } })
  return outDir
}

/** Waits (bounded) until something accepts connections on the port. */
async function listening(port: number, child: ChildProcess, log: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${readFileSync(log, 'utf8')}`)
    const ok = await new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy()
        r(true)
      })
      s.on('error', () => r(false))
    })
    if (ok) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`nothing listens on ${port}: ${readFileSync(log, 'utf8')}`)
}

function start(command: string, args: string[], name: string, env: Record<string, string> = {}): ChildProcess {
  const log = join(dir, `${name}.log`)
  const out = openSync(log, 'a')
  const child = spawn(command, args, { stdio: ['ignore', out, out], env: { ...process.env, ...env } })
  children.push(child)
  return child
}

function nginxConfig(port: number, echoPort: number): string {
  const t = (name: string) => join(dir, `nginx-${name}`)
  return `daemon off;
master_process off;
worker_processes 1;
pid ${t('pid')};
error_log ${t('error.log')} warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${t('body')};
  proxy_temp_path ${t('proxy')};
  fastcgi_temp_path ${t('fastcgi')};
  uwsgi_temp_path ${t('uwsgi')};
  scgi_temp_path ${t('scgi')};
${readFileSync(join(root, 'docs', 'forward-auth', 'nginx-server.conf'), 'utf8')
  .replaceAll('GATEHOUSE_API', `http://127.0.0.1:${gatehousePort}/api/auth`)
  .replaceAll('LISTEN', `127.0.0.1:${port}`)
  .replaceAll('SERVER_NAME', `app.${DOMAIN}`)
  .replaceAll('APP_UPSTREAM', `http://127.0.0.1:${echoPort}`)}
}
`
}

function caddyConfig(port: number, echoPort: number): string {
  return `{
	admin off
	auto_https off
	storage file_system ${join(dir, 'caddy-storage')}
}
${readFileSync(join(root, 'docs', 'forward-auth', 'Caddyfile'), 'utf8')
  .replaceAll('SITE_ADDRESS', `http://:${port}`)
  .replaceAll('GATEHOUSE_UPSTREAM', `127.0.0.1:${gatehousePort}`)
  .replaceAll('APP_UPSTREAM', `127.0.0.1:${echoPort}`)
  .replaceAll('BASE_PATH', '/api/auth')
  .replace(/^(\s*)# bind$/m, '$1bind 127.0.0.1')}
`
}

beforeAll(async () => {
  if (skipReason) return
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-proxies-'))
  ;[assets, browser] = await Promise.all([buildHosted(), launchBrowser({ args: [`--host-resolver-rules=MAP *.${DOMAIN} 127.0.0.1`] })])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  gatehousePort = await freePort()
  authOrigin = `http://auth.${DOMAIN}:${gatehousePort}`
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry lies in the past.
    clock: new TestClock(Date.now()),
    port: gatehousePort,
    baseURL: authOrigin,
    config: {
      twoFactor: { enabled: true },
      advanced: { crossSubDomainCookies: { enabled: true, domain: DOMAIN } },
      forwardAuth: {
        enabled: true,
        rules: [
          { domain: `*.${DOMAIN}`, resources: ['^/public(/.*)?$'], policy: 'bypass' },
          { domain: `*.${DOMAIN}`, resources: ['^/admin(/.*)?$'], policy: 'signed-in', subject: { roles: ['admin'] } },
          {
            domain: `*.${DOMAIN}`,
            resources: ['^/org(/.*)?$'],
            policy: 'signed-in',
            subject: { organizations: ['proxy-org-nginx', 'proxy-org-caddy'] },
          },
          { domain: `*.${DOMAIN}`, resources: ['^/mfa(/.*)?$'], policy: 'two-factor' },
          { domain: `*.${DOMAIN}`, policy: 'signed-in' },
        ],
      },
    },
  })
  echo = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ url: req.url, headers: req.headers }))
  })
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()))
  const echoPort = (echo.address() as { port: number }).port

  proxies.nginx = await freePort()
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(proxies.nginx, echoPort))
  const nginx = start(NGINX as string, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'nginx-error.log')], 'nginx')
  proxies.caddy = await freePort()
  writeFileSync(join(dir, 'Caddyfile'), caddyConfig(proxies.caddy, echoPort))
  const caddy = start(CADDY as string, ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], 'caddy', {
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'xdg-data'),
    XDG_CONFIG_HOME: join(dir, 'xdg-config'),
  })
  await Promise.all([listening(proxies.nginx, nginx, join(dir, 'nginx.log')), listening(proxies.caddy, caddy, join(dir, 'caddy.log'))])
}, 180_000)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)))
  await server?.close()
  await browser?.close()
  await new Promise<void>((r) => (echo ? echo.close(() => r()) : r()))
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  for (const d of [assets, dir]) if (d) rmSync(d, { recursive: true, force: true })
})

/** The API as an app on Gatehouse's origin would call it (over 127.0.0.1, Origin as the browser's). */
const api = () => new HttpClient(`http://127.0.0.1:${gatehousePort}/api/auth`, { origin: authOrigin })

async function account(name = 'Proxy User') {
  const client = api()
  const email = uniqueEmail('proxy')
  const r = await client.post<{ user: { id: string } }>('/sign-up/email', { name, email, password: PASSWORD })
  expect(r.status).toBe(200)
  return { client, email, id: r.body.user.id, cookie: () => client.jar.header() }
}

/** A request through a proxy as the test makes it: to 127.0.0.1, with the app's Host header. */
async function through(proxy: 'nginx' | 'caddy', path: string, headers: Record<string, string> = {}) {
  const r = await rawRequest(`http://127.0.0.1:${proxies[proxy]}${path}`, {
    headers: { host: `app.${DOMAIN}:${proxies[proxy]}`, ...headers },
  })
  let seen: { url: string; headers: Record<string, string> } | null = null
  if (r.status === 200 && r.headers['content-type'] === 'application/json') seen = JSON.parse(r.text)
  return { ...r, seen }
}

const remoteOf = (seen: { headers: Record<string, string> } | null) =>
  Object.fromEntries(
    Object.entries(seen?.headers ?? {})
      .filter(([k]) => k.startsWith('remote-'))
      .map(([k, v]) => [k, Buffer.from(v, 'latin1').toString('utf8')]),
  )

async function signInOnPage(page: Page, email: string) {
  await page.getByLabel(/^Email/).fill(email)
  await page.getByLabel(/^Password/).fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

const bodyJSON = async (page: Page) => JSON.parse((await page.locator('body').textContent()) ?? 'null')

describe.skipIf(Boolean(skipReason)).each(['nginx', 'caddy'] as const)('forward auth behind %s', (proxy) => {
  const appURL = (path: string) => `http://app.${DOMAIN}:${proxies[proxy]}${path}`

  it('not signed in → the hosted sign-in page (naming the app) → Chromium signs in → back at the app with Remote-*', async () => {
    const who = await account('Zoë Proxy')
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(appURL('/hello/world?x=1&y=two'))
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/sign-in')
      expect(new URL(page.url()).searchParams.get('returnTo')).toBe(appURL('/hello/world?x=1&y=two'))
      await expect.poll(() => page.getByTestId('for-app').textContent()).toContain(`app.${DOMAIN}`)
      await signInOnPage(page, who.email)
      await page.waitForURL(appURL('/hello/world?x=1&y=two'))
      const seen = await bodyJSON(page)
      expect(seen.url).toBe('/hello/world?x=1&y=two')
      expect(remoteOf(seen)).toEqual({
        'remote-user': who.email,
        'remote-email': who.email,
        'remote-name': 'Zoë Proxy',
        'remote-groups': 'user',
      })
      const cookie = (await context.cookies()).find((c) => c.name === 'better-auth.session_token')
      expect(cookie?.domain).toBe(`.${DOMAIN}`)
    } finally {
      await context.close()
    }
  })

  it('a client-sent Remote-User never reaches the app, on an allowed request nor on a bypass', async () => {
    const who = await account()
    const forged = { 'remote-user': 'root', 'remote-email': 'root@evil', 'remote-groups': 'admin', 'remote-name': 'Root' }
    const allowed = await through(proxy, '/x', { cookie: who.cookie(), ...forged })
    expect(allowed.status).toBe(200)
    expect(remoteOf(allowed.seen)).toEqual({
      'remote-user': who.email,
      'remote-email': who.email,
      'remote-name': 'Proxy User',
      'remote-groups': 'user',
    })
    for (const cookie of [undefined, who.cookie()]) {
      const bypass = await through(proxy, '/public/logo.png', { ...(cookie ? { cookie } : {}), ...forged })
      expect(bypass.status).toBe(200)
      expect(bypass.seen?.url).toBe('/public/logo.png')
      // Neither the client's values nor Caddy 2.6's literal placeholder.
      expect(remoteOf(bypass.seen)).toEqual({})
    }
  })

  it('not signed in: 302 for GET (nginx via the 401 Location), 401 for other methods on Caddy', async () => {
    const r = await through(proxy, '/a?b=1&c=2')
    expect(r.status).toBe(302)
    expect(r.headers.location).toBe(`${authOrigin}/api/auth/ui/sign-in?returnTo=${encodeURIComponent(appURL('/a?b=1&c=2'))}`)
    if (proxy === 'caddy') {
      const post = await rawRequest(`http://127.0.0.1:${proxies.caddy}/a`, {
        method: 'POST',
        headers: { host: `app.${DOMAIN}:${proxies.caddy}` },
      })
      expect(post.status).toBe(401)
    }
  })

  it('role, organization and path rules', async () => {
    const who = await account()
    expect((await through(proxy, '/admin/panel', { cookie: who.cookie() })).status).toBe(403)
    expect((await through(proxy, '/org', { cookie: who.cookie() })).status).toBe(403)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: who.id, role: 'admin' }, null)
    const admin = await through(proxy, '/admin/panel', { cookie: who.cookie() })
    expect(admin.status).toBe(200)
    expect(remoteOf(admin.seen)['remote-groups']).toBe('admin')
    const org = await who.client.post('/organization/create', { name: 'Proxy Org', slug: `proxy-org-${proxy}` })
    expect(org.status).toBe(200)
    const inOrg = await through(proxy, '/org/x', { cookie: who.cookie() })
    expect(inOrg.status).toBe(200)
    expect(remoteOf(inOrg.seen)['remote-groups']).toBe(`admin,proxy-org-${proxy},proxy-org-${proxy}:owner,proxy-org-${proxy}/Proxy Org`)
  })

  it('sign-out and a ban take effect on the next request', async () => {
    const a = await account()
    const cookie = a.cookie()
    expect((await through(proxy, '/x', { cookie })).status).toBe(200)
    expect((await a.client.post('/sign-out', {})).status).toBe(200)
    expect((await through(proxy, '/x', { cookie })).status).toBe(302)

    const b = await account()
    expect((await through(proxy, '/x', { cookie: b.cookie() })).status).toBe(200)
    await banUser(server.gatehouse.ctx, systemActor('cli'), { userId: b.id }, null)
    expect((await through(proxy, '/x', { cookie: b.cookie() })).status).toBe(302)
  })

  it('returnTo to a foreign host is refused: the page shows its signed-in state', async () => {
    const who = await account()
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      const signIn = new URL(`${authOrigin}/api/auth/ui/sign-in`)
      signIn.searchParams.set('returnTo', 'http://evil.localtest:9/steal')
      await page.goto(signIn.href)
      await signInOnPage(page, who.email)
      await page.getByTestId('signed-in').waitFor()
      expect(new URL(page.url()).host).toBe(`auth.${DOMAIN}:${gatehousePort}`)
      expect(await page.getByTestId('for-app').count()).toBe(0)
    } finally {
      await context.close()
    }
  })

  it('the two-factor policy sends an enrolled user through the second step, then to the app', async () => {
    const who = await account('Mfa Proxy')
    const enable = await who.client.post<{ totpURI: string }>('/two-factor/enable', { password: PASSWORD })
    expect(enable.status).toBe(200)
    const totp = URI.parse(enable.body.totpURI) as TOTP
    expect((await who.client.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }) })).status).toBe(200)
    // That session enrolled but did not sign in through the step: 401 → the sign-in page.
    expect((await through(proxy, '/mfa', { cookie: who.cookie() })).status).toBe(302)
    server.clock.advanceSeconds(30)

    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(appURL('/mfa/reports'))
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/sign-in')
      await signInOnPage(page, who.email)
      await page.getByRole('heading', { level: 1, name: 'Two-step verification' }).waitFor()
      await page.getByLabel(/^Verification code/).fill(totp.generate({ timestamp: server.clock.now() }))
      await page.getByRole('button', { name: 'Verify' }).click()
      await page.waitForURL(appURL('/mfa/reports'))
      const seen = await bodyJSON(page)
      expect(remoteOf(seen)['remote-email']).toBe(who.email)
    } finally {
      await context.close()
    }
  })
})
