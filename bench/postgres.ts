/**
 * PostgreSQL benchmark (not a test): one throwaway PostgreSQL (tests/helpers/engines.ts), then in
 * one run, measured alternately with autocannon on loopback:
 *   - gatehouse ×1        one `gatehouse serve --database-url …`, hit directly
 *   - gatehouse ×1 proxy  the same instance behind bench/round-robin-proxy.ts (one upstream): what
 *                         the proxy alone costs
 *   - gatehouse ×2 proxy  two instances (same database, same secret) behind the round-robin proxy:
 *                         per connection in TCP mode by default (as HAProxy `mode tcp`), per request
 *                         with BENCH_PROXY=http (a node:http proxy, as costly as an instance)
 *   - gatehouse ×2 direct the two instances without the proxy: autocannon runs against each at once
 *                         with half the connections, the request rates summed (what two instances
 *                         give when the proxy is not the limit)
 *   - better-auth         better-auth 1.7 on the same PostgreSQL server (its Kysely `pg` adapter,
 *                         a separate database), admin plugin on
 * Each row also reports the CPU time the server processes behind the target (not autocannon, the
 * proxy or PostgreSQL) spent per request, from /proc: if two instances spend what one does, the
 * throughput of two grows with the cores they are given, and a 2-core machine only shows the cores.
 * Scenarios: get-session (one signed-in user), sign-in, list-users (an administrator, first page of
 * 100, BENCH_USERS users loaded). Also measures the scrypt ceiling of this machine (better-auth's
 * parameters, as many hashes in parallel as libuv's thread pool runs). Prints a Markdown table.
 *
 *   npm run bench:postgres
 *   BENCH_PROXY=http npm run bench:postgres     # the per-request node:http proxy instead of TCP
 *   BENCH_ROUNDS=3 BENCH_DURATION=8 BENCH_USERS=5000 npm run bench:postgres
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes, scrypt } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon, { type Result } from 'autocannon'
import pg from 'pg'
import { freePort, startPostgres } from '../tests/helpers/engines.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const USERS = Number(process.env.BENCH_USERS ?? 3000)
const POOL = Number(process.env.BENCH_POOL ?? 10)
const PROXY_MODE = process.env.BENCH_PROXY === 'http' ? ['--http'] : []
const SECRET = 'bench-secret-0123456789-abcdefghijklmnop'
const root = join(import.meta.dirname, '..')
const runTs = join(root, 'bin', 'run-ts.js')
const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-pg-'))

interface Target {
  name: string
  base: string
  origin: string
  cookie: string
  adminCookie: string
  /** A load split over several targets: autocannon runs against each with its share of connections. */
  parts?: Target[]
  /** The server processes behind it, whose CPU time per request is reported (not the proxy's). */
  servers: ChildProcess[]
}

const children: ChildProcess[] = []

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux). */
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
function cpuMs(child: ChildProcess): number {
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields 14 and 15 of proc(5), utime and stime, counted from field 3 here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
}

function start(name: string, args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, GATEHOUSE_SECRET: SECRET, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 60_000)
    child.once('exit', (code) => reject(new Error(`${name} exited (${code})`)))
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on')) {
        clearTimeout(timer)
        resolve(child)
      }
    })
  })
}

const USER = { name: 'Bench', email: 'bench@example.com', password: 'bench-password-123' }
const ADMIN = { name: 'Bench Admin', email: 'admin@example.com', password: 'bench-password-123' }

async function signIn(base: string, origin: string, who: typeof USER): Promise<string> {
  const headers = { 'content-type': 'application/json', origin }
  const res = await fetch(`${base}/sign-in/email`, { method: 'POST', headers, body: JSON.stringify(who) })
  if (res.status !== 200) throw new Error(`sign-in ${who.email} at ${base}: ${res.status} ${await res.text()}`)
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
}

/** Signs the bench user and the administrator up, promotes the administrator, loads USERS users. */
async function seed(name: string, origin: string, databaseUrl: string): Promise<void> {
  const base = `${origin}/api/auth`
  const headers = { 'content-type': 'application/json', origin }
  for (const who of [USER, ADMIN]) {
    const res = await fetch(`${base}/sign-up/email`, { method: 'POST', headers, body: JSON.stringify(who) })
    if (res.status !== 200) throw new Error(`${name}: sign-up ${who.email}: ${res.status} ${await res.text()}`)
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(`UPDATE "user" SET role = 'admin' WHERE email = $1`, [ADMIN.email])
    await client.query(
      `INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt", role, banned)
       SELECT 'seed' || i, 'User ' || i, 'user' || i || '@example.com', false,
              now() - (i || ' seconds')::interval, now(), 'user', false
       FROM generate_series(1, $1::int) AS i`,
      [USERS],
    )
  } finally {
    await client.end()
  }
}

