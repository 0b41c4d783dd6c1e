import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type TOTP, URI } from 'otpauth'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { banUser, setRole, systemActor } from '../../../server/features/admin/index.js'
import { CADDY_TEMPLATE, NGINX_TEMPLATE } from '../../../server/features/forward-auth/snippets.js'
import { launchBrowser } from '../../helpers/browser.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { HttpClient, rawRequest, uniqueEmail } from '../../helpers/http.js'
import { markVerified } from '../../helpers/members.js'
import { serverLog, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { buildHostedPages } from '../../helpers/hosted.js'

/**
 * Forward auth behind the real proxies (issues 28 and 37), as the docs hand it out: the nginx and
 * Caddy blocks are taken verbatim from docs/FORWARD-AUTH.md (only the placeholders the docs name are
 * filled) and run under Debian's nginx (auth_request) and Caddy (forward_auth), each started here on
 * loopback with its own config in a temporary folder, in front of a WSGI app (Python's wsgiref, the
 * way a CGI/WSGI-style app reads identity: `HTTP_REMOTE_USER` from `Remote-User` and `Remote_User`
 * alike) that echoes what it received. Chromium signs in and out on the hosted pages.
 *
 * Host names and cookies on loopback: everything listens on 127.0.0.1 (different ports), and
 * Chromium maps `*.example.lan` to it (--host-resolver-rules). Gatehouse is
 * `http://auth.example.lan:<port>` with the documented `advanced.crossSubDomainCookies: { enabled,
 * domain: 'example.lan' }`, the protected apps `app.example.lan:<nginx>` and `app.example.lan:<caddy>`:
 * the session cookie carries `Domain=example.lan`, so the browser sends it to the apps exactly as on
 * a LAN (cookies ignore ports). Requests made by the test itself go to 127.0.0.1 with the Host
 * header the proxy expects.
 */

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p))
const CADDY = ['/usr/bin/caddy', '/usr/local/bin/caddy'].find((p) => existsSync(p))
const PYTHON = ['/usr/bin/python3'].find((p) => existsSync(p))
const missing = [!NGINX && 'nginx', !CADDY && 'caddy', !PYTHON && 'python3'].filter(Boolean).join(' and ')
const skipReason = missing ? `${missing} not installed (apt-get install -y nginx caddy python3; .ci/run does it)` : undefined
warnSkipped('forward auth behind real nginx and Caddy (tests/features/forward-auth/forward-auth-proxies.test.ts)', skipReason)

const root = resolve(import.meta.dirname, '../../..')
const PASSWORD = 'correct horse battery'
const DOMAIN = 'example.lan'

let dir = ''
let assets = ''
let server: TestServer
let browser: Browser
let echoPort = 0
let gatehousePort = 0
let authOrigin = ''
const children: ChildProcess[] = []
const proxies: Record<'nginx' | 'caddy', number> = { nginx: 0, caddy: 0 }

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

/** The fenced block of docs/FORWARD-AUTH.md in `language`, verbatim (there is exactly one). */
function docsBlock(language: string): string {
  const markdown = readFileSync(join(root, 'docs', 'FORWARD-AUTH.md'), 'utf8')
  const blocks = [...markdown.matchAll(new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1] as string)
  if (blocks.length !== 1) throw new Error(`docs/FORWARD-AUTH.md has ${blocks.length} ${language} blocks`)
  return blocks[0] as string
}

/** The one WSGI app behind both proxies: what its environ says about identity, and every path it was asked for. */
const WSGI_APP = `import json, sys, threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIServer, WSGIRequestHandler, make_server

seen = []

def app(environ, start_response):
    path = environ.get('PATH_INFO', '')
    if path == '/__seen':
        body = json.dumps(seen).encode()
    else:
        query = environ.get('QUERY_STRING', '')
        seen.append(path)
        body = json.dumps({
            'url': path + ('?' + query if query else ''),
            'remote': {k: v for k, v in environ.items() if k.startswith('HTTP_REMOTE')},
        }).encode()
    start_response('200 OK', [('Content-Type', 'application/json'), ('Content-Length', str(len(body)))])
    return [body]

class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass

class Threading(ThreadingMixIn, WSGIServer):
    daemon_threads = True

server = make_server('127.0.0.1', int(sys.argv[1]), app, server_class=Threading, handler_class=Quiet)
server.serve_forever()
`

