import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { freePort } from '../helpers/engines.js'
import { runNode } from '../helpers/process.js'

/**
 * `npm run bench` (bench/run.ts, then bench/ldap.ts against slapd) still runs to its end: every
 * scenario on every server answered, none failed. Twice a default the benches did not set broke
 * them without a test noticing (round 7's identity rule: forward auth answered the unverified bench
 * user 401 and every LDAP bind 49). How fast is the bench's business: the run is cut to a fraction
 * of a second per scenario, and only the tables' shape and the failure counts are asserted.
 */

const root = join(import.meta.dirname, '..', '..')
const SLAPD = '/usr/sbin/slapd'
if (!existsSync(SLAPD)) console.warn('bench-run-smoke: no slapd (Debian "slapd"): the LDAP part of npm run bench is not checked')

/** Six free ports in a row from the returned one (the bench takes base … base + 5). */
async function freeRun(): Promise<number> {
  for (let tries = 0; tries < 20; tries++) {
    const base = await freePort()
    if (base > 65_000) continue
    const taken = await Promise.all([1, 2, 3, 4, 5].map((i) => portIsFree(base + i)))
    if (taken.every(Boolean)) return base
  }
  throw new Error('no six free ports in a row')
}
async function portIsFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net')
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })
}

it('npm run bench: every scenario on every server answers without a failure, and the LDAP comparison runs', async () => {
  const base = await freeRun()
  const run = await runNode(
    [join(root, 'bin', 'run-ts.js'), join(root, 'bench', 'run.ts')],
    {
      BENCH_PORT_BASE: String(base),
      BENCH_ROUNDS: '1',
      BENCH_DURATION: '0.5',
      BENCH_WARM_UP: '0',
      BENCH_SLICES: '1',
      BENCH_MEMORY_REDUCER: '',
      LDAP_BENCH_PEOPLE: '5',
      LDAP_BENCH_SECONDS: '0.5',
      LDAP_BENCH_WARM_UP: '0',
    },
    240_000,
  )
  const { output } = run
  expect(run.code, output).toBe(0)
  // Every server without V8's memory reducer unless asked (bench/run.ts, V8_FLAGS), as executed.
  for (const server of ['gatehouse', 'gatehouse+metrics', 'better-auth', 'bare'])
    expect(output).toMatch(new RegExp(`^${server.replace('+', '\\+')}: node options --no-memory-reducer$`, 'm'))
  // | scenario | server | req/s (median) | p50 ms | p99 ms | failed | vs better-auth | vs bare |
  const rows = output.split('\n').filter((line) => /^\| (GET|POST) \//.test(line) && line.split('|').length === 10)
  const servers = (scenario: string) => rows.filter((row) => row.startsWith(`| ${scenario} |`)).map((row) => row.split(' | ')[1])
  for (const scenario of ['GET /get-session', 'GET /get-session (bearer)', 'POST /sign-in/email', 'GET /ok'])
    expect(servers(scenario), output).toEqual(['gatehouse', 'gatehouse+metrics', 'better-auth', 'bare'])
  for (const scenario of ['GET /forward-auth/auth-request (10 connections)', 'GET /forward-auth/forward-auth (10 connections)'])
    expect(servers(scenario), output).toEqual(['gatehouse'])
  for (const row of rows) expect(row.split('|')[6]?.trim(), row).toBe('0')
  expect(output).toMatch(/\| GET \/get-session \| [\d.]+( · [\d.]+)* \| [\d.]+× \|/)
  if (existsSync(SLAPD)) {
    const ldap = output.split('\n').filter((line) => /^\| (search by uid|bind \()/.test(line))
    expect(
      ldap.map((line) => line.split(' | ')[0]),
      output,
    ).toEqual([
      '| search by uid, 1 connection',
      '| search by uid, 10 connections',
      '| bind (main password), 10 connections',
      '| bind (app password), 10 connections',
    ])
    for (const line of ldap) expect(Number(line.split('|')[2]?.trim()), line).toBeGreaterThan(0)
  }
}, 300_000)