async function target(name: string, origin: string, servers: ChildProcess[]): Promise<Target> {
  const base = `${origin}/api/auth`
  const cookie = await signIn(base, origin, USER)
  const adminCookie = await signIn(base, origin, ADMIN)
  const check = await fetch(`${base}/get-session`, { headers: { cookie } })
  const body = (await check.json()) as { user?: { email: string } } | null
  if (body?.user?.email !== USER.email) throw new Error(`${name}: get-session did not return the bench user`)
  const list = await fetch(`${base}/admin/list-users?limit=100`, { headers: { cookie: adminCookie } })
  const users = (await list.json()) as { users?: unknown[]; total?: number }
  if (list.status !== 200 || users.users?.length !== 100 || (users.total ?? 0) < USERS)
    throw new Error(`${name}: list-users answered ${list.status} ${JSON.stringify(users).slice(0, 200)}`)
  return { name, base, origin, cookie, adminCookie, servers }
}

type Scenario = (t: Target, share: number) => Promise<Result>
const scenarios: Record<string, Scenario> = {
  'GET /get-session': (t, share) =>
    autocannon({ url: `${t.base}/get-session`, connections: 32 * share, duration: DURATION, headers: { cookie: t.cookie } }),
  'POST /sign-in/email': (t, share) =>
    autocannon({
      url: `${t.base}/sign-in/email`,
      connections: 8 * share,
      duration: DURATION,
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.origin },
      body: JSON.stringify({ email: USER.email, password: USER.password }),
    }),
  'GET /admin/list-users (100 of a few thousand)': (t, share) =>
    autocannon({
      url: `${t.base}/admin/list-users?limit=100`,
      connections: 16 * share,
      duration: DURATION,
      headers: { cookie: t.adminCookie },
    }),
}
/** Runs a scenario on a target; on a split target, on every part at once (connections divided), summed. */
async function measure(run: Scenario, t: Target): Promise<{ rps: number; p50: number; p99: number; failures: number; cpuUs: number }> {
  const parts = t.parts ?? [t]
  const cpuBefore = t.servers.reduce((sum, c) => sum + cpuMs(c), 0)
  const results = await Promise.all(parts.map((p) => run(p, 1 / parts.length)))
  const cpuUsed = t.servers.reduce((sum, c) => sum + cpuMs(c), 0) - cpuBefore
  const requests = results.reduce((a, r) => a + r.requests.total, 0)
  return {
    cpuUs: requests > 0 ? (cpuUsed * 1000) / requests : 0,
    rps: results.reduce((a, r) => a + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    failures: results.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0),
  }
}

const selected = Object.entries(scenarios).filter(([name]) => !process.env.BENCH_ONLY || name === process.env.BENCH_ONLY)

/** scrypt hashes per second on this machine with better-auth's parameters, libuv pool kept busy. */
async function scryptCeiling(seconds: number): Promise<number> {
  const parallel = Number(process.env.UV_THREADPOOL_SIZE ?? 4)
  const end = Date.now() + seconds * 1000
  let done = 0
  const worker = async () => {
    while (Date.now() < end) {
      await new Promise<void>((resolve, reject) =>
        scrypt('bench-password-123', randomBytes(16).toString('hex'), 64, { N: 16384, r: 16, p: 1, maxmem: 128 * 16384 * 16 * 2 }, (e) =>
          e ? reject(e) : resolve(),
        ),
      )
      done++
    }
  }
  const started = Date.now()
  await Promise.all(Array.from({ length: parallel }, worker))
  return done / ((Date.now() - started) / 1000)
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? 0
}

