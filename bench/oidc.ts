/**
 * The OpenID provider's token endpoint: refresh-token grants (each one rotates the token, so every
 * request carries the token the previous answer returned) and client-credentials grants, against
 * Gatehouse in its own process on loopback. Not a test. Reports requests per second and per
 * CPU-second of the server process (its user + system time from /proc), i.e. per core.
 * Keycloak's sizing guide: 120 refresh-token requests per second per vCPU.
 *
 *   node bin/run-ts.js bench/oidc.ts                          # 3 s per scenario, 16 clients
 *   BENCH_DURATION=5 BENCH_CONCURRENCY=32 node bin/run-ts.js bench/oidc.ts
 *   BENCH_PROFILE=/tmp/prof node bin/run-ts.js bench/oidc.ts   # a V8 CPU profile of the server
 *   BENCH_SCENARIOS=eddsa node bin/run-ts.js bench/oidc.ts   # only some scenarios (rs256, eddsa, cc, bare)
 *   BENCH_SERVER=/tmp/old/dist/server/main.mjs node bin/run-ts.js bench/oidc.ts   # another build's server
 *   BENCH_FAST_TOKEN=0 node bin/run-ts.js bench/oidc.ts      # oidcProvider.fastTokenEndpoint off: oidc-provider serves every token request
 *   BENCH_WARMUP=2 node bin/run-ts.js bench/oidc.ts           # each scenario runs 2 s unmeasured first (JIT warm-up; default 0)
 *   BENCH_REQUESTS=6000 BENCH_WARMUP_REQUESTS=6000 node bin/run-ts.js bench/oidc.ts
 *       # by count instead of time: 6 000 requests unmeasured, then 6 000 measured, however long they
 *       # take. On a loaded machine a time-boxed run gives the server few requests, so the figure
 *       # includes the JIT's warm-up. A refresh's CPU levels off after ~4 500 requests on Node 22
 *       # (docs/BENCHMARKS.md, issue 38's fifth pass): a shorter warm-up measures a server that has
 *       # just started.
 *   BENCH_WARMUP_REQUESTS=15000 BENCH_CURVE=1500 ...   # the warm-up's figure window by window (where the steady state starts)
 *
 * The `bare` scenario is the anchor: the same rotating RS256 refresh against
 * bench/oidc-bare-server.ts (node:http, raw SQLite statements on Gatehouse's tables, one
 * crypto.sign, nothing else), measured in the same run, and the RS256 figure as a share of it.
 * Per CPU-second figures move with the machine and its load from one sitting to the next; the
 * share moves far less.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const DURATION = Number(process.env.BENCH_DURATION ?? 3)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const PORT = Number(process.env.BENCH_PORT ?? 4391)
/** Which scenarios run (all by default): rs256, eddsa (rotating refreshes), cc (client credentials), bare (the anchor). */
/** Seconds each scenario runs unmeasured before its measurement (the first one otherwise includes the JIT's warm-up). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 0)
/** Measured and unmeasured requests per scenario by count (0: by time, BENCH_DURATION and BENCH_WARMUP). */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 0)
const WARMUP_REQUESTS = Number(process.env.BENCH_WARMUP_REQUESTS ?? 0)
const CURVE = Number(process.env.BENCH_CURVE ?? 0)
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'rs256,eddsa,cc,bare').split(','))
const SECRET = 'bench-secret-0123456789-abcdefghijklmnop'
const root = join(import.meta.dirname, '..')
const bin = join(root, 'bin', 'gatehouse.js')
const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-oidc-'))
/** The bare anchor's own data directory (migrated by the CLI, written only by bench/oidc-bare-server.ts). */
const bareDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-oidc-bare-'))
const origin = `http://127.0.0.1:${PORT}`
const base = `${origin}/api/auth`
const CALLBACK = 'http://127.0.0.1:9/callback'

/** The process's user and system CPU time in seconds. */
function cpuTimes(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name).
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }
}

function startServer(): Promise<ChildProcess> {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []
  // BENCH_SERVER: another build's dist/server/main.mjs (a copy of an earlier build, for before/after in one sitting).
  const entry = process.env.BENCH_SERVER ?? bin
  const child = spawn(process.execPath, [...profile, entry, 'serve', '--port', String(PORT), '--data-dir', dataDir], {
    env: { ...process.env, GATEHOUSE_SECRET: SECRET, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('gatehouse did not start')), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on')) {
        clearTimeout(timer)
        resolve(child)
      }
    })
  })
}

class Jar {
  cookies = new Map<string, string>()
  store(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const i = pair.indexOf('=')
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1))
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }
}

