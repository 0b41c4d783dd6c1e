/**
 * Side-by-side benchmark (not a test): Gatehouse, better-auth configured the same way, and a bare
 * node:http server (the physical limit), each in its own process on loopback, measured
 * alternately in the same run with autocannon. Prints a Markdown table with ratios.
 *
 *   npm run bench                       # 3 rounds × 5 s per scenario and server
 *   BENCH_ROUNDS=5 BENCH_DURATION=8 npm run bench
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon, { type Result } from 'autocannon'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const root = join(import.meta.dirname, '..')
const runTs = join(root, 'bin', 'run-ts.js')
const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'))

interface Target {
  name: 'gatehouse' | 'better-auth' | 'bare'
  base: string
  origin: string
  child: ChildProcess
  cookie: string
  /** The set-auth-token value of the sign-in (better-auth's bearer plugin). */
  bearer: string
}

function start(name: Target['name'], args: string[], port: number): Promise<Target> {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, GATEHOUSE_SECRET: 'bench-secret-0123456789-abcdefghijklmnop', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on')) {
        clearTimeout(timer)
        const origin = `http://127.0.0.1:${port}`
        resolve({ name, base: `${origin}/api/auth`, origin, child, cookie: '', bearer: '' })
      }
    })
  })
}

const USER = { name: 'Bench', email: 'bench@example.com', password: 'bench-password-123' }

async function prepare(target: Target): Promise<void> {
  const headers = { 'content-type': 'application/json', origin: target.origin }
  await fetch(`${target.base}/sign-up/email`, { method: 'POST', headers, body: JSON.stringify(USER) })
  const signIn = await fetch(`${target.base}/sign-in/email`, { method: 'POST', headers, body: JSON.stringify(USER) })
  target.cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  target.bearer = signIn.headers.get('set-auth-token') ?? ''
  if (target.name !== 'bare') {
    const check = await fetch(`${target.base}/get-session`, { headers: { cookie: target.cookie } })
    const body = (await check.json()) as { user?: { email: string } } | null
    if (body?.user?.email !== USER.email) throw new Error(`${target.name}: get-session did not return the bench user`)
    const viaBearer = await fetch(`${target.base}/get-session`, { headers: { authorization: `Bearer ${target.bearer}` } })
    const bearerBody = (await viaBearer.json()) as { user?: { email: string } } | null
    if (bearerBody?.user?.email !== USER.email) throw new Error(`${target.name}: a bearer get-session did not return the bench user`)
  }
}

let counter = 0
type Scenario = (t: Target) => Promise<Result>

const scenarios: Record<string, Scenario> = {
  'GET /get-session': (t) =>
    autocannon({ url: `${t.base}/get-session`, connections: 32, duration: DURATION, headers: { cookie: t.cookie } }),
  'GET /get-session (bearer)': (t) =>
    autocannon({ url: `${t.base}/get-session`, connections: 32, duration: DURATION, headers: { authorization: `Bearer ${t.bearer}` } }),
  'POST /sign-in/email': (t) =>
    autocannon({
      url: `${t.base}/sign-in/email`,
      connections: 8,
      duration: DURATION,
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.origin },
      body: JSON.stringify({ email: USER.email, password: USER.password }),
    }),
  'POST /sign-up/email': (t) =>
    autocannon({
      url: `${t.base}/sign-up/email`,
      connections: 8,
      duration: DURATION,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: t.origin },
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({ name: 'B', email: `b${process.pid}x${counter++}@example.com`, password: USER.password }),
          }),
        },
      ],
    }),
  'GET /ok': (t) => autocannon({ url: `${t.base}/ok`, connections: 32, duration: DURATION }),
  'GET /get-session while 4 connections sign in': async (t) => {
    const signIns = autocannon({
      url: `${t.base}/sign-in/email`,
      connections: 4,
      duration: DURATION,
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.origin },
      body: JSON.stringify({ email: USER.email, password: USER.password }),
    })
    const reads = autocannon({ url: `${t.base}/get-session`, connections: 8, duration: DURATION, headers: { cookie: t.cookie } })
    const [, result] = await Promise.all([signIns, reads])
    return result
  },
}

/** BENCH_ONLY="GET /get-session" runs one scenario (see bench/quick.ts); several are separated by `|`. */
const only = process.env.BENCH_ONLY?.split('|')
const selected = Object.entries(scenarios).filter(([name]) => !only || only.includes(name))

interface Sample {
  rps: number
  p50: number
  p99: number
  failures: number
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? 0
}

async function main() {
  console.error(`benchmark: ${ROUNDS} rounds × ${DURATION} s per scenario and server, working dir ${workDir}`)
  const targets = [
    await start(
      'gatehouse',
      ['bin/gatehouse.js', 'serve', '--port', '4390', '--data-dir', join(workDir, 'gatehouse'), '--rate-limit', 'off'],
      4390,
    ),
    await start('better-auth', [runTs, 'bench/better-auth-server.ts', '4391', join(workDir, 'better-auth.db')], 4391),
    await start('bare', [runTs, 'bench/bare-server.ts', '4392'], 4392),
  ]
  try {
    for (const t of targets) await prepare(t)
    const samples = new Map<string, Sample[]>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const [scenario, run] of selected) {
        // Alternate the order each round so no server always runs on a warmer or cooler machine.
        const order = round % 2 === 0 ? targets : [...targets].reverse()
        for (const t of order) {
          const r = await run(t)
          const key = `${scenario}|${t.name}`
          const list = samples.get(key) ?? []
          list.push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failures: r.non2xx + r.errors + r.timeouts })
          samples.set(key, list)
          console.error(`round ${round + 1} ${scenario} ${t.name}: ${r.requests.average.toFixed(0)} req/s p99 ${r.latency.p99} ms`)
        }
      }
    }
    const lines = [
      `| scenario | server | req/s (median) | p50 ms | p99 ms | failed | vs better-auth | vs bare |`,
      `|---|---|---:|---:|---:|---:|---:|---:|`,
    ]
    for (const [scenario] of selected) {
      const stat = (name: string) => {
        const s = samples.get(`${scenario}|${name}`) ?? []
        return {
          rps: median(s.map((x) => x.rps)),
          p50: median(s.map((x) => x.p50)),
          p99: median(s.map((x) => x.p99)),
          failures: s.reduce((a, x) => a + x.failures, 0),
        }
      }
      const ba = stat('better-auth')
      const bare = stat('bare')
      for (const t of targets) {
        const s = stat(t.name)
        lines.push(
          `| ${scenario} | ${t.name} | ${s.rps.toFixed(0)} | ${s.p50} | ${s.p99} | ${s.failures} | ${(s.rps / ba.rps).toFixed(2)}× | ${(s.rps / bare.rps).toFixed(2)}× |`,
        )
      }
    }
    console.log(lines.join('\n'))
    const rpsOf = (scenario: string) => median((samples.get(`${scenario}|gatehouse`) ?? []).map((x) => x.rps))
    if (rpsOf('GET /get-session') && rpsOf('GET /get-session (bearer)')) {
      console.log(
        `\nGatehouse bearer / cookie get-session: ${(rpsOf('GET /get-session (bearer)') / rpsOf('GET /get-session')).toFixed(2)}×`,
      )
    }
  } finally {
    for (const t of targets) t.child.kill('SIGTERM')
    rmSync(workDir, { recursive: true, force: true })
  }
}

await main()
