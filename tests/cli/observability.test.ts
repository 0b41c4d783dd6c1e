import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { warnSkipped } from '../helpers/engines.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { parseScrape } from '../helpers/metrics.js'
import { type RunningServer, startServerProcess } from '../helpers/process.js'

/**
 * Issue 32 through the built bundle (dist/server/main.mjs, prom-client bundled in), started as
 * `gatehouse serve` is: the metrics listener on its own port, promtool's check of a scrape taken
 * after every sign-in method ran, and JSON log lines carrying the ids the answers gave.
 */

const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p))
const noPromtool = promtool ? undefined : "promtool is not installed (Debian package 'prometheus'; .ci/run installs it)"
warnSkipped('promtool check metrics (tests/cli/observability.test.ts)', noPromtool)

const PASSWORD = 'password-1234'
let dir: string
let server: RunningServer
let api: string
let metricsURL: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-obs-'))
  const config = join(dir, 'extra.json')
  writeFileSync(config, JSON.stringify({ twoFactor: { enabled: true }, username: { enabled: true }, passkey: { enabled: true } }))
  server = await startServerProcess([
    '--port',
    '0',
    '--data-dir',
    join(dir, 'data'),
    '--rate-limit',
    'off',
    '--config',
    config,
    '--metrics-address',
    '127.0.0.1:0',
    '--log-format',
    'json',
    '--log-level',
    'debug',
  ])
  // startServerProcess returns at the first "listening on" line, which may be the metrics
  // listener's: wait (bounded) for the API's, a JSON string whose URL ends before its quote.
  let apiLine: RegExpExecArray | null = null
  for (let i = 0; i < 100 && !apiLine; i++) {
    apiLine = /API listening on (http:\/\/[^"\s]+)/.exec(server.output())
    if (!apiLine) await new Promise((r) => setTimeout(r, 50))
  }
  if (!apiLine?.[1]) throw new Error(`no API listening line in:\n${server.output()}`)
  api = apiLine[1]
  const metricsLine = /Metrics listening on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(server.output())
  if (!metricsLine?.[1]) throw new Error(`no metrics line in:\n${server.output()}`)
  metricsURL = metricsLine[1]
})

afterAll(async () => {
  server?.child.kill('SIGTERM')
  await server?.exited
  rmSync(dir, { recursive: true, force: true })
})

/** Every line the server wrote, parsed: each must be one JSON object. */
function logLines(): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>
      } catch {
        throw new Error(`a log line is not JSON: ${line}`)
      }
    })
}

