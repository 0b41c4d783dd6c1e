/**
 * LDAP under attack (issue 48; not a test): does a hostile directory client stall HTTP, starve
 * another person's sign-in, or spray passwords faster than HTTP allows? Gatehouse (the built
 * bundle, `gatehouse serve`, SQLite, default limits) with LDAP on loopback, LDAP_ATTACK_PEOPLE
 * people (10 000 by default) inserted into its SQLite file between a first start and the measured
 * one, then, phase by phase, one attack while a separate process (the prober, its own CPU
 * scheduling) asks HTTP `GET /api/auth/get-session` (a signed-in cookie) and `GET /api/auth/ok` at
 * a steady rate (LDAP_ATTACK_RATE per second each, open loop) and keeps their latencies:
 *
 *   baseline  no attack;
 *   sign-ins  no attack, another person signing in over HTTP every 2 s (the control for b);
 *   sync      a full paged sync (page 500, uid/cn/mail/memberOf) by a service user, cold (the
 *             directory's first load) and warm;
 *   a         unauthenticated searches with a 1 MiB filter (one OR of ~35 000 equality clauses),
 *             4 connections at once, each reconnecting when closed;
 *   a+bound   the same from 4 connections bound as an ordinary person (just under 1 MiB);
 *   b         64 connections of binds with wrong passwords (a different person each time) from one
 *             address, while another person signs in over HTTP every 2 s from their own address
 *             (each outcome and time kept); failed password checks per second counted;
 *   b+queue   the same with `ldap.rateLimit` raised out of the way (SIGHUP reload), so the
 *             password-hash queue's per-source share is the only line left;
 *   c         idle connections from 20 loopback addresses (127.0.3.x), 64 each, held open; then
 *             whether a bind from another address is still served;
 *   spray     the HTTP comparison for b: 64 concurrent wrong-password sign-ins from one address.
 *
 *   node bin/run-ts.js bench/ldap-attack.ts
 *   LDAP_ATTACK_PEOPLE=100000 LDAP_ATTACK_SECONDS=20 node bin/run-ts.js bench/ldap-attack.ts
 *
 * LDAP_ATTACK_PHASES=baseline,b picks phases; LDAP_ATTACK_PROFILE=<dir> starts Gatehouse with
 * `--cpu-prof` into that directory (written when it stops at the end).
 */
import { type ChildProcess, fork } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BerWriter } from '@ldapjs/asn1'
import Database from 'better-sqlite3'
import { Client } from 'ldapts'
import { freePort } from '../tests/helpers/engines.js'
import { cpuSeconds, spawnGatehouse, stopChild } from './gatehouse-process.js'

const PEOPLE = Number(process.env.LDAP_ATTACK_PEOPLE ?? 10_000)
const SECONDS = Number(process.env.LDAP_ATTACK_SECONDS ?? 15)
const RATE = Number(process.env.LDAP_ATTACK_RATE ?? 50)
const PROFILE = process.env.LDAP_ATTACK_PROFILE
const ALL_PHASES = ['baseline', 'sign-ins', 'sync', 'a', 'a+bound', 'b', 'b+queue', 'c', 'spray']
const PHASES = (process.env.LDAP_ATTACK_PHASES ?? ALL_PHASES.join(',')).split(',')
const BASE = 'dc=gatehouse,dc=lan'
const PASSWORD = 'bench-password-123'
const root = join(import.meta.dirname, '..')

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function percentiles(times: number[]): { n: number; p50: number; p99: number; max: number } {
  const sorted = [...times].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? Number.NaN }
}

// ---------------------------------------------------------------------------------------------
// HTTP from a chosen loopback source address (the server limits and shares per source).

interface Answer {
  status: number
  ms: number
  setCookie: string[]
  body: string
}

