/**
 * Several real `gatehouse serve` processes on one PostgreSQL database (issue 14's guarantees):
 * each with its own data directory, the same secret and the same public base URL, as behind a load
 * balancer. Requests name the instance they go to; cookies are carried by hand between them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { type Answer, HttpClient, uniqueEmail } from './http.js'
import { type RunningServer, runCli, startServerProcess } from './process.js'

/** The public origin every instance believes it is reached at (one load balancer in front). */
export const PUBLIC_ORIGIN = 'http://gatehouse.test'
export const SHARED_SECRET = 'multi-instance-secret-0123456789abcdef'

export interface Instance {
  name: string
  /** The API base on this instance's own port. */
  base: string
  /** The control panel's API (POST /panel/api/<op> with the bearer token). */
  panel: { origin: string; token: string }
  dataDir: string
  server: RunningServer
  /** A client on this instance sending `cookie` (a session taken on any instance). */
  client(cookie?: string, headers?: Record<string, string>): HttpClient
  panelCall<T = unknown>(op: string, input?: unknown): Promise<Answer<T>>
  stop(signal?: NodeJS.Signals): Promise<void>
}

export interface InstanceOptions {
  databaseUrl: string
  /** Per-process overrides (written to a --config file). */
  config?: Record<string, unknown>
  redisUrl?: string
  smtpUrl?: string
}

export async function startInstance(name: string, options: InstanceOptions): Promise<Instance> {
  const dataDir = mkdtempSync(join(tmpdir(), `gatehouse-${name}-`))
  const configFile = join(dataDir, 'overrides.json')
  writeFileSync(configFile, JSON.stringify(options.config ?? {}))
  const args = ['--port', '0', '--panel-port', '0', '--data-dir', dataDir, '--base-url', PUBLIC_ORIGIN, '--config', configFile]
  args.push('--database-url', options.databaseUrl)
  if (options.redisUrl) args.push('--redis-url', options.redisUrl)
  if (options.smtpUrl) args.push('--smtp-url', options.smtpUrl)
  const server = await startServerProcess(args, { GATEHOUSE_SECRET: SHARED_SECRET }, 30_000)
  // The panel line follows the listening line.
  const deadline = Date.now() + 10_000
  const panelLine = () => /Panel recovery link: (http:\/\/[^/\s]+)\/\?token=(\S+)/.exec(server.output())
  let panelMatch = panelLine()
  while (!panelMatch && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20))
    panelMatch = panelLine()
  }
  if (!panelMatch) throw new Error(`${name}: no control panel line:\n${server.output()}`)
  const panel = { origin: panelMatch[1] as string, token: panelMatch[2] as string }
  const base = server.url
  return {
    name,
    base,
    panel,
    dataDir,
    server,
    client(cookie, headers = {}) {
      return new HttpClient(base, { origin: PUBLIC_ORIGIN, headers: { ...(cookie ? { cookie } : {}), ...headers } })
    },
    async panelCall<T>(op: string, input: unknown = {}) {
      const response = await fetch(`${panel.origin}/panel/api/${op}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${panel.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      })
      const text = await response.text()
      return { status: response.status, body: (text ? JSON.parse(text) : null) as T, text, headers: response.headers, cookies: [] }
    },
    async stop(signal = 'SIGTERM') {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill(signal)
        const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000)
        await server.exited
        clearTimeout(timer)
      }
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** The session cookie header from an answer's Set-Cookie (name=value pairs). */
export const cookieOf = (answer: Answer): string =>
  answer.cookies
    .map((c) => c.split(';')[0])
    .filter((c) => !c?.endsWith('='))
    .join('; ')

/** Retries `check` (bounded) until it returns true: for what another instance applies asynchronously. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** The password of every user the multi-instance tests sign up. */
export const MULTI_PASSWORD = 'correct horse battery'

export interface SignedUp {
  email: string
  id: string
  /** Its session cookie, good on every instance. */
  cookie: string
}

/** Signs a user up on `on` (200 expected). */
export async function signUpOn(on: Instance, email = uniqueEmail(), options: { verified?: boolean } = {}): Promise<SignedUp> {
  const res = await on.client().post<{ user: { id: string } }>('/sign-up/email', { email, password: MULTI_PASSWORD, name: 'Multi' })
  expect(res.status).toBe(200)
  // Verified as an administrator marks it: the faces vouch only for verified people (identity.requireVerifiedEmail).
  if (options.verified) expect((await on.panelCall('users.verifyEmail', { userId: res.body.user.id })).status).toBe(200)
  return { email, id: res.body.user.id, cookie: cookieOf(res) }
}

/** Signs `email` in on `on` (200 expected) and returns the session cookie. */
export async function signInOn(on: Instance, email: string): Promise<string> {
  const res = await on.client().post('/sign-in/email', { email, password: MULTI_PASSWORD })
  expect(res.status).toBe(200)
  return cookieOf(res)
}

/** The user get-session answers on `on` for `cookie` (200 expected), or null. */
export async function sessionUserOn(on: Instance, cookie: string): Promise<{ id: string; role?: string | null } | null> {
  const res = await on.client(cookie).get<{ user: { id: string; role?: string | null } } | null>('/get-session')
  expect(res.status).toBe(200)
  return res.body?.user ?? null
}

/** An administrator created through the CLI on the shared database, signed in on `on`: its cookie. */
export async function cliAdminOn(on: Instance, databaseUrl: string): Promise<string> {
  const email = uniqueEmail('admin')
  const created = await runCli(
    ['user', 'create', '--email', email, '--password', MULTI_PASSWORD, '--name', 'Admin', '--role', 'admin', '--data-dir', on.dataDir],
    { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET: SHARED_SECRET },
  )
  expect(created.code).toBe(0)
  return await signInOn(on, email)
}