describe('observability through the built server', () => {
  it('serves /metrics on the metrics port only', async () => {
    expect(new URL(metricsURL).port).not.toBe(new URL(api).port)
    expect((await fetch(metricsURL)).status).toBe(200)
    expect((await fetch(`${new URL(api).origin}/metrics`)).status).toBe(404)
    expect((await fetch(`${api}/metrics`)).status).toBe(404)
  })

  it('counts every sign-in method, and promtool accepts the scrape', async () => {
    const origin = new URL(api).origin
    const before = parseScrape(await (await fetch(metricsURL)).text())
    // email and username: a success and wrong credentials each.
    const email = uniqueEmail('obs')
    const owner = new HttpClient(api, { origin })
    expect((await owner.post('/sign-up/email', { name: 'Obs', email, password: PASSWORD, username: `obs${Date.now()}` })).status).toBe(200)
    const username = ((await owner.get<{ user: { username: string } }>('/get-session')).body as { user: { username: string } }).user
      .username
    expect((await new HttpClient(api).post('/sign-in/email', { email, password: PASSWORD })).status).toBe(200)
    expect((await new HttpClient(api).post('/sign-in/email', { email, password: 'wrong-password' })).status).toBe(401)
    expect((await new HttpClient(api).post('/sign-in/username', { username, password: PASSWORD })).status).toBe(200)
    expect((await new HttpClient(api).post('/sign-in/username', { username, password: 'wrong-password' })).status).toBe(401)
    // two-factor: enrolled with TOTP, a sign-in asks the second factor, a backup code completes it.
    const enable = await owner.post<{ totpURI: string; backupCodes: string[] }>('/two-factor/enable', { password: PASSWORD })
    expect(enable.status).toBe(200)
    const code = (URI.parse(enable.body.totpURI) as TOTP).generate()
    expect((await owner.post('/two-factor/verify-totp', { code })).status).toBe(200)
    const second = new HttpClient(api)
    expect((await second.post('/sign-in/email', { email, password: PASSWORD })).body).toMatchObject({ twoFactorRedirect: true })
    expect((await second.post('/two-factor/verify-backup-code', { code: enable.body.backupCodes[0] })).status).toBe(200)
    // passkey: an assertion for a credential nobody registered.
    const stranger = new HttpClient(api)
    await stranger.get('/passkey/generate-authenticate-options')
    const passkey = await stranger.post<{ code: string }>('/passkey/verify-authentication', {
      response: { id: 'no-such-credential', response: {} },
    })
    expect([passkey.status, passkey.body.code]).toEqual([401, 'PASSKEY_NOT_FOUND'])
    // social: a callback whose state nobody issued.
    expect((await new HttpClient(api).get('/callback/github?state=forged&code=abc')).status).toBe(302)

    const text = await (await fetch(metricsURL)).text()
    const after = parseScrape(text)
    const signIns = (labels: Record<string, string>) =>
      after.value('gatehouse_sign_ins_total', labels) - before.value('gatehouse_sign_ins_total', labels)
    // The sign-up's own sign-in counts too (the pipeline reports every sign-in), then the sign-in.
    expect(signIns({ method: 'email', outcome: 'success' })).toBe(2)
    expect(signIns({ method: 'email', outcome: 'wrong-credentials' })).toBe(1)
    expect(signIns({ method: 'email', outcome: 'second-factor' })).toBe(1)
    expect(signIns({ method: 'username', outcome: 'success' })).toBe(1)
    expect(signIns({ method: 'username', outcome: 'wrong-credentials' })).toBe(1)
    expect(signIns({ method: 'two-factor', outcome: 'success' })).toBe(1)
    expect(signIns({ method: 'passkey', outcome: 'wrong-credentials' })).toBe(1)
    expect(signIns({ method: 'social', outcome: 'refused' })).toBe(1)
    expect(text).not.toContain(email)
    expect(text).not.toContain(username)

    if (!promtool) return
    // promtool reads the exposition from stdin; exit 0 means no error (lint warnings are printed).
    const checked = execFileSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] })
    expect(checked).toBe('')
  })

  it('writes JSON lines that carry the request id the answer gave', async () => {
    const answered = await new HttpClient(api).post('/sign-in/email', { email: 'nobody@example.com', password: 'wrong-password' })
    expect(answered.status).toBe(401)
    const id = answered.headers.get('x-request-id') as string
    const proxied = await new HttpClient(api, { headers: { 'x-request-id': 'edge-abc.1' } }).get('/get-session')
    expect(proxied.headers.get('x-request-id')).toBe('edge-abc.1')
    // Lines are written as the answers leave: wait (bounded) for both.
    for (let i = 0; i < 50 && !logLines().some((l) => l.requestId === 'edge-abc.1'); i++) await new Promise((r) => setTimeout(r, 20))
    const lines = logLines()
    for (const line of lines) {
      expect(typeof line.time).toBe('string')
      expect(['debug', 'info', 'warn', 'error']).toContain(line.level)
      expect(typeof line.msg).toBe('string')
    }
    const mine = lines.filter((l) => l.requestId === id)
    expect(mine).toEqual([
      expect.objectContaining({
        level: 'debug',
        msg: 'request answered',
        route: '/sign-in/email',
        method: 'POST',
        status: 401,
        code: 'INVALID_EMAIL_OR_PASSWORD',
        durationMs: expect.any(Number),
      }),
    ])
    expect(lines.filter((l) => l.requestId === 'edge-abc.1')).toEqual([
      expect.objectContaining({ route: '/get-session', status: 200, method: 'GET' }),
    ])
    // An expected refusal is not an error: no error line at all in this run.
    expect(lines.filter((l) => l.level === 'error')).toEqual([])
  })
})
