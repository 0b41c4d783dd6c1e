/**
 * API-key verification and /token: Gatehouse vs better-auth 1.7 with the same plugins
 * (@better-auth/api-key with enableSessionForAPIKeys, better-auth's jwt), each in its own process
 * on loopback, measured alternately in the same run with autocannon. Not a test.
 *
 *   node bin/run-ts.js bench/api-key-jwt.ts                 # 2 rounds × 3 s per scenario and server
 *   BENCH_ROUNDS=3 BENCH_DURATION=5 node bin/run-ts.js bench/api-key-jwt.ts
 *
 * With `--peer <port> <sqlite file>` this file is the better-auth server itself.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'

const SECRET = 'bench-secret-0123456789-abcdefghijklmnop'

async function peer(port: number, file: string): Promise<void> {
  const { default: Database } = await import('better-sqlite3')
  const { betterAuth } = await import('better-auth')
  const { getMigrations } = await import('better-auth/db/migration')
  const { toNodeHandler } = await import('better-auth/node')
  const { jwt } = await import('better-auth/plugins')
  const { apiKey } = await import('@better-auth/api-key')
  const sqlite = new Database(file)
  sqlite.pragma('journal_mode = WAL')
  const options = {
    database: sqlite,
    baseURL: `http://127.0.0.1:${port}`,
    secret: SECRET,
    emailAndPassword: { enabled: true },
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    plugins: [apiKey({ enableSessionForAPIKeys: true, rateLimit: { enabled: false } }), jwt()],
  }
  const { runMigrations } = await getMigrations(options)
  await runMigrations()
  const auth = betterAuth(options)
  createServer(toNodeHandler(auth)).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/api/auth`))
}

interface Target {
  name: 'gatehouse' | 'better-auth'
  base: string
  origin: string
  child: ChildProcess
  cookie: string
  key: string
}

function start(name: Target['name'], args: string[], port: number): Promise<Target> {
  const child = spawn(process.execPath, args, {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, GATEHOUSE_SECRET: SECRET, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 60_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on')) {
        clearTimeout(timer)
        const origin = `http://127.0.0.1:${port}`
        resolve({ name, base: `${origin}/api/auth`, origin, child, cookie: '', key: '' })
      }
    })
  })
}

const USER = { name: 'Bench', email: 'bench@example.com', password: 'bench-password-123' }

async function prepare(t: Target): Promise<void> {
  const headers = { 'content-type': 'application/json', origin: t.origin }
  await fetch(`${t.base}/sign-up/email`, { method: 'POST', headers, body: JSON.stringify(USER) })
  const signIn = await fetch(`${t.base}/sign-in/email`, { method: 'POST', headers, body: JSON.stringify(USER) })
  t.cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  const created = await fetch(`${t.base}/api-key/create`, {
    method: 'POST',
    headers: { ...headers, cookie: t.cookie },
    body: JSON.stringify({ name: 'bench' }),
  })
  t.key = ((await created.json()) as { key: string }).key
  // Both must answer as the user, with the key and with the cookie.
  const viaKey = (await (await fetch(`${t.base}/get-session`, { headers: { 'x-api-key': t.key } })).json()) as {
    user?: { email: string }
  } | null
  if (viaKey?.user?.email !== USER.email) throw new Error(`${t.name}: the API key did not act as the user`)
  const token = (await (await fetch(`${t.base}/token`, { headers: { cookie: t.cookie } })).json()) as { token?: string }
  if (!token.token?.includes('.')) throw new Error(`${t.name}: /token gave no token`)
}

async function main(): Promise<void> {
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
  const DURATION = Number(process.env.BENCH_DURATION ?? 3)
  const root = join(import.meta.dirname, '..')
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-keys-'))
  const dataDir = join(workDir, 'gatehouse')
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const configFile = join(workDir, 'config.json')
  writeFileSync(
    configFile,
    JSON.stringify({ apiKey: { enabled: true, enableSessionForAPIKeys: true, rateLimit: { enabled: false } }, jwt: { enabled: true } }),
  )
  console.error(`benchmark: ${ROUNDS} rounds × ${DURATION} s per scenario and server`)
  const targets = [
    await start(
      'gatehouse',
      ['bin/gatehouse.js', 'serve', '--port', '4393', '--data-dir', dataDir, '--rate-limit', 'off', '--config', configFile],
      4393,
    ),
    await start(
      'better-auth',
      [join(root, 'bin', 'run-ts.js'), 'bench/api-key-jwt.ts', '--peer', '4394', join(workDir, 'better-auth.db')],
      4394,
    ),
  ]
  const scenarios: Record<string, (t: Target) => ReturnType<typeof autocannon>> = {
    'API key → get-session (x-api-key)': (t) =>
      autocannon({ url: `${t.base}/get-session`, connections: 32, duration: DURATION, headers: { 'x-api-key': t.key } }),
    'GET /token (cookie)': (t) =>
      autocannon({ url: `${t.base}/token`, connections: 32, duration: DURATION, headers: { cookie: t.cookie } }),
  }
  try {
    for (const t of targets) await prepare(t)
    const samples = new Map<string, Array<{ rps: number; p99: number; failures: number }>>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const [scenario, run] of Object.entries(scenarios)) {
        const order = round % 2 === 0 ? targets : [...targets].reverse()
        for (const t of order) {
          const r = await run(t)
          const list = samples.get(`${scenario}|${t.name}`) ?? []
          list.push({ rps: r.requests.average, p99: r.latency.p99, failures: r.non2xx + r.errors + r.timeouts })
          samples.set(`${scenario}|${t.name}`, list)
          console.error(`round ${round + 1} ${scenario} ${t.name}: ${r.requests.average.toFixed(0)} req/s p99 ${r.latency.p99} ms`)
        }
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
    const lines = ['| scenario | server | req/s (median) | p99 ms | failed | vs better-auth |', '|---|---|---:|---:|---:|---:|']
    for (const scenario of Object.keys(scenarios)) {
      const stat = (name: string) => {
        const s = samples.get(`${scenario}|${name}`) ?? []
        return { rps: median(s.map((x) => x.rps)), p99: median(s.map((x) => x.p99)), failures: s.reduce((a, x) => a + x.failures, 0) }
      }
      const ba = stat('better-auth')
      for (const t of targets) {
        const s = stat(t.name)
        lines.push(`| ${scenario} | ${t.name} | ${s.rps.toFixed(0)} | ${s.p99} | ${s.failures} | ${(s.rps / ba.rps).toFixed(2)}× |`)
      }
    }
    console.log(lines.join('\n'))
  } finally {
    for (const t of targets) t.child.kill('SIGTERM')
    rmSync(workDir, { recursive: true, force: true })
  }
}

if (process.argv[2] === '--peer') {
  await peer(Number(process.argv[3]), process.argv[4] ?? ':memory:')
} else {
  await main()
}