function nginxConfig(port: number): string {
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
${docsBlock('nginx')
  .replaceAll('GATEHOUSE_API', `http://127.0.0.1:${gatehousePort}/api/auth`)
  .replaceAll('LISTEN', `127.0.0.1:${port}`)
  .replaceAll('SERVER_NAME', `app.${DOMAIN}`)
  .replaceAll('APP_UPSTREAM', `http://127.0.0.1:${echoPort}`)}
}
`
}

function caddyConfig(port: number): string {
  return `{
	admin off
	auto_https off
	default_bind 127.0.0.1
	storage file_system ${join(dir, 'caddy-storage')}
}
${docsBlock('caddyfile')
  .replaceAll('SITE_ADDRESS', `http://app.${DOMAIN}:${port}`)
  .replaceAll('GATEHOUSE_UPSTREAM', `127.0.0.1:${gatehousePort}`)
  .replaceAll('APP_UPSTREAM', `127.0.0.1:${echoPort}`)
  .replaceAll('BASE_PATH', '/api/auth')}
`
}

beforeAll(async () => {
  if (skipReason) return
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-proxies-'))
  ;[assets, browser] = await Promise.all([buildHostedPages(), launchBrowser({ args: [`--host-resolver-rules=MAP *.${DOMAIN} 127.0.0.1`] })])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  gatehousePort = await freePort()
  authOrigin = `http://auth.${DOMAIN}:${gatehousePort}`
  // The organizations the rules name are created by the tests (an administrator): warned at start.
  serverLog.allowWarning(/^groups: forwardAuth\.rules\[3\]\.subject\.organizations requires "proxy-org-(nginx|caddy)"/)
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
          // The docs' own example: a status page anyone may see.
          { domain: `status.${DOMAIN}`, policy: 'bypass' },
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
  echoPort = await freePort()
  writeFileSync(join(dir, 'app.py'), WSGI_APP)
  const app = start(PYTHON as string, [join(dir, 'app.py'), String(echoPort)], 'app')

  proxies.nginx = await freePort()
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(proxies.nginx))
  const nginx = start(NGINX as string, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'nginx-error.log')], 'nginx')
  proxies.caddy = await freePort()
  writeFileSync(join(dir, 'Caddyfile'), caddyConfig(proxies.caddy))
  const caddy = start(CADDY as string, ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], 'caddy', {
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'xdg-data'),
    XDG_CONFIG_HOME: join(dir, 'xdg-config'),
  })
  await Promise.all([
    listening(echoPort, app, join(dir, 'app.log')),
    listening(proxies.nginx, nginx, join(dir, 'nginx.log')),
    listening(proxies.caddy, caddy, join(dir, 'caddy.log')),
  ])
}, 180_000)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)))
  await server?.close()
  await browser?.close()
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
  await markVerified(server, r.body.user.id)
  return { client, email, id: r.body.user.id, cookie: () => client.jar.header() }
}

/** A request through a proxy as the test makes it: to 127.0.0.1, with the app's Host header. */
async function through(proxy: 'nginx' | 'caddy', path: string, headers: Record<string, string> = {}) {
  const r = await rawRequest(`http://127.0.0.1:${proxies[proxy]}${path}`, {
    headers: { host: `app.${DOMAIN}:${proxies[proxy]}`, ...headers },
  })
  let seen: Seen | null = null
  if (r.status === 200 && r.headers['content-type'] === 'application/json') seen = JSON.parse(r.text)
  return { ...r, seen }
}

