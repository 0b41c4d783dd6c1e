/**
 * LDAP at scale (issue 48; not a test): Gatehouse's directory against OpenLDAP's slapd holding the
 * same people and role groups (1 % admins in `admin`, everyone in `user`), both on loopback, in the
 * same run. Per size: a full paged sync (page 500, uid/cn/mail/memberOf) cold and warm, the
 * group-membership search `(&(objectClass=groupOfNames)(member=<dn>))` and search by uid (rates
 * over LDAP_SCALE_SECONDS), each with the server's CPU time read from /proc/<pid>/stat (utime +
 * stime) beside the wall time — the machine is shared, so CPU is the figure to compare — and
 * HTTP get-session latencies (p50/p99) measured during the warm sync; Gatehouse's resident memory
 * (VmRSS) after three syncs and its start-up time at that size.
 *
 *   LDAP_SCALE_PEOPLE=10000,100000 node bin/run-ts.js bench/ldap-scale.ts
 *
 * People are inserted straight into the SQLite file between a first start (migrations) and the
 * measured start (one transaction; 100 000 HTTP sign-ups would take hours of scrypt). slapd has no
 * memberof overlay here: its people carry no memberOf (Gatehouse's do), its groups list members.
 * Organizations and teams are not seeded (role groups only).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Client } from 'ldapts'

const SIZES = (process.env.LDAP_SCALE_PEOPLE ?? '10000').split(',').map(Number)
const SECONDS = Number(process.env.LDAP_SCALE_SECONDS ?? 3)
const BASE = 'dc=gatehouse,dc=lan'
const PASSWORD = 'bench-password-123'
const root = join(import.meta.dirname, '..')
const TICK = 100 // USER_HZ

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/** CPU seconds (user + system) of a process, from /proc/<pid>/stat. */
function cpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICK
}
const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

interface Target {
  url: string
  pid: number
  child: ChildProcess
  bindDn: string
  http?: string
}

async function waitLdap(url: string, dn: string, password: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const probe = new Client({ url, timeout: 2_000, connectTimeout: 2_000 })
    try {
      await probe.bind(dn, password)
      await probe.unbind()
      return
    } catch (error) {
      if (attempt > 600) throw new Error(`${url} did not start: ${(error as Error).message}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

async function startSlapd(dir: string, people: number): Promise<Target> {
  const port = await freePort()
  mkdirSync(join(dir, 'db'), { recursive: true })
  writeFileSync(
    join(dir, 'slapd.conf'),
    `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile ${dir}/slapd.pid
sizelimit unlimited
access to * by * read
database mdb
maxsize 4294967296
suffix "${BASE}"
rootdn "cn=admin,${BASE}"
rootpw ${PASSWORD}
directory ${dir}/db
index uid,mail,cn eq
index member eq
index objectClass eq
`,
  )
  const lines = [
    `dn: ${BASE}\nobjectClass: domain\ndc: gatehouse\n`,
    `dn: ou=people,${BASE}\nobjectClass: organizationalUnit\nou: people\n`,
  ]
  lines.push(`dn: ou=groups,${BASE}\nobjectClass: organizationalUnit\nou: groups\n`)
  for (let i = 0; i < people; i++) {
    lines.push(
      `dn: uid=p${i},ou=people,${BASE}\nobjectClass: inetOrgPerson\nuid: p${i}\ncn: Person ${i}\nsn: ${i}\nmail: p${i}@example.com\n`,
    )
  }
  const admins = Array.from({ length: Math.ceil(people / 100) }, (_, k) => `member: uid=p${k * 100},ou=people,${BASE}`)
  lines.push(`dn: cn=admin,ou=groups,${BASE}\nobjectClass: groupOfNames\ncn: admin\n${admins.join('\n')}\n`)
  const users = Array.from({ length: people }, (_, i) => (i % 100 === 0 ? null : `member: uid=p${i},ou=people,${BASE}`)).filter(Boolean)
  lines.push(`dn: cn=user,ou=groups,${BASE}\nobjectClass: groupOfNames\ncn: user\n${users.join('\n')}\n`)
  // slapadd: offline bulk load, before slapd starts.
  execFileSync('/usr/sbin/slapadd', ['-f', join(dir, 'slapd.conf'), '-q'], {
    input: lines.join('\n'),
    stdio: ['pipe', 'ignore', 'inherit'],
    maxBuffer: 1 << 30,
  })
  const child = spawn('/usr/sbin/slapd', ['-f', join(dir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${port}/`, '-d', '0'], { stdio: 'ignore' })
  const url = `ldap://127.0.0.1:${port}`
  await waitLdap(url, `cn=admin,${BASE}`, PASSWORD)
  return { url, child, pid: child.pid as number, bindDn: `cn=admin,${BASE}` }
}