function httpCall(
  origin: string,
  method: string,
  path: string,
  options: { localAddress: string; agent?: http.Agent; cookie?: string; body?: unknown; timeout?: number },
): Promise<Answer> {
  const url = new URL(`${origin}/api/auth${path}`)
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
  const headers: Record<string, string> = { origin }
  if (options.cookie) headers.cookie = options.cookie
  if (payload) {
    headers['content-type'] = 'application/json'
    headers['content-length'] = String(Buffer.byteLength(payload))
  }
  const t0 = performance.now()
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname,
        headers,
        localAddress: options.localAddress,
        agent: options.agent ?? false,
        timeout: options.timeout ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: performance.now() - t0,
            setCookie: ([] as string[]).concat(res.headers['set-cookie'] ?? []),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        )
        res.on('error', () => resolve({ status: -1, ms: performance.now() - t0, setCookie: [], body: '' }))
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', () => resolve({ status: -1, ms: performance.now() - t0, setCookie: [], body: '' }))
    if (payload) req.write(payload)
    req.end()
  })
}

// ---------------------------------------------------------------------------------------------
// The prober (a child process): HTTP latencies at a steady rate, and another person's sign-ins.

interface ProbeStart {
  type: 'start'
  origin: string
  cookie: string
  rate: number
  signIn?: { email: string; password: string; everyMs: number; firstAddress: number }
}
interface Latencies {
  n: number
  p50: number
  p99: number
  max: number
  failed: number
}
interface ProbeResult {
  type: 'result'
  getSession: Latencies
  ok: Latencies
  signIns: { status: number; ms: number }[]
}

function runProber(): void {
  let stopAll: (() => Promise<ProbeResult>) | null = null
  process.on('message', async (message: ProbeStart | { type: 'stop' } | { type: 'exit' }) => {
    if (message.type === 'exit') process.exit(0)
    if (message.type === 'stop') {
      const result = await stopAll?.()
      process.send?.(result)
      return
    }
    const loops: Array<() => Promise<Latencies>> = []
    const steady = (path: string, localAddress: string, cookie?: string) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
      const times: number[] = []
      let failed = 0
      const inFlight = new Set<Promise<void>>()
      const timer = setInterval(() => {
        const p = httpCall(message.origin, 'GET', path, { localAddress, agent, cookie }).then((a) => {
          if (a.status === 200) times.push(a.ms)
          else failed++
          inFlight.delete(p)
        })
        inFlight.add(p)
      }, 1000 / message.rate)
      loops.push(async () => {
        clearInterval(timer)
        await Promise.all(inFlight)
        agent.destroy()
        return { ...percentiles(times), failed }
      })
    }
    steady('/get-session', '127.0.0.3', message.cookie)
    steady('/ok', '127.0.0.4')
    const signIns: { status: number; ms: number }[] = []
    let signInTimer: NodeJS.Timeout | null = null
    const signInFlight = new Set<Promise<void>>()
    if (message.signIn) {
      const { email, password, everyMs } = message.signIn
      let k = message.signIn.firstAddress
      const one = () => {
        // A fresh address each time: the person's own sign-ins stay under the HTTP limiter's strict rule.
        const localAddress = `127.0.${1 + Math.floor(k / 250)}.${1 + (k % 250)}`
        k++
        const p = httpCall(message.origin, 'POST', '/sign-in/email', { localAddress, body: { email, password }, timeout: 30_000 }).then(
          (a) => {
            signIns.push({ status: a.status, ms: a.ms })
            signInFlight.delete(p)
          },
        )
        signInFlight.add(p)
      }
      signInTimer = setInterval(one, everyMs)
      setTimeout(one, 200)
    }
    stopAll = async () => {
      if (signInTimer) clearInterval(signInTimer)
      const [getSession, ok] = await Promise.all(loops.map((l) => l()))
      await Promise.all(signInFlight)
      return { type: 'result', getSession: getSession as Latencies, ok: ok as Latencies, signIns }
    }
  })
  process.send?.({ type: 'ready' })
}

