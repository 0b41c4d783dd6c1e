/**
 * GET /get-session on several builds of Gatehouse side by side (not a test): for bisecting a
 * regression or checking a change against the commit before it, in one sitting. Each argument is
 * `name=<checkout>`: a git worktree with node_modules and a built dist/server (`npm run
 * build:server` there); `bare=<checkout>` runs that checkout's bench/bare-server.ts instead. The
 * servers are measured one after the other, in alternating order each round, and besides req/s
 * the server process's own CPU time per request is reported (from /proc, Linux only): on a shared
 * machine it moves far less than req/s does.
 *
 *   git worktree add /tmp/wt-old <commit> && ln -s "$PWD/node_modules" /tmp/wt-old/ && (cd /tmp/wt-old && npm run build:server)
 *   node bin/run-ts.js bench/builds.ts old=/tmp/wt-old new=. bare=.
 *   BENCH_ROUNDS=6 BENCH_DURATION=3 node bin/run-ts.js bench/builds.ts ...
 *   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" ...   (a CPU profile per server)
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import autocannon from 'autocannon'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const DURATION = Number(process.env.BENCH_DURATION ?? 3)
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-builds-'))
const USER = { name: 'Bench', email: 'bench@example.com', password: 'bench-password-123' }

interface Server {
  name: string
  child: ChildProcess
  origin: string
  cookie: string
  rps: number[]
  cpuPerRequest: number[]
}

/** User + system CPU of a process so far, in microseconds (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const path = `/proc/${pid}/stat`
  if (!existsSync(path)) return Number.NaN
  const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

function start(name: string, checkout: string, port: number): Promise<Server> {
  const args =
    name === 'bare'
      ? [join(checkout, 'bin', 'run-ts.js'), 'bench/bare-server.ts', String(port)]
      : ['bin/gatehouse.js', 'serve', '--port', String(port), '--data-dir', join(workDir, name), '--rate-limit', 'off']
  const child = spawn(process.execPath, [...nodeArgs, ...args], {
    cwd: checkout,
    env: { ...process.env, GATEHOUSE_SECRET: 'bench-secret-0123456789-abcdefghijklmnop', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      if (!chunk.toString().includes('listening on')) return
      clearTimeout(timer)
      resolvePromise({ name, child, origin: `http://127.0.0.1:${port}`, cookie: '', rps: [], cpuPerRequest: [] })
    })
  })
}

async function signIn(server: Server): Promise<void> {
  const base = `${server.origin}/api/auth`
  const headers = { 'content-type': 'application/json', origin: server.origin }
  await fetch(`${base}/sign-up/email`, { method: 'POST', headers, body: JSON.stringify(USER) })
  const answer = await fetch(`${base}/sign-in/email`, { method: 'POST', headers, body: JSON.stringify(USER) })
  server.cookie = answer.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

async function main() {
  const specs = process.argv.slice(2).map((arg) => {
    const [name, checkout] = arg.split('=')
    if (!name || !checkout) throw new Error(`expected name=<checkout>, got ${arg}`)
    return { name, checkout: resolve(checkout) }
  })
  if (specs.length === 0) throw new Error('usage: bench/builds.ts name=<checkout> [name=<checkout> ...] [bare=<checkout>]')
  const servers: Server[] = []
  try {
    for (const [i, spec] of specs.entries()) servers.push(await start(spec.name, spec.checkout, 4700 + i))
    for (const server of servers) if (server.name !== 'bare') await signIn(server)
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        const before = cpuMicros(server.child.pid ?? 0)
        const result = await autocannon({
          url: `${server.origin}/api/auth/get-session`,
          connections: 32,
          duration: DURATION,
          headers: { cookie: server.cookie },
        })
        if (result.non2xx + result.errors > 0) throw new Error(`${server.name}: ${result.non2xx + result.errors} failed requests`)
        server.rps.push(result.requests.average)
        server.cpuPerRequest.push((cpuMicros(server.child.pid ?? 0) - before) / result.requests.total)
      }
    }
    const bare = servers.find((s) => s.name === 'bare')
    console.log('| build | req/s (median) | vs bare | server CPU µs per request (median) | req/s of each round |')
    console.log('|---|---:|---:|---:|---|')
    for (const s of servers) {
      const ratio = bare ? `${(median(s.rps) / median(bare.rps)).toFixed(2)}×` : '-'
      const cpu = s.name === 'bare' ? '-' : median(s.cpuPerRequest).toFixed(1)
      console.log(`| ${s.name} | ${median(s.rps).toFixed(0)} | ${ratio} | ${cpu} | ${s.rps.map((x) => x.toFixed(0)).join(' ')} |`)
    }
  } finally {
    for (const s of servers) s.child.kill('SIGTERM')
    rmSync(workDir, { recursive: true, force: true })
  }
}

await main()