function gatehouseArgs(dir: string, port: number): string[] {
  return [
    join(root, 'bin', 'gatehouse.js'),
    'serve',
    '--port',
    String(port),
    '--panel-port',
    '0',
    '--data-dir',
    dir,
    '--config',
    join(dir, 'config.json'),
  ]
}
const ENV = { ...process.env, GATEHOUSE_SECRET: 'bench-secret-0123456789-abcdefghijklmnop', NODE_ENV: 'production' }

function spawnGatehouse(dir: string, port: number): { child: ChildProcess; started: Promise<void> } {
  const child = spawn(process.execPath, gatehouseArgs(dir, port), { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] })
  const started = new Promise<void>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`gatehouse did not start:\n${out}`)), 120_000)
    const on = (chunk: Buffer) => {
      out += chunk.toString()
      if (/LDAP listening on/.test(out)) {
        clearTimeout(timer)
        child.stdout?.removeAllListeners('data').resume()
        child.stderr?.removeAllListeners('data').resume()
        resolve()
      }
    }
    child.stdout?.on('data', on)
    child.stderr?.on('data', on)
  })
  return { child, started }
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })

async function startGatehouse(dir: string, people: number): Promise<Target & { startup: number }> {
  const [port, ldapPort] = [await freePort(), await freePort()]
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ rateLimit: { enabled: false }, ldap: { enabled: true, address: `127.0.0.1:${ldapPort}`, searchRoles: ['admin'] } }),
  )
  // First start: migrations, and the reader signed up over HTTP (a real password).
  const first = spawnGatehouse(dir, port)
  await first.started
  const origin = `http://127.0.0.1:${port}`
  const res = await fetch(`${origin}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ name: 'Bench Reader', email: 'reader@example.com', username: 'reader', password: PASSWORD }),
  })
  if (res.status !== 200) throw new Error(`sign-up: ${res.status} ${await res.text()}`)
  await stop(first.child)
  const db = new Database(join(dir, 'gatehouse.db'))
  db.prepare("update user set role = 'admin', emailVerified = 1 where username = 'reader'").run()
  const insert = db.prepare(
    'insert into user (id, name, email, emailVerified, createdAt, updatedAt, username, role) values (?, ?, ?, 1, ?, ?, ?, ?)',
  )
  const t0 = Date.UTC(2026, 0, 1)
  db.transaction(() => {
    for (let i = 0; i < people; i++)
      insert.run(`u${i}`, `Person ${i}`, `p${i}@example.com`, t0 + i, t0, `p${i}`, i % 100 === 0 ? 'admin' : 'user')
  })()
  db.close()
  const begun = performance.now()
  const second = spawnGatehouse(dir, port)
  await second.started
  const startup = (performance.now() - begun) / 1000
  const url = `ldap://127.0.0.1:${ldapPort}`
  await waitLdap(url, `uid=reader,ou=people,${BASE}`, PASSWORD)
  return { url, child: second.child, pid: second.child.pid as number, bindDn: `uid=reader,ou=people,${BASE}`, http: origin, startup }
}

/** Wall and server CPU seconds of `op`. */
async function timed<T>(pid: number, op: () => Promise<T>): Promise<{ wall: number; cpu: number; value: T }> {
  const c0 = cpu(pid)
  const t0 = performance.now()
  const value = await op()
  return { wall: (performance.now() - t0) / 1000, cpu: cpu(pid) - c0, value }
}

async function sync(target: Target): Promise<number> {
  const c = new Client({ url: target.url, timeout: 600_000 })
  await c.bind(target.bindDn, PASSWORD)
  const { searchEntries } = await c.search(`ou=people,${BASE}`, {
    scope: 'one',
    filter: '(objectClass=inetOrgPerson)',
    attributes: ['uid', 'cn', 'mail', 'memberOf'],
    paged: { pageSize: 500 },
  })
  await c.unbind()
  return searchEntries.length
}

/** Operations per wall second and server CPU milliseconds per operation, over SECONDS. */
async function rate(
  target: Target,
  people: number,
  op: (c: Client, n: number) => Promise<void>,
): Promise<{ perSecond: number; cpuMs: number }> {
  const c = new Client({ url: target.url, timeout: 600_000 })
  await c.bind(target.bindDn, PASSWORD)
  await op(c, 1) // warm
  let n = 0
  const r = await timed(target.pid, async () => {
    const end = Date.now() + SECONDS * 1000
    while (Date.now() < end) await op(c, (n++ * 7919) % people)
  })
  await c.unbind()
  return { perSecond: n / r.wall, cpuMs: (r.cpu * 1000) / n }
}