/** One authorization code flow through the Gatehouse session; returns the refresh token. */
async function refreshTokenFor(clientId: string, basic: string, jar: Jar): Promise<string> {
  const verifier = 'v'.repeat(43) + Math.random().toString(36).slice(2)
  const { createHash } = await import('node:crypto')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  let url = `${base}/oauth2/authorize?${new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'openid offline_access',
    prompt: 'consent',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })}`
  for (let hop = 0; hop < 10 && url.startsWith(origin); hop++) {
    const res = await fetch(url, { headers: { cookie: jar.header() }, redirect: 'manual' })
    jar.store(res)
    url = new URL(res.headers.get('location') as string, url).href
  }
  const code = new URL(url).searchParams.get('code')
  if (!code) throw new Error(`no code: ${url}`)
  const res = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier }),
  })
  const body = (await res.json()) as { refresh_token?: string }
  if (!body.refresh_token) throw new Error(`no refresh token: ${JSON.stringify(body)}`)
  return body.refresh_token
}

/** Runs one scenario and prints its row; returns its grants per CPU-second. */
async function measure(name: string, pid: number, worker: () => Promise<() => Promise<boolean>>): Promise<number> {
  // Set up one after the other (the authorization flows share the browser's cookies).
  const workers: (() => Promise<boolean>)[] = []
  for (let i = 0; i < CONCURRENCY; i++) workers.push(await worker())
  if (WARMUP > 0 || WARMUP_REQUESTS > 0) {
    const warm = performance.now() + WARMUP * 1000
    let started = 0
    // BENCH_CURVE=<n>: the warm-up (by count) in windows of n requests, each window's figure printed.
    const window = CURVE > 0 && WARMUP_REQUESTS > 0 ? CURVE : Number.POSITIVE_INFINITY
    let windowStart = cpuTimes(pid)
    let windowDone = 0
    const curve: string[] = []
    await Promise.all(
      workers.map(async (step) => {
        while (WARMUP_REQUESTS > 0 ? started++ < WARMUP_REQUESTS : performance.now() < warm) {
          await step()
          if (++windowDone === window) {
            const now = cpuTimes(pid)
            const cpu = now.user + now.system - windowStart.user - windowStart.system
            // /proc counts CPU in 10 ms ticks: a window shorter than one tick has no figure.
            curve.push(cpu > 0 ? String(Math.round(window / cpu)) : 'under a tick')
            windowStart = now
            windowDone = 0
          }
        }
      }),
    )
    if (curve.length > 0) console.log(`warm-up of ${name}, per CPU-second in windows of ${window} requests: ${curve.join(', ')}`)
  }
  let ok = 0
  let failed = 0
  let started = 0
  const cpu0 = cpuTimes(pid)
  const t0 = performance.now()
  const until = t0 + DURATION * 1000
  const more = () => (REQUESTS > 0 ? started++ < REQUESTS : performance.now() < until)
  await Promise.all(
    workers.map(async (step) => {
      while (more()) {
        if (await step()) ok++
        else failed++
      }
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  const cpu1 = cpuTimes(pid)
  const user = cpu1.user - cpu0.user
  const system = cpu1.system - cpu0.system
  const cpu = user + system
  const perSecond = ok / seconds
  const perCore = ok / cpu
  console.log(
    `| ${name} | ${Math.round(perSecond)} | ${cpu.toFixed(2)} s (${user.toFixed(2)} user + ${system.toFixed(2)} sys) / ${seconds.toFixed(1)} s | ${Math.round(perCore)} | ${((1e6 * cpu) / Math.max(ok, 1)).toFixed(0)} µs | ${(perCore / 120).toFixed(1)}× | ${failed} |`,
  )
  return perCore
}

/** bench/oidc-bare-server.ts on its own port and data directory; resolves with its process, client and first tokens. */
async function startBare(): Promise<{ child: ChildProcess; base: string; basic: string; tokens: string[] }> {
  // The CLI migrates the directory: the anchor writes to Gatehouse's own tables and indexes.
  execFileSync(process.execPath, [bin, 'oidc', 'client', 'list', '--data-dir', bareDir], {
    env: { ...process.env, GATEHOUSE_SECRET: SECRET },
    stdio: 'ignore',
  })
  const child = spawn(
    process.execPath,
    // Port 0: the system's choice, told back (a fixed PORT + 1 could be taken by another process meanwhile).
    [join(root, 'bin', 'run-ts.js'), join(root, 'bench', 'oidc-bare-server.ts'), '0', bareDir, String(CONCURRENCY)],
    { env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the bare server did not start')), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      const started = /listening (\d+) (\S+) (\S+) (\S+)/.exec(chunk.toString())
      if (!started) return
      clearTimeout(timer)
      const [, port, clientId, secret, tokens] = started as unknown as [string, string, string, string, string]
      resolve({
        child,
        base: `http://127.0.0.1:${port}/api/auth`,
        basic: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
        tokens: tokens.split(','),
      })
    })
  })
}

/**
 * One client's chain of rotating refreshes against a token endpoint: each step presents the
 * refresh token the previous answer returned; false when a step fails (which breaks the chain).
 */
function rotating(tokenEndpoint: string, basic: string, first: string): () => Promise<boolean> {
  let token = first
  return async () => {
    const res = await fetch(tokenEndpoint, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${token}`,
    })
    const body = (await res.json()) as { refresh_token?: string }
    if (res.status !== 200 || !body.refresh_token) return false
    token = body.refresh_token
    return true
  }
}

interface BenchClient {
  clientId: string
  basic: string
}

/** Registers a client with the CLI (`alg`: its ID tokens' signing algorithm; none given: the default, RS256). */
function createClient(name: string, alg?: string): BenchClient {
  const created = execFileSync(
    process.execPath,
    [
      bin,
      'oidc',
      'client',
      'create',
      '--name',
      name,
      '--redirect-uri',
      CALLBACK,
      '--skip-consent',
      ...(alg ? ['--id-token-alg', alg] : []),
      '--json',
      '--data-dir',
      dataDir,
    ],
    { env: { ...process.env, GATEHOUSE_SECRET: SECRET } },
  ).toString()
  const { clientId, clientSecret } = JSON.parse(created) as { clientId: string; clientSecret: string }
  return { clientId, basic: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` }
}

async function main(): Promise<void> {
  const oidcProvider = process.env.BENCH_FAST_TOKEN === '0' ? { enabled: true, fastTokenEndpoint: false } : { enabled: true }
  // The bench person signs up through the API with no mailbox to verify from: the faces may vouch for
  // an unverified address here (identity.requireVerifiedEmail decides before the token endpoint measured).
  writeFileSync(
    join(dataDir, 'config.json'),
    JSON.stringify({ oidcProvider, rateLimit: { enabled: false }, identity: { requireVerifiedEmail: false } }),
  )
  const rs256 = createClient('Bench')
  const eddsa = createClient('Bench EdDSA', 'EdDSA')
  const server = await startServer()
  const pid = server.pid as number
  try {
    const user = { name: 'Bench', email: 'bench@example.com', password: 'bench-password-123' }
    const headers = { 'content-type': 'application/json', origin }
    await fetch(`${base}/sign-up/email`, { method: 'POST', headers, body: JSON.stringify(user) })
    const jar = new Jar()
    jar.store(await fetch(`${base}/sign-in/email`, { method: 'POST', headers, body: JSON.stringify(user) }))
    // oidc-provider is loaded on the first OIDC request: before any measurement.
    await (await fetch(`${base}/.well-known/openid-configuration`)).arrayBuffer()

    const amount = REQUESTS > 0 ? `${REQUESTS} requests (after ${WARMUP_REQUESTS} unmeasured)` : `${DURATION} s`
    console.log(
      `\nOIDC token endpoint on Node ${process.version}, ${CONCURRENCY} concurrent clients, ${amount} per scenario (server CPU from /proc)\n`,
    )
    console.log(
      '| grant | requests/s | server CPU (user + sys) / wall | requests per CPU-second (per core) | CPU per request | vs Keycloak 120/s/vCPU | failed |',
    )
    console.log('|---|---|---|---|---|---|---|')
    const refresh = (client: BenchClient) => async () =>
      rotating(`${base}/oauth2/token`, client.basic, await refreshTokenFor(client.clientId, client.basic, jar))
    const rs256PerCore = SCENARIOS.has('rs256') ? await measure('refresh_token (rotating, RS256 ID token)', pid, refresh(rs256)) : 0
    if (SCENARIOS.has('eddsa')) await measure('refresh_token (rotating, EdDSA ID token)', pid, refresh(eddsa))
    const form = { authorization: rs256.basic, 'content-type': 'application/x-www-form-urlencoded' }
    if (SCENARIOS.has('cc'))
      await measure('client_credentials', pid, async () => async () => {
        const res = await fetch(`${base}/oauth2/token`, { method: 'POST', headers: form, body: 'grant_type=client_credentials' })
        await res.arrayBuffer()
        return res.status === 200
      })
    if (SCENARIOS.has('bare')) {
      const bare = await startBare()
      try {
        const bareBase = bare.base
        let chain = 0
        const barePerCore = await measure(
          'bare: refresh_token (rotating, RS256 ID token), node:http + SQLite',
          bare.child.pid as number,
          async () => rotating(`${bareBase}/oauth2/token`, bare.basic, bare.tokens[chain++] as string),
        )
        if (rs256PerCore > 0)
          console.log(`\nRS256 refresh per CPU-second against the bare anchor: ${(rs256PerCore / barePerCore).toFixed(2)}×`)
      } finally {
        bare.child.kill('SIGTERM')
        await new Promise((resolve) => bare.child.once('exit', resolve))
      }
    }
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(bareDir, { recursive: true, force: true })
  }
}

await main()