class Prober {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<Prober> {
    const child = fork(join(root, 'bin', 'run-ts.js'), [fileURLToPath(import.meta.url)], {
      env: { ...process.env, LDAP_ATTACK_ROLE: 'probe' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    await new Promise<void>((resolve) => child.once('message', () => resolve()))
    return new Prober(child)
  }

  start(message: Omit<ProbeStart, 'type' | 'rate'>): void {
    this.child.send({ type: 'start', rate: RATE, ...message })
  }

  stop(): Promise<ProbeResult> {
    return new Promise((resolve) => {
      this.child.once('message', (m) => resolve(m as ProbeResult))
      this.child.send({ type: 'stop' })
    })
  }

  close(): void {
    this.child.send({ type: 'exit' })
  }
}

// ---------------------------------------------------------------------------------------------
// The server.

const cpu = cpuSeconds

const stop = stopChild

interface Server {
  origin: string
  ldapPort: number
  ldapUrl: string
  child: ChildProcess
  pid: number
  dir: string
  config: Record<string, unknown>
  /** Rewrites config.json and has the server re-read it (SIGHUP). */
  reconfigure(ldap: Record<string, unknown>): Promise<void>
}

const READER = { name: 'Bench Reader', email: 'reader@example.com', username: 'reader', password: PASSWORD }
const ALICE = { name: 'Alice Other', email: 'alice@example.com', username: 'alice', password: PASSWORD }

async function startServer(dir: string): Promise<Server> {
  const [port, ldapPort] = [await freePort(), await freePort()]
  const ldap = { enabled: true, address: `127.0.0.1:${ldapPort}`, searchRoles: ['admin'] }
  // The prober's two steady paths may exceed the general rule (100 per 10 s per source and path); nothing else changes.
  const rateLimit = { customRules: { '/get-session': { window: 10, max: 1_000_000 }, '/ok': { window: 10, max: 1_000_000 } } }
  const config: Record<string, unknown> = { ldap, rateLimit }
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config))
  const first = spawnGatehouse({ dataDir: dir, port })
  await first.started
  const origin = `http://127.0.0.1:${port}`
  let address = 100
  for (const who of [READER, ALICE]) {
    const res = await httpCall(origin, 'POST', '/sign-up/email', { localAddress: `127.0.9.${address++}`, body: who })
    if (res.status !== 200) throw new Error(`sign-up: ${res.status} ${res.body}`)
  }
  await stop(first.child)
  const db = new Database(join(dir, 'gatehouse.db'))
  db.prepare("update user set role = 'admin' where username = 'reader'").run()
  db.prepare('update user set emailVerified = 1').run()
  const insert = db.prepare(
    'insert into user (id, name, email, emailVerified, createdAt, updatedAt, username, role) values (?, ?, ?, 1, ?, ?, ?, ?)',
  )
  const t0 = Date.UTC(2026, 0, 1)
  db.transaction(() => {
    for (let i = 0; i < PEOPLE; i++)
      insert.run(`u${i}`, `Person ${i}`, `p${i}@example.com`, t0 + i, t0, `p${i}`, i % 100 === 0 ? 'admin' : 'user')
  })()
  db.close()
  const second = spawnGatehouse({ dataDir: dir, port, nodeArgs: PROFILE ? ['--cpu-prof', '--cpu-prof-dir', PROFILE] : [] })
  await second.started
  const child = second.child
  return {
    origin,
    ldapPort,
    ldapUrl: `ldap://127.0.0.1:${ldapPort}`,
    child,
    pid: child.pid as number,
    dir,
    config,
    async reconfigure(changes) {
      Object.assign(ldap, changes)
      writeFileSync(join(dir, 'config.json'), JSON.stringify(config))
      child.kill('SIGHUP')
      await sleep(500)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// LDAP attackers.

/** ldapts's `createConnection(port, host)`, from a chosen source address. */
const fromAddress = (localAddress: string) => (port: number, host: string) => net.connect({ port, host, localAddress })

function ldapClient(server: Server, localAddress: string): Client {
  return new Client({ url: server.ldapUrl, timeout: 600_000, connectTimeout: 10_000, createConnection: fromAddress(localAddress) as never })
}

/** A SearchRequest whose filter is one OR of equality clauses, `bytes` long at most (the whole message). */
function hugeSearch(id: number, maxBytes: number): { bytes: Buffer; clauses: number } {
  const build = (clauses: number) => {
    const w = new BerWriter({ size: maxBytes + 1024 })
    w.startSequence(0x30)
    w.writeInt(id)
    w.startSequence(0x63)
    w.writeString(`ou=people,${BASE}`)
    w.writeEnumeration(2)
    w.writeEnumeration(0)
    w.writeInt(0)
    w.writeInt(0)
    w.writeBoolean(false)
    w.startSequence(0xa1)
    for (let i = 0; i < clauses; i++) {
      w.startSequence(0xa3)
      w.writeString('uid')
      w.writeString(`attacker-value-${String(i).padStart(6, '0')}`)
      w.endSequence()
    }
    w.endSequence()
    w.startSequence(0x30)
    w.writeString('uid')
    w.endSequence()
    w.endSequence()
    w.endSequence()
    return w.buffer
  }
  // Each clause is 31 bytes: as many as fit.
  let clauses = Math.floor((maxBytes - 200) / 31)
  let bytes = build(clauses)
  while (bytes.length > maxBytes) {
    clauses -= 100
    bytes = build(clauses)
  }
  return { bytes, clauses }
}

function bindRequest(id: number, dn: string, password: string): Buffer {
  const w = new BerWriter({ size: 256 })
  w.startSequence(0x30)
  w.writeInt(id)
  w.startSequence(0x60)
  w.writeInt(3)
  w.writeString(dn)
  w.writeString(password, 0x80)
  w.endSequence()
  w.endSequence()
  return w.buffer
}

interface Attack {
  stop(): Promise<string>
}

/** (a): anonymous connections sending a 1 MiB search, reconnecting whenever the server closes them. */
function hugeFilterAnonymous(server: Server, connections: number): Attack {
  const { bytes, clauses } = hugeSearch(1, 1024 * 1024)
  let running = true
  let sent = 0
  let closed = 0
  let notices = 0
  const loops = Array.from({ length: connections }, async () => {
    while (running) {
      await new Promise<void>((resolve) => {
        const socket = net.connect({ port: server.ldapPort, host: '127.0.0.1', localAddress: '127.0.0.6' })
        socket.on('error', () => undefined)
        socket.on('data', () => {
          notices++
        })
        socket.on('close', () => {
          closed++
          resolve()
        })
        socket.on('connect', () => {
          sent++
          socket.write(bytes, () => socket.end())
        })
      })
    }
  })
  return {
    async stop() {
      running = false
      await Promise.all(loops)
      return `${bytes.length} B filter of ${clauses} clauses; ${sent} sent on ${connections} connections, ${closed} closed by either side, ${notices} answers (notices)`
    },
  }
}

/** (a+bound): connections bound as a person, sending the same search (just under 1 MiB) again and again. */
async function hugeFilterBound(server: Server, connections: number): Promise<Attack> {
  const { bytes, clauses } = hugeSearch(2, 1024 * 1024 - 16)
  let running = true
  let sent = 0
  let answers = 0
  let closed = 0
  const sockets = await Promise.all(
    Array.from({ length: connections }, async (_, k) => {
      const socket = net.connect({ port: server.ldapPort, host: '127.0.0.1', localAddress: `127.0.0.${20 + k}` })
      socket.on('error', () => undefined)
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
      socket.write(bindRequest(1, `uid=alice,ou=people,${BASE}`, PASSWORD))
      await new Promise<void>((resolve) => socket.once('data', () => resolve()))
      return socket
    }),
  )
  const loops = sockets.map(async (socket) => {
    let answered: (() => void) | null = null
    socket.on('data', () => answered?.())
    socket.on('close', () => {
      closed++
      answered?.()
    })
    while (running && !socket.destroyed) {
      const answer = new Promise<void>((resolve) => {
        answered = resolve
      })
      socket.write(bytes)
      sent++
      await answer
      answers++
    }
    socket.destroy()
  })
  return {
    async stop() {
      running = false
      await Promise.all(loops)
      return `${bytes.length} B filter of ${clauses} clauses; ${sent} sent on ${connections} bound connections, ${answers} answered, ${closed} closed`
    },
  }
}

/** (b): connections binding with wrong passwords, a different person each time, from one address. */
async function bindFlood(server: Server, connections: number): Promise<Attack & { failedChecks(from: number, to: number): number }> {
  let running = true
  const codes = new Map<string, number>()
  /** When each failed password check (invalidCredentials) was answered. */
  const failedAt: number[] = []
  let next = 0
  const clients = Array.from({ length: connections }, () => ldapClient(server, '127.0.0.8'))
  const loops = clients.map(async (client) => {
    while (running) {
      const i = next++ % PEOPLE
      let code = 'success'
      try {
        await client.bind(`uid=p${i},ou=people,${BASE}`, `wrong-${next}`)
      } catch (error) {
        code = String((error as { code?: number }).code ?? (error as Error).message)
      }
      codes.set(code, (codes.get(code) ?? 0) + 1)
      if (code === '49') failedAt.push(performance.now())
    }
    await client.unbind().catch(() => undefined)
  })
  return {
    failedChecks: (from, to) => failedAt.filter((t) => t >= from && t <= to).length,
    async stop() {
      running = false
      await Promise.all(loops)
      const total = [...codes.values()].reduce((a, b) => a + b, 0)
      return `${total} binds on ${connections} connections: ${[...codes].map(([c, n]) => `${n}×${c}`).join(', ')}`
    },
  }
}

/** (c): idle connections from many addresses, held. */
async function idleConnections(server: Server, addresses: number, perAddress: number): Promise<Attack> {
  const sockets: net.Socket[] = []
  /** Connections the server ended (a Notice of Disconnection, or closed). */
  const ended = new Set<net.Socket>()
  await Promise.all(
    Array.from({ length: addresses }, async (_, a) => {
      for (let k = 0; k < perAddress; k++) {
        const socket = net.connect({ port: server.ldapPort, host: '127.0.0.1', localAddress: `127.0.3.${1 + a}` })
        socket.on('error', () => undefined)
        socket.on('data', () => undefined)
        socket.on('end', () => ended.add(socket))
        socket.on('close', () => ended.add(socket))
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('error', () => resolve()))
        sockets.push(socket)
      }
    }),
  )
  await sleep(500)
  const refused = ended.size
  return {
    async stop() {
      const open = sockets.length - ended.size
      for (const s of sockets) s.destroy()
      return `${sockets.length} connections from ${addresses} addresses: ${sockets.length - refused} held, ${refused} refused at once; ${open} still open at the end`
    },
  }
}

/** A bind as the reader from another address: served or not. */
async function readerBind(server: Server, localAddress: string): Promise<string> {
  const c = ldapClient(server, localAddress)
  const t0 = performance.now()
  try {
    await c.bind(`uid=reader,ou=people,${BASE}`, PASSWORD)
    await c.unbind()
    return `bound in ${(performance.now() - t0).toFixed(0)} ms`
  } catch (error) {
    await c.unbind().catch(() => undefined)
    return `refused (${(error as Error).message.slice(0, 80)})`
  }
}

async function fullSync(server: Server): Promise<{ entries: number; seconds: number }> {
  const c = ldapClient(server, '127.0.0.9')
  await c.bind(`uid=reader,ou=people,${BASE}`, PASSWORD)
  const t0 = performance.now()
  const { searchEntries } = await c.search(`ou=people,${BASE}`, {
    scope: 'one',
    filter: '(objectClass=inetOrgPerson)',
    attributes: ['uid', 'cn', 'mail', 'memberOf'],
    paged: { pageSize: 500 },
  })
  const seconds = (performance.now() - t0) / 1000
  await c.unbind()
  return { entries: searchEntries.length, seconds }
}

/** The HTTP side of b: wrong-password sign-ins from one address, `concurrency` at a time. */
function httpSpray(server: Server, concurrency: number): Attack & { failedChecks(from: number, to: number): number } {
  let running = true
  /** When each failed password check (401) was answered. */
  const failedAt: number[] = []
  const statuses = new Map<number, number>()
  let next = 0
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) {
      const i = next++ % PEOPLE
      const a = await httpCall(server.origin, 'POST', '/sign-in/email', {
        localAddress: '127.0.2.1',
        agent,
        body: { email: `p${i}@example.com`, password: `wrong-${next}` },
        timeout: 30_000,
      })
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
      if (a.status === 401) failedAt.push(performance.now())
    }
  })
  return {
    failedChecks: (from, to) => failedAt.filter((t) => t >= from && t <= to).length,
    async stop() {
      running = false
      await Promise.all(loops)
      agent.destroy()
      const total = [...statuses.values()].reduce((a, b) => a + b, 0)
      return `${total} sign-ins on ${concurrency} connections: ${[...statuses].map(([c, n]) => `${n}×${c}`).join(', ')}`
    },
  }
}