async function main() {
  const load = loadavg().map((x) => x.toFixed(2))
  console.error(
    `PostgreSQL benchmark: ${ROUNDS} round(s) × ${DURATION} s, ${USERS} users, pool ${POOL}, proxy ${PROXY_MODE.length ? 'http' : 'tcp'}, ${cpus().length} cores, load ${load.join(' ')}`,
  )
  const server = await startPostgres()
  try {
    const ghUrl = await server.createDatabase('gatehouse')
    const baUrl = await server.createDatabase('better_auth')
    const [p1, p2, pp1, pp2, pba, panel1, panel2] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ])
    const serve = (port: number, dir: string, panelPort: number) => [
      'bin/gatehouse.js',
      'serve',
      '--port',
      String(port),
      '--data-dir',
      join(workDir, dir),
      '--database-url',
      ghUrl,
      '--database-pool-size',
      String(POOL),
      '--rate-limit',
      'off',
      '--panel-port',
      String(panelPort),
      '--trusted-origins',
      [p1, p2, pp1, pp2].map((p) => `http://127.0.0.1:${p}`).join(','),
    ]
    const serverA = await start('gatehouse A', serve(p1, 'a', panel1))
    const serverB = await start('gatehouse B', serve(p2, 'b', panel2))
    const serverBa = await start('better-auth', [runTs, 'bench/better-auth-pg-server.ts', String(pba), baUrl, String(POOL)])
    const o = (p: number) => `http://127.0.0.1:${p}`
    await start('proxy ×1', [runTs, 'bench/round-robin-proxy.ts', ...PROXY_MODE, String(pp1), o(p1)])
    await start('proxy ×2', [runTs, 'bench/round-robin-proxy.ts', ...PROXY_MODE, String(pp2), o(p1), o(p2)])
    await seed('gatehouse', o(p1), ghUrl)
    await seed('better-auth', o(pba), baUrl)
    const a = await target('gatehouse ×1', o(p1), [serverA])
    const b = await target('gatehouse B', o(p2), [serverB])
    const targets: Target[] = [
      a,
      await target('gatehouse ×1 via proxy', o(pp1), [serverA]),
      await target('gatehouse ×2 via proxy', o(pp2), [serverA, serverB]),
      { ...a, name: 'gatehouse ×2 direct (load split)', parts: [a, b], servers: [serverA, serverB] },
      await target('better-auth', o(pba), [serverBa]),
    ]
    const samples = new Map<string, Awaited<ReturnType<typeof measure>>[]>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const [scenario, run] of selected) {
        const order = round % 2 === 0 ? targets : [...targets].reverse()
        for (const t of order) {
          const r = await measure(run, t)
          const key = `${scenario}|${t.name}`
          samples.set(key, [...(samples.get(key) ?? []), r])
          console.error(`round ${round + 1} ${scenario} ${t.name}: ${r.rps.toFixed(0)} req/s p99 ${r.p99} ms`)
        }
      }
    }
    const ceiling = await scryptCeiling(DURATION)
    const lines = [
      `| scenario | server | req/s | p50 ms | p99 ms | failed | vs better-auth | vs gatehouse ×1 | server CPU µs/req |`,
      `|---|---|---:|---:|---:|---:|---:|---:|---:|`,
    ]
    for (const [scenario] of selected) {
      const stat = (name: string) => {
        const s = samples.get(`${scenario}|${name}`) ?? []
        return {
          rps: median(s.map((x) => x.rps)),
          p50: median(s.map((x) => x.p50)),
          p99: median(s.map((x) => x.p99)),
          failures: s.reduce((a, x) => a + x.failures, 0),
          cpuUs: median(s.map((x) => x.cpuUs)),
        }
      }
      const ba = stat('better-auth')
      const one = stat('gatehouse ×1')
      for (const t of targets) {
        const s = stat(t.name)
        lines.push(
          `| ${scenario} | ${t.name} | ${s.rps.toFixed(0)} | ${s.p50} | ${s.p99} | ${s.failures} | ${(s.rps / ba.rps).toFixed(2)}× | ${(s.rps / one.rps).toFixed(2)}× | ${s.cpuUs.toFixed(0)} |`,
        )
      }
    }
    console.log(lines.join('\n'))
    console.log(`\nscrypt ceiling (N=16384, r=16, p=1, ${process.env.UV_THREADPOOL_SIZE ?? 4} in parallel): ${ceiling.toFixed(1)} hashes/s`)
    console.log(
      `load average before: ${load.join(' ')}, after: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    )
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))))
    await server.stop()
    rmSync(workDir, { recursive: true, force: true })
  }
}

await main()