/** What the WSGI app answered: the URL it was asked for and its environ's HTTP_REMOTE_* values. */
interface Seen {
  url: string
  remote: Record<string, string>
}

/** The app's HTTP_REMOTE_USER … as `remote-user` …, decoded (wsgiref reads header bytes as Latin-1). */
const remoteOf = (seen: Seen | null) =>
  Object.fromEntries(
    Object.entries(seen?.remote ?? {}).map(([k, v]) => [
      k.slice(5).toLowerCase().replaceAll('_', '-'),
      Buffer.from(v, 'latin1').toString('utf8'),
    ]),
  )

/** Every path the app was asked for so far (asked of the app directly, not through a proxy). */
const appSaw = async (): Promise<string[]> => JSON.parse((await rawRequest(`http://127.0.0.1:${echoPort}/__seen`, {})).text)

async function signInOnPage(page: Page, email: string) {
  await page.getByLabel(/^Email/).fill(email)
  await page.getByLabel(/^Password/).fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

const bodyJSON = async (page: Page) => JSON.parse((await page.locator('body').textContent()) ?? 'null')

describe('the docs are one text', () => {
  it('the Markdown blocks, the files under docs/forward-auth/ and the panel snippets are the same text', () => {
    expect(docsBlock('nginx')).toBe(readFileSync(join(root, 'docs', 'forward-auth', 'nginx-server.conf'), 'utf8'))
    expect(docsBlock('caddyfile')).toBe(readFileSync(join(root, 'docs', 'forward-auth', 'Caddyfile'), 'utf8'))
    expect(docsBlock('nginx')).toBe(NGINX_TEMPLATE)
    expect(docsBlock('caddyfile')).toBe(CADDY_TEMPLATE)
    // What the docs promise of the text itself.
    expect(NGINX_TEMPLATE).toContain('listen LISTEN default_server;')
    expect(NGINX_TEMPLATE).toContain('return 444;')
    expect(NGINX_TEMPLATE).toContain('X-Original-URL $scheme://$server_name:$server_port$request_uri;')
    expect(NGINX_TEMPLATE).not.toContain('$http_host')
    for (const name of ['User', 'Email', 'Name', 'Groups']) {
      expect(CADDY_TEMPLATE).toContain(`request_header -Remote-${name}\n`)
      expect(CADDY_TEMPLATE).toContain(`request_header -Remote_${name}\n`)
    }
  })
})

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

  it('two-factor enforcement during the grace: the sign-in goes through the enrolment step (time left, Skip for now) and on to the app; a foreign returnTo there gets no way out', async () => {
    // Issue 49 §10: the rule's roles (admin here) must enrol within three days of their first sign-in.
    server.gatehouse.config.update({ twoFactor: { enforcement: { roles: ['admin'], gracePeriod: 3 * 86_400 } } })
    const context = await browser.newContext({ locale: 'en-GB' })
    const page = await context.newPage()
    try {
      const who = await account('Enid Proxy')
      await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: who.id, role: 'admin' }, null)
      const path = `/enrol/${proxy}?x=1`
      await page.goto(appURL(path))
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/sign-in')
      await signInOnPage(page, who.email)
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/account/two-factor')
      const step = new URL(page.url())
      expect(step.searchParams.get('enrol')).toBe('1')
      expect(step.searchParams.get('returnTo')).toBe(appURL(path))
      await expect.poll(() => page.getByTestId('enrolment-required').textContent()).toContain('(3 days left)')
      expect(await appSaw()).not.toContain(`/enrol/${proxy}`)
      await page.getByRole('button', { name: 'Skip for now' }).click()
      await page.waitForURL(appURL(path))
      expect(remoteOf(await bodyJSON(page))['remote-email']).toBe(who.email)

      // The step keeps to the returnTo the hosted pages accept: a host no rule names gets no Skip.
      const answered = page.waitForResponse((r) => r.url().includes('/forward-auth/return-to?'))
      await page.goto(`${authOrigin}/api/auth/ui/account/two-factor?enrol=1&returnTo=${encodeURIComponent('http://evil.test:9/steal')}`)
      await page.getByTestId('enrolment-required').waitFor()
      expect(await (await answered).json()).toEqual({ url: null, app: null })
      // React has committed what that answer gave (two frames later).
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
      expect(await page.getByRole('button', { name: 'Skip for now' }).count()).toBe(0)
    } finally {
      server.gatehouse.config.update({ twoFactor: { enforcement: null } })
      await context.close()
    }
  })

  it('an overdue enrolment (grace over) is sent by the proxy to the enrolment step with its returnTo, the app never asked; enrolled, the app sees the person', async () => {
    server.gatehouse.config.update({ twoFactor: { enforcement: { roles: ['admin'], gracePeriod: 0 } } })
    try {
      const who = await account('Otto Overdue')
      await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: who.id, role: 'admin' }, null)
      // A sign-in past the grace still opens a session, to enrol with (issue 49 §10).
      const late = api()
      const signedIn = await late.post<{ twoFactorEnrollment?: { overdue?: boolean } }>('/sign-in/email', {
        email: who.email,
        password: PASSWORD,
      })
      expect(signedIn.body.twoFactorEnrollment?.overdue).toBe(true)
      const path = `/overdue/${proxy}?x=1`
      const refused = await through(proxy, path, { cookie: late.jar.header() })
      expect(refused.status).toBe(302)
      expect(refused.headers.location).toBe(
        `${authOrigin}/api/auth/ui/account/two-factor?enrol=1&returnTo=${encodeURIComponent(appURL(path))}`,
      )
      expect(await appSaw()).not.toContain(`/overdue/${proxy}`)
      // Enrolled (the step's own calls), the re-issued session reaches the app.
      const enable = await late.post<{ totpURI: string }>('/two-factor/enable', { password: PASSWORD })
      expect(enable.status).toBe(200)
      const totp = URI.parse(enable.body.totpURI) as TOTP
      expect((await late.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }) })).status).toBe(200)
      expect((await through(proxy, path, { cookie: late.jar.header() })).status).toBe(200)
      expect(await appSaw()).toContain(`/overdue/${proxy}`)
    } finally {
      server.gatehouse.config.update({ twoFactor: { enforcement: null } })
    }
  })

  it('an unverified sign-up (identity.requireVerifiedEmail, the default) is sent to the verify-email page, the app never asked; verified, the app sees it', async () => {
    const client = api()
    const email = uniqueEmail('unverified')
    const up = await client.post<{ user: { id: string; emailVerified: boolean } }>('/sign-up/email', {
      name: 'Una Proxy',
      email,
      password: PASSWORD,
    })
    expect(up.status).toBe(200)
    expect(up.body.user.emailVerified).toBe(false)
    const path = `/unverified/${proxy}`
    const refused = await through(proxy, path, { cookie: client.jar.header() })
    expect(refused.status).toBe(302)
    expect(refused.headers.location).toBe(`${authOrigin}/api/auth/ui/verify-email?returnTo=${encodeURIComponent(appURL(path))}`)
    expect(await appSaw()).not.toContain(path)

    // In Chromium: signed in on the hosted page, the app sends the person to verify their address,
    // with the resend button; once verified, the same browser reaches the app.
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(appURL(path))
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/sign-in')
      await signInOnPage(page, email)
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/verify-email')
      expect(new URL(page.url()).searchParams.get('returnTo')).toBe(appURL(path))
      await page.getByRole('heading', { name: 'Verify your email' }).waitFor()
      await expect.poll(() => page.getByTestId('no-verification-link').textContent()).toContain(`Your address ${email} is not verified yet`)
      await page.getByRole('button', { name: 'Send a new verification link' }).waitFor()
      expect(await appSaw()).not.toContain(path)

      await markVerified(server, up.body.user.id)
      await page.goto(appURL(path))
      await page.waitForURL(appURL(path))
      expect(remoteOf(await bodyJSON(page))['remote-email']).toBe(email)
    } finally {
      await context.close()
    }
  })

  it('a client-sent identity, in either spelling, never reaches the app: allowed, bypass, anonymous or signed in', async () => {
    const who = await account()
    // Dashes and underscores: a WSGI app reads both Remote-User and Remote_User as HTTP_REMOTE_USER.
    const forged = {
      'remote-user': 'root',
      remote_user: 'admin',
      'remote-email': 'root@evil',
      remote_email: 'admin@evil',
      'remote-groups': 'admin',
      remote_groups: 'admin',
      'remote-name': 'Root',
      remote_name: 'Admin',
    }
    const allowed = await through(proxy, '/x', { cookie: who.cookie(), ...forged })
    expect(allowed.status).toBe(200)
    expect(remoteOf(allowed.seen)).toEqual({
      'remote-user': who.email,
      'remote-email': who.email,
      'remote-name': 'Proxy User',
      'remote-groups': 'user',
    })
    for (const cookie of [undefined, who.cookie()]) {
      for (const path of ['/public/logo.png', '/public']) {
        const bypass = await through(proxy, path, { ...(cookie ? { cookie } : {}), ...forged })
        expect(bypass.status).toBe(200)
        expect(bypass.seen?.url).toBe(path)
        // Neither the client's values nor Caddy 2.6's literal placeholder.
        expect(remoteOf(bypass.seen)).toEqual({})
      }
      // The docs' bypass host by its own name: nothing of the client's either (these proxies serve
      // only app.example.lan: nginx closes the connection, Caddy answers empty).
      const status = await rawRequest(`http://127.0.0.1:${proxies[proxy]}/`, {
        headers: { host: `status.${DOMAIN}:${proxies[proxy]}`, ...(cookie ? { cookie } : {}), ...forged },
      }).catch(() => null)
      if (status?.status === 200 && status.headers['content-type'] === 'application/json')
        expect(remoteOf(JSON.parse(status.text))).toEqual({})
    }
  })

  it('the Host trick: an anonymous client naming the bypass host never reaches the protected app', async () => {
    const path = `/secret-${proxy}-${Date.now().toString(36)}`
    const tries: Array<{ path: string; host: string }> = [
      { path, host: `status.${DOMAIN}` },
      { path, host: `status.${DOMAIN}:${proxies[proxy]}` },
      { path, host: 'unknown.invalid' },
      // The absolute form of the request line names the host instead of the header.
      { path: `http://status.${DOMAIN}${path}`, host: `app.${DOMAIN}:${proxies[proxy]}` },
    ]
    for (const attempt of tries) {
      const answer = await rawRequest(`http://127.0.0.1:${proxies[proxy]}${attempt.path}`, {
        headers: { host: attempt.host, remote_user: 'admin', 'remote-groups': 'admin' },
      }).catch((error: NodeJS.ErrnoException) => ({ status: 0, headers: {}, text: error.code ?? error.message }))
      if (proxy === 'nginx') {
        // The documented default server closes the connection without an answer (444).
        expect(answer.status).toBe(0)
      } else {
        // Caddy serves a site only for its own name: an empty answer, never the app's.
        expect(answer.status === 0 || answer.status === 200 || answer.status === 302).toBe(true)
        expect(answer.text).not.toContain('"url"')
      }
    }
    expect((await appSaw()).filter((p) => p.startsWith('/secret-'))).toEqual([])
    // The same request with the app's own name and no session: to the sign-in page.
    expect((await through(proxy, path)).status).toBe(302)
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
    expect(remoteOf(inOrg.seen)['remote-groups']).toBe(`admin,proxy-org-${proxy},proxy-org-${proxy}:owner,proxy-org-${proxy}/proxy-org`)
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

  it('the documented cookie domain: signed in on auth.example.lan, the app sees the user; its sign-out link ends it everywhere', async () => {
    const who = await account('Out Going')
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(appURL('/dashboard'))
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/sign-in')
      await signInOnPage(page, who.email)
      await page.waitForURL(appURL('/dashboard'))
      expect(remoteOf(await bodyJSON(page))['remote-email']).toBe(who.email)
      const cookies = await context.cookies()
      expect(cookies.find((c) => c.name === 'better-auth.session_token')?.domain).toBe(`.${DOMAIN}`)

      // The app's "Sign out" link, as docs/FORWARD-AUTH.md writes it.
      await page.goto(`${authOrigin}/api/auth/ui/sign-out?returnTo=${encodeURIComponent(appURL('/dashboard'))}`)
      await page.getByRole('button', { name: 'Sign out' }).click()
      // Back at the app, which no longer lets the browser in: the sign-in page for it.
      await page.waitForURL((u) => u.pathname === '/api/auth/ui/sign-in' && u.searchParams.get('returnTo') === appURL('/dashboard'))
      expect((await context.cookies()).find((c) => c.name === 'better-auth.session_token')).toBeUndefined()
      // The app's own request with the old browser's cookies: refused too.
      expect(
        (
          await through(proxy, '/dashboard', {
            cookie: `better-auth.session_token=${cookies.find((c) => c.name === 'better-auth.session_token')?.value}`,
          })
        ).status,
      ).toBe(302)
    } finally {
      await context.close()
    }
  })

  it('returnTo to a foreign host is refused: the page shows its signed-in state', async () => {
    const who = await account()
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      // Names that merely end with (or start with) the rule's domain are not under it.
      for (const evil of [`http://evil${DOMAIN}:9/`, `http://app.${DOMAIN}.evil.test:9/`, `http://xstatus.${DOMAIN}.evil.test/`]) {
        const answer = await rawRequest(
          `http://127.0.0.1:${gatehousePort}/api/auth/forward-auth/return-to?url=${encodeURIComponent(evil)}`,
          {},
        )
        expect(JSON.parse(answer.text)).toEqual({ url: null, app: null })
      }
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

describe.skipIf(Boolean(skipReason))('the hosted pages around forward auth', () => {
  it('opened while signed in without returnTo, the sign-in page shows the signed-in state, whose Sign out signs out', async () => {
    const who = await account('Already Here')
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(`${authOrigin}/api/auth/ui/sign-in`)
      await signInOnPage(page, who.email)
      await page.getByTestId('signed-in').waitFor()
      // Opened again: no form, the signed-in state naming the user.
      await page.goto(`${authOrigin}/api/auth/ui/sign-in`)
      await expect.poll(() => page.getByTestId('signed-in').textContent()).toContain('Signed in as Already Here.')
      expect(await page.getByLabel(/^Password/).count()).toBe(0)
      await page.getByTestId('sign-out-button').click()
      await page.getByTestId('signed-out').waitFor()
      expect((await context.cookies()).find((c) => c.name === 'better-auth.session_token')).toBeUndefined()
      // Signed out: the sign-in page is a form again.
      await page.goto(`${authOrigin}/api/auth/ui/sign-in`)
      await page.getByLabel(/^Password/).waitFor()
    } finally {
      await context.close()
    }
  })

  it('a relative returnTo to Gatehouse’s own base path is followed; a sign-out returnTo to a foreign host is not', async () => {
    const who = await account()
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(`${authOrigin}/api/auth/ui/sign-in?returnTo=${encodeURIComponent('/api/auth/ui/account/apps')}`)
      await signInOnPage(page, who.email)
      await page.waitForURL(`${authOrigin}/api/auth/ui/account/apps`)
      await page.goto(`${authOrigin}/api/auth/ui/sign-out?returnTo=${encodeURIComponent('http://evil.test:9/')}`)
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByTestId('signed-out').waitFor()
      expect(new URL(page.url()).host).toBe(`auth.${DOMAIN}:${gatehousePort}`)
    } finally {
      await context.close()
    }
  })
})