// ---------------------------------------------------------------------------------------------

interface Row {
  phase: string
  seconds: number
  cpu: number
  probe: ProbeResult
  attack: string
  extra: string
}

const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–')

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-attack-'))
  const rows: Row[] = []
  let server: Server | null = null
  const prober = await Prober.start()
  let signInAddress = 0
  try {
    const t0 = performance.now()
    server = await startServer(dir)
    console.error(`started with ${PEOPLE} people in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    const s = server
    const signIn = await httpCall(s.origin, 'POST', '/sign-in/email', { localAddress: '127.0.0.5', body: ALICE })
    if (signIn.status !== 200) throw new Error(`sign-in: ${signIn.status} ${signIn.body}`)
    const cookie = signIn.setCookie.map((c) => c.split(';')[0]).join('; ')
    const check = await httpCall(s.origin, 'GET', '/get-session', { localAddress: '127.0.0.5', cookie })
    if (!check.body.includes(ALICE.email)) throw new Error(`get-session did not answer the person: ${check.body}`)

    /** Runs `attack` while the prober measures; `body` decides when the phase ends (default SECONDS). */
    const phase = async (
      name: string,
      run: () => Promise<{ attack: string; extra?: string }>,
      options: { signIns?: boolean } = {},
    ): Promise<void> => {
      if (!PHASES.includes(name) && !PHASES.includes(name.split(' ')[0] as string)) return
      console.error(`phase ${name}…`)
      const signInOption = options.signIns
        ? { email: ALICE.email, password: ALICE.password, everyMs: 2000, firstAddress: signInAddress }
        : undefined
      if (signInOption) signInAddress += Math.ceil((SECONDS * 1000) / 2000) + 5
      const c0 = cpu(s.pid)
      const w0 = performance.now()
      prober.start({ origin: s.origin, cookie, signIn: signInOption })
      await sleep(300)
      const { attack, extra = '' } = await run()
      const probe = await prober.stop()
      const seconds = (performance.now() - w0) / 1000
      rows.push({ phase: name, seconds, cpu: cpu(s.pid) - c0, probe, attack, extra })
      console.error(`  ${JSON.stringify(rows[rows.length - 1])}`)
      await sleep(1000)
    }
    const forSeconds = async <T extends Attack>(attack: T, after?: (a: T) => Promise<string> | string) => {
      await sleep(SECONDS * 1000)
      const extra = after ? await after(attack) : ''
      return { attack: await attack.stop(), extra }
    }

    await phase('baseline', async () => {
      await sleep(SECONDS * 1000)
      return { attack: 'none' }
    })
    await phase(
      'sign-ins',
      async () => {
        await sleep(SECONDS * 1000)
        return { attack: 'none: the other person signs in over HTTP every 2 s (the control for b)' }
      },
      { signIns: true },
    )
    await phase('sync (cold: first load)', async () => {
      const r = await fullSync(s)
      return { attack: `${r.entries} entries in ${f(r.seconds, 2)} s` }
    })
    await phase('sync (warm)', async () => {
      const r = await fullSync(s)
      return { attack: `${r.entries} entries in ${f(r.seconds, 2)} s` }
    })
    await phase('a', () => forSeconds(hugeFilterAnonymous(s, 4)))
    await phase('a+bound', async () => forSeconds(await hugeFilterBound(s, 4)))
    let ldapSpray = Number.NaN
    await phase(
      'b',
      async () => {
        const started = performance.now()
        const flood = await bindFlood(s, 64)
        return forSeconds(flood, (a) => {
          ldapSpray = a.failedChecks(started, started + SECONDS * 1000) / SECONDS
          return `failed password checks over LDAP from the flooding address: ${f(ldapSpray, 2)}/s`
        })
      },
      { signIns: true },
    )
    if (PHASES.includes('b+queue')) {
      // Out of the limiter's way: the hash queue's per-source share is the only line left.
      await s.reconfigure({ rateLimit: { window: 1, max: 1_000_000 } })
      await phase(
        'b+queue',
        async () => {
          const started = performance.now()
          const flood = await bindFlood(s, 64)
          return forSeconds(
            flood,
            (a) =>
              `failed password checks over LDAP (limiter raised): ${f(a.failedChecks(started, started + SECONDS * 1000) / SECONDS, 2)}/s`,
          )
        },
        { signIns: true },
      )
      await s.reconfigure({ rateLimit: undefined })
    }
    await phase('c', async () => {
      const attack = await idleConnections(s, 20, 64)
      return forSeconds(attack, async () => `a bind from another address while held: ${await readerBind(s, '127.0.0.10')}`)
    })
    let httpSprayRate = Number.NaN
    await phase('spray', async () => {
      const started = performance.now()
      return forSeconds(httpSpray(s, 64), (a) => {
        httpSprayRate = a.failedChecks(started, started + SECONDS * 1000) / SECONDS
        return `failed password checks over HTTP sign-in from one address: ${f(httpSprayRate, 2)}/s`
      })
    })

    console.log(
      `\n${PEOPLE} people, ${SECONDS} s per attack, prober ${RATE}/s per path (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at the end)\n`,
    )
    console.log(
      '| phase | s | server CPU s | get-session p50 / p99 / max ms (n, failed) | /ok p50 / p99 / max ms (n, failed) | HTTP sign-ins of another person (status×n, max ms) |',
    )
    console.log('|---|---:|---:|---|---|---|')
    for (const r of rows) {
      const g = r.probe.getSession
      const o = r.probe.ok
      const signIns = r.probe.signIns
      const byStatus = new Map<number, number>()
      for (const x of signIns) byStatus.set(x.status, (byStatus.get(x.status) ?? 0) + 1)
      const signInText =
        signIns.length === 0
          ? '–'
          : `${[...byStatus].map(([c, n]) => `${c}×${n}`).join(', ')}; ${f(percentiles(signIns.map((x) => x.ms)).p50, 0)} / max ${f(Math.max(...signIns.map((x) => x.ms)), 0)} ms`
      console.log(
        `| ${r.phase} | ${f(r.seconds)} | ${f(r.cpu, 2)} | ${f(g.p50)} / **${f(g.p99)}** / ${f(g.max)} (${g.n}, ${g.failed}) | ${f(o.p50)} / **${f(o.p99)}** / ${f(o.max)} (${o.n}, ${o.failed}) | ${signInText} |`,
      )
    }
    console.log('')
    for (const r of rows) console.log(`- ${r.phase}: ${r.attack}${r.extra ? `; ${r.extra}` : ''}`)
    if (Number.isFinite(ldapSpray) && Number.isFinite(httpSprayRate)) {
      console.log(
        `\nFailed password checks per second from one address: LDAP ${f(ldapSpray, 2)}/s, HTTP ${f(httpSprayRate, 2)}/s (goal: LDAP ≤ HTTP): ${ldapSpray <= httpSprayRate ? 'met' : 'NOT met'}`,
      )
    }
  } finally {
    prober.close()
    if (server) await stop(server.child)
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.env.LDAP_ATTACK_ROLE === 'probe') runProber()
else await main()