async function httpDuring(origin: string | undefined, during: Promise<unknown>): Promise<{ p50: number; p99: number } | null> {
  if (!origin) return null
  const times: number[] = []
  let done = false
  during.finally(() => {
    done = true
  })
  while (!done) {
    const t0 = performance.now()
    const res = await fetch(`${origin}/api/auth/get-session`)
    await res.arrayBuffer()
    times.push(performance.now() - t0)
    await new Promise((r) => setTimeout(r, 5))
  }
  times.sort((a, b) => a - b)
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? Number.NaN
  return { p50: at(0.5), p99: at(0.99) }
}

async function measure(target: Target, people: number) {
  const cold = await timed(target.pid, () => sync(target))
  const warmRun = timed(target.pid, () => sync(target))
  const http = await httpDuring(target.http, warmRun)
  const warm = await warmRun
  await sync(target)
  const rss = rssMb(target.pid)
  const member = await rate(target, people, async (c, i) => {
    const dn = `uid=p${i},ou=people,${BASE}`
    const { searchEntries } = await c.search(`ou=groups,${BASE}`, {
      scope: 'one',
      filter: `(&(objectClass=groupOfNames)(member=${dn}))`,
      attributes: ['cn'],
    })
    if (searchEntries.length !== 1) throw new Error(`groups of ${dn}: ${JSON.stringify(searchEntries)}`)
  })
  const uid = await rate(target, people, async (c, i) => {
    const { searchEntries } = await c.search(`ou=people,${BASE}`, {
      scope: 'one',
      filter: `(uid=p${i})`,
      attributes: ['uid', 'mail', 'cn'],
    })
    if (searchEntries[0]?.uid !== `p${i}`) throw new Error(`uid p${i}: ${JSON.stringify(searchEntries)}`)
  })
  return { cold, warm, http, rss, member, uid }
}

const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '–')

async function main(): Promise<void> {
  const lines = [
    '| people | measure | Gatehouse wall s | Gatehouse CPU s | slapd wall s | slapd CPU s | ratio (CPU, slapd/Gatehouse) |',
    '|---:|---|---:|---:|---:|---:|---:|',
  ]
  const extra: string[] = []
  for (const people of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-scale-'))
    const children: ChildProcess[] = []
    try {
      mkdirSync(join(dir, 'slapd'))
      mkdirSync(join(dir, 'gatehouse'))
      const slapd = await startSlapd(join(dir, 'slapd'), people)
      children.push(slapd.child)
      const theirs = await measure(slapd, people)
      await stop(slapd.child)
      const gatehouse = await startGatehouse(join(dir, 'gatehouse'), people)
      children.push(gatehouse.child)
      const ours = await measure(gatehouse, people)
      const row = (what: string, a: { wall: number; cpu: number }, b: { wall: number; cpu: number }) =>
        lines.push(`| ${people} | ${what} | ${f(a.wall)} | ${f(a.cpu)} | ${f(b.wall)} | ${f(b.cpu)} | ${f(b.cpu / a.cpu)}× |`)
      row('full paged sync, cold', ours.cold, theirs.cold)
      row('full paged sync, warm', ours.warm, theirs.warm)
      const rateRow = (what: string, a: { perSecond: number; cpuMs: number }, b: { perSecond: number; cpuMs: number }) =>
        lines.push(
          `| ${people} | ${what} (ops/s wall; CPU ms/op) | ${f(a.perSecond, 0)} | ${f(a.cpuMs, 3)} ms | ${f(b.perSecond, 0)} | ${f(b.cpuMs, 3)} ms | ${f(b.cpuMs / a.cpuMs)}× |`,
        )
      rateRow('group search by member', ours.member, theirs.member)
      rateRow('search by uid', ours.uid, theirs.uid)
      extra.push(
        `- ${people} people: Gatehouse start-up ${f(gatehouse.startup)} s; resident memory after three syncs ${f(ours.rss, 0)} MB (slapd ${f(theirs.rss, 0)} MB); HTTP get-session during the warm sync p50 ${f(ours.http?.p50 ?? Number.NaN, 1)} ms, p99 ${f(ours.http?.p99 ?? Number.NaN, 1)} ms; entries returned ${ours.cold.value} (slapd ${theirs.cold.value})`,
      )
    } finally {
      await Promise.all(children.map(stop))
      rmSync(dir, { recursive: true, force: true })
    }
    console.log([...lines, '', ...extra].join('\n'))
  }
}

await main()
