/**
 * LDAP at scale (issue 48; not a test): Gatehouse's directory against OpenLDAP's slapd holding the
 * same people and groups (1 % admins in `admin`, everyone else in `user`; 200 organizations, each
 * person a member of one, `<org>` and `<org>:member`, and of one of its two teams, `<org>/team-a`
 * or `<org>/team-b`: four groups each), both on loopback, in the same run, on SQLite and
 * PostgreSQL. Per size: a full paged sync (page 500, uid/cn/mail/memberOf, the client bound
 * beforehand) cold (right after start: read from its first page, and again from the moment the
 * listener opened, when Gatehouse starts loading the directory, less the two binds' cost; each the
 * median of LDAP_SCALE_COLD_STARTS starts, 5 by default, every sample listed under the table: one
 * start's reading varied by up to a third from the next start's) and warm, the group-membership search
 * `(&(objectClass=groupOfNames)(member=<dn>))` and search by uid (rates over LDAP_SCALE_SECONDS),
 * each with the server's CPU time read from /proc/<pid>/stat (utime + stime) beside the wall time,
 * per page too — the machine is shared, so CPU is the figure to compare — HTTP get-session
 * latencies (p50/p99) during a cold sync (on a start of its own, whose sync's CPU, HTTP's
 * included, is a row of its own: the cold and warm rows are the sync's alone, as slapd's are) and
 * during a warm one, Gatehouse's resident memory (VmRSS) after three syncs and while idling, and
 * its start-up time at that size.
 *
 *   LDAP_SCALE_PEOPLE=10000,100000 LDAP_SCALE_ENGINES=sqlite,postgres node bin/run-ts.js bench/ldap-scale.ts
 *
 * People, organizations, memberships, teams and team memberships are inserted straight into the
 * database (SQLite file or a private PostgreSQL, tests/helpers/engines.ts) between a first start
 * (migrations) and the measured start (100 000 HTTP sign-ups would take hours of scrypt). slapd has
 * no memberof overlay here: its people carry no memberOf (Gatehouse's do), its groups list members.
 * On PostgreSQL the database's own CPU (every postgres process) is reported beside Gatehouse's.
 * LDAP_SCALE_SLAPD=0 skips slapd; LDAP_SCALE_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`)
 * is passed to the measured Gatehouse process; LDAP_SCALE_IDLE (seconds, 90) is how long memory is
 * read, each second, after the measures (the readings at the start, at 30 s and at the end, and the
 * second from which it stayed within 20 % of the reading after three syncs). LDAP_SCALE_MEASURES
 * (e.g. `uid` or `member,uid`; all by default: `sync`, `member`, `uid`) runs only those measures
 * (the others show as –), and LDAP_SCALE_IDLE=0 skips the idle wait: enough to iterate on one figure. LDAP_SCALE_PG_STATEMENTS=1 (PostgreSQL) loads
 * pg_stat_statements and prints the statements Gatehouse sent during the measures, by calls.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'ldapts'
import pg from 'pg'
import { orgOf, roleOf, seedPostgres, seedSqlite, teamOf } from './ldap-seed.js'
import { cpuSeconds, spawnGatehouse, stopChild } from './gatehouse-process.js'
import { freePort, type PostgresServer, startPostgres } from '../tests/helpers/engines.js'

const SIZES = (process.env.LDAP_SCALE_PEOPLE ?? '10000').split(',').map(Number)
const SECONDS = Number(process.env.LDAP_SCALE_SECONDS ?? 3)
const ENGINES = (process.env.LDAP_SCALE_ENGINES ?? 'sqlite').split(',') as Array<'sqlite' | 'postgres'>
const WITH_SLAPD = process.env.LDAP_SCALE_SLAPD !== '0'
const NODE_ARGS = (process.env.LDAP_SCALE_NODE_ARGS ?? '').split(' ').filter(Boolean)
const IDLE = Number(process.env.LDAP_SCALE_IDLE ?? 90)
const PG_STATEMENTS = process.env.LDAP_SCALE_PG_STATEMENTS === '1'
const MEASURES = new Set((process.env.LDAP_SCALE_MEASURES ?? 'sync,member,uid').split(','))
/** Starts whose cold sync is measured, per server (the cold rows are their medians). */
const COLD_STARTS = Math.max(1, Number(process.env.LDAP_SCALE_COLD_STARTS ?? 5))
const GROUPS_PER_PERSON = 4
const BASE = 'dc=gatehouse,dc=lan'
const PASSWORD = 'bench-password-123'
const TICK = 100 // USER_HZ

const cpu = cpuSeconds
/** CPU seconds of every process whose parent is `parent`, and of `parent` (PostgreSQL's backends). */
function treeCpu(parent: number): number {
  let total = cpu(parent)
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[1]) === parent) total += (Number(fields[11]) + Number(fields[12])) / TICK
    } catch {}
  }
  return total
}
const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

interface Target {
  url: string
  pid: number
  /** The database's processes (PostgreSQL's postmaster), whose CPU is reported apart. */
  dbPid?: number
  child: ChildProcess
  bindDn: string
  http?: string
  /** slapd's port (it is started again on it for each further cold sync). */
  port?: number
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
  const members = new Map<string, string[]>()
  const add = (group: string, i: number) => {
    const list = members.get(group)
    const line = `member: uid=p${i},ou=people,${BASE}`
    if (list) list.push(line)
    else members.set(group, [line])
  }
  for (let i = 0; i < people; i++) {
    add(roleOf(i), i)
    add(orgOf(i), i)
    add(`${orgOf(i)}:member`, i)
    add(`${orgOf(i)}/${teamOf(i)}`, i)
  }
  for (const [group, list] of members)
    lines.push(`dn: cn=${group},ou=groups,${BASE}\nobjectClass: groupOfNames\ncn: ${group}\n${list.join('\n')}\n`)
  // slapadd: offline bulk load, before slapd starts.
  execFileSync('/usr/sbin/slapadd', ['-f', join(dir, 'slapd.conf'), '-q'], {
    input: lines.join('\n'),
    stdio: ['pipe', 'ignore', 'inherit'],
    maxBuffer: 1 << 30,
  })
  return runSlapd(dir, port)
}

/** slapd on the database `startSlapd` loaded in `dir` (started again for each further cold sync). */
async function runSlapd(dir: string, port: number): Promise<Target> {
  const child = spawn('/usr/sbin/slapd', ['-f', join(dir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${port}/`, '-d', '0'], { stdio: 'ignore' })
  const url = `ldap://127.0.0.1:${port}`
  await waitLdap(url, `cn=admin,${BASE}`, PASSWORD)
  return { url, child, pid: child.pid as number, bindDn: `cn=admin,${BASE}`, port }
}

const stop = stopChild
const serveArgs = (dir: string, databaseUrl?: string) => [
  '--config',
  join(dir, 'config.json'),
  ...(databaseUrl ? ['--database-url', databaseUrl] : []),
]

/** The postmaster's pid (its backends are its children). */
async function postmasterPid(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query("select setting from pg_settings where name = 'data_directory'")
    return Number(readFileSync(join(rows[0].setting, 'postmaster.pid'), 'utf8').split('\n')[0])
  } finally {
    await client.end()
  }
}

/** Gatehouse's data for `people`: a first start (migrations, the reader signed up over HTTP), then the seed. */
async function prepareGatehouse(dir: string, people: number, databaseUrl?: string): Promise<Prepared> {
  const [port, ldapPort] = [await freePort(), await freePort()]
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ rateLimit: { enabled: false }, ldap: { enabled: true, address: `127.0.0.1:${ldapPort}`, searchRoles: ['admin'] } }),
  )
  // First start: migrations, and the reader signed up over HTTP (a real password).
  const first = spawnGatehouse({ dataDir: dir, port, serveArgs: serveArgs(dir, databaseUrl), timeoutMs: 120_000 })
  await first.started
  const origin = `http://127.0.0.1:${port}`
  const res = await fetch(`${origin}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ name: 'Bench Reader', email: 'reader@example.com', username: 'reader', password: PASSWORD }),
  })
  if (res.status !== 200) throw new Error(`sign-up: ${res.status} ${await res.text()}`)
  await stop(first.child)
  if (databaseUrl) await seedPostgres(databaseUrl, people)
  else seedSqlite(join(dir, 'gatehouse.db'), people)
  return { dir, port, ldapPort, databaseUrl }
}

interface Prepared {
  dir: string
  port: number
  ldapPort: number
  databaseUrl: string | undefined
}

/** A measured start of a prepared Gatehouse (its directory not loaded yet: the first search is cold). */
async function launchGatehouse(prepared: Prepared): Promise<Target & { startup: number; startupCpu: number; listening: Listening }> {
  const { dir, port, ldapPort, databaseUrl } = prepared
  const dbPid = databaseUrl ? await postmasterPid(databaseUrl) : undefined
  const begun = performance.now()
  const started = spawnGatehouse({ dataDir: dir, port, nodeArgs: NODE_ARGS, serveArgs: serveArgs(dir, databaseUrl), timeoutMs: 120_000 })
  await started.started
  const at = performance.now()
  const startup = (at - begun) / 1000
  const startupCpu = cpu(started.child.pid as number)
  const listening = { at, cpu: startupCpu, dbCpu: dbPid ? treeCpu(dbPid) : Number.NaN }
  const url = `ldap://127.0.0.1:${ldapPort}`
  await waitLdap(url, `uid=reader,ou=people,${BASE}`, PASSWORD)
  return {
    url,
    child: started.child,
    pid: started.child.pid as number,
    dbPid,
    bindDn: `uid=reader,ou=people,${BASE}`,
    http: `http://127.0.0.1:${port}`,
    startup,
    startupCpu,
    listening,
  }
}

/**
 * The moment the LDAP listener opened (the directory starts loading then, before any client asks):
 * wall clock, the server's CPU seconds and the database's.
 */
interface Listening {
  at: number
  cpu: number
  dbCpu: number
}

interface Timed<T> {
  wall: number
  cpu: number
  /** The database's CPU seconds meanwhile (PostgreSQL), NaN without one. */
  dbCpu: number
  value: T
}

/** Wall and server CPU seconds of `op`. */
async function timed<T>(target: Pick<Target, 'pid' | 'dbPid'>, op: () => Promise<T>, from?: Listening): Promise<Timed<T>> {
  const c0 = from?.cpu ?? cpu(target.pid)
  const d0 = from?.dbCpu ?? (target.dbPid ? treeCpu(target.dbPid) : Number.NaN)
  const t0 = from?.at ?? performance.now()
  const value = await op()
  const wall = (performance.now() - t0) / 1000
  const dbCpu = target.dbPid ? treeCpu(target.dbPid) - d0 : Number.NaN
  return { wall, cpu: cpu(target.pid) - c0, dbCpu, value }
}

interface Synced {
  entries: number
  /** Server CPU milliseconds of each page, in order (read between pages). */
  pageCpuMs: number[]
}

/** A client bound as the reader (binding hashes a password on Gatehouse's side: never inside a timed sync). */
async function bound(target: Target): Promise<Client> {
  const c = new Client({ url: target.url, timeout: 600_000 })
  await c.bind(target.bindDn, PASSWORD)
  return c
}

/** A full paged sync (page 500, uid/cn/mail/memberOf) on a bound client, the server's CPU read after each page. */
async function sync(target: Target, c: Client): Promise<Synced> {
  const pageCpuMs: number[] = []
  let entries = 0
  let last = cpu(target.pid)
  for await (const page of c.searchPaginated(`ou=people,${BASE}`, {
    scope: 'one',
    filter: '(objectClass=inetOrgPerson)',
    attributes: ['uid', 'cn', 'mail', 'memberOf'],
    paged: { pageSize: 500 },
  })) {
    entries += page.searchEntries.length
    const now = cpu(target.pid)
    pageCpuMs.push((now - last) * 1000)
    last = now
  }
  return { entries, pageCpuMs }
}

/**
 * A cold sync with HTTP get-session requested alongside (one at a time, 5 ms apart), on a start of
 * its own: the latencies HTTP sees while the directory loads and pages, and the CPU of both.
 */
async function coldWithHttp(prepared: Prepared): Promise<{ cold: Timed<Synced>; http: Awaited<ReturnType<typeof httpDuring>> }> {
  const target = await launchGatehouse(prepared)
  try {
    const c = await bound(target)
    const coldRun = timed(target, () => sync(target, c))
    const http = await httpDuring(target.http, coldRun)
    const cold = await coldRun
    await c.unbind()
    return { cold, http }
  } finally {
    await stop(target.child)
  }
}

/** Operations per wall second and server CPU milliseconds per operation, over SECONDS. */
async function rate(
  target: Target,
  people: number,
  op: (c: Client, n: number) => Promise<void>,
): Promise<{ perSecond: number; cpuMs: number; dbCpuMs: number }> {
  const c = new Client({ url: target.url, timeout: 600_000 })
  await c.bind(target.bindDn, PASSWORD)
  await op(c, 1) // warm
  let n = 0
  const r = await timed(target, async () => {
    const end = Date.now() + SECONDS * 1000
    while (Date.now() < end) await op(c, (n++ * 7919) % people)
  })
  await c.unbind()
  return { perSecond: n / r.wall, cpuMs: (r.cpu * 1000) / n, dbCpuMs: (r.dbCpu * 1000) / n }
}

async function httpDuring(origin: string | undefined, during: Promise<unknown>): Promise<{ p50: number; p99: number; n: number } | null> {
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
  return { p50: at(0.5), p99: at(0.99), n: times.length }
}

/**
 * Resident memory while idle, read each second for IDLE seconds: at the start (right after the
 * searches), at 30 s and at the end, and from which second on it stayed within 20 % of `reference`
 * (the reading after three syncs). V8 gives back the pages of the garbage the searches promoted
 * only when its memory reducer collects, which it starts once the allocation rate has stayed low
 * for a while, not at a fixed second: when it came back is the figure, not one reading.
 */
async function idleMemory(
  pid: number,
  reference: number,
): Promise<{ start: number; at30: number; end: number; withinFrom: number | null }> {
  const start = rssMb(pid)
  let at30 = Number.NaN
  let end = start
  let lastAbove = start > reference * 1.2 ? 0 : -1
  for (let second = 1; second <= IDLE; second++) {
    await new Promise((r) => setTimeout(r, 1000))
    end = rssMb(pid)
    if (second === 30) at30 = end
    if (end > reference * 1.2) lastAbove = second
  }
  return { start, at30, end, withinFrom: lastAbove === IDLE ? null : lastAbove + 1 }
}

/**
 * The first sync after a start, on a client bound since, read two ways at once: from its first
 * page (`cold`, as the rows of earlier sessions), and from the moment the listener opened
 * (`coldWhole`), so that the part of the load done before the first page (while the client bound)
 * is counted too, less the two binds' own cost (waitLdap's and this client's: password hashes,
 * measured right after). slapd loads nothing before the first search: its two readings are one.
 */
async function coldSync(target: Target & { listening?: Listening }, c: Client): Promise<{ cold: Timed<Synced>; coldWhole: Timed<Synced> }> {
  // One sync, two clocks: the outer reading's value is the inner one.
  const whole = await timed(target, () => timed(target, () => sync(target, c)), target.listening)
  const cold = whole.value
  if (!target.listening) return { cold, coldWhole: cold }
  const binds = await timed(target, async () => {
    for (let i = 0; i < 2; i++) await (await bound(target)).unbind()
  })
  return { cold, coldWhole: { ...whole, value: cold.value, cpu: whole.cpu - binds.cpu, dbCpu: whole.dbCpu - binds.dbCpu } }
}

/** The cold syncs of COLD_STARTS − 1 more starts (`start` launches the server, then it is stopped). */
async function moreColdSyncs(
  start: () => Promise<Target & { listening?: Listening }>,
): Promise<Array<{ cold: Timed<Synced>; coldWhole: Timed<Synced> }>> {
  const out: Array<{ cold: Timed<Synced>; coldWhole: Timed<Synced> }> = []
  for (let k = 1; k < COLD_STARTS; k++) {
    const target = await start()
    try {
      const c = await bound(target)
      out.push(await coldSync(target, c))
      await c.unbind()
    } finally {
      await stop(target.child)
    }
  }
  return out
}

/** The median of `xs` (the mean of the two middle values for an even count), NaN when empty. */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  if (s.length === 0) return Number.NaN
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

/** The median of each reading of `samples` (wall, CPU, the database's CPU), the first sample's pages. */
function medianOf(samples: Array<Timed<Synced>>): Timed<Synced> {
  return {
    wall: median(samples.map((t) => t.wall)),
    cpu: median(samples.map((t) => t.cpu)),
    dbCpu: median(samples.map((t) => t.dbCpu)),
    value: (samples[0] as Timed<Synced>).value,
  }
}

/** Each sample's wall and CPU seconds, for the notes under the table. */
const samplesText = (samples: Array<Timed<Synced>>): string =>
  // PostgreSQL's CPU less the binds' can read a hair below zero at small sizes (two readings' noise): signed as it is.
  samples.map((t) => `${f(t.wall)}/${f(t.cpu)}${Number.isFinite(t.dbCpu) ? `${t.dbCpu < 0 ? '' : '+'}${f(t.dbCpu)}` : ''}`).join(', ')

async function measure(target: Target & { listening?: Listening }, people: number) {
  // The cold and warm syncs are measured alone (slapd serves no HTTP beside them: its CPU is the
  // sync's alone too); HTTP get-session latencies during a third sync here, during a cold one in
  // `coldWithHttp` (a start of its own).
  const skipped = { wall: Number.NaN, cpu: Number.NaN, dbCpu: Number.NaN, value: { entries: 0, pageCpuMs: [] as number[] } }
  const skippedRate = { perSecond: Number.NaN, cpuMs: Number.NaN, dbCpuMs: Number.NaN }
  let cold: Timed<Synced> = skipped
  let coldWhole: Timed<Synced> = skipped
  let warm: Timed<Synced> = skipped
  let http: Awaited<ReturnType<typeof httpDuring>> = null
  if (MEASURES.has('sync')) {
    const c = await bound(target)
    ;({ cold, coldWhole } = await coldSync(target, c))
    warm = await timed(target, () => sync(target, c))
    const thirdRun = sync(target, c)
    http = await httpDuring(target.http, thirdRun)
    await thirdRun
    await c.unbind()
  }
  const rss = rssMb(target.pid)
  const member = !MEASURES.has('member')
    ? skippedRate
    : await rate(target, people, async (c, i) => {
        const dn = `uid=p${i},ou=people,${BASE}`
        const { searchEntries } = await c.search(`ou=groups,${BASE}`, {
          scope: 'one',
          filter: `(&(objectClass=groupOfNames)(member=${dn}))`,
          attributes: ['cn'],
        })
        if (searchEntries.length !== GROUPS_PER_PERSON) throw new Error(`groups of ${dn}: ${JSON.stringify(searchEntries)}`)
      })
  const uid = !MEASURES.has('uid')
    ? skippedRate
    : await rate(target, people, async (c, i) => {
        const { searchEntries } = await c.search(`ou=people,${BASE}`, {
          scope: 'one',
          filter: `(uid=p${i})`,
          attributes: ['uid', 'mail', 'cn'],
        })
        if (searchEntries[0]?.uid !== `p${i}`) throw new Error(`uid p${i}: ${JSON.stringify(searchEntries)}`)
      })
  const idle = await idleMemory(target.pid, rss)
  return { cold, coldWhole, warm, http, rss, idle, member, uid }
}

/** The spread of page costs: median, and the first and last tenth's medians (a page's cost must not depend on its place). */
function pageSpread(ms: number[]): string {
  const tenth = Math.max(1, Math.floor(ms.length / 10))
  return `page CPU median ${median(ms).toFixed(0)} ms (first tenth ${median(ms.slice(0, tenth)).toFixed(0)}, last tenth ${median(ms.slice(-tenth)).toFixed(0)}, max ${Math.max(...ms).toFixed(0)})`
}

/** pg_stat_statements: emptied before the measures, then the statements they sent, by calls. */
async function statements(url: string, what: 'reset' | 'report'): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    if (what === 'reset') {
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
      await client.query('SELECT pg_stat_statements_reset()')
      return ''
    }
    const { rows } = await client.query(
      "SELECT calls, total_exec_time, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC LIMIT 12",
    )
    return [
      '- statements during the measures (pg_stat_statements, by calls):',
      ...rows.map((r) => `  - ${r.calls}× (${Number(r.total_exec_time).toFixed(0)} ms) ${r.query}`),
    ].join('\n')
  } finally {
    await client.end()
  }
}

const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '–')

async function main(): Promise<void> {
  const lines = [
    '| people | engine | measure | Gatehouse wall s | Gatehouse CPU s | PostgreSQL CPU s | slapd wall s | slapd CPU s | ratio (CPU, slapd/Gatehouse) |',
    '|---:|---|---|---:|---:|---:|---:|---:|---:|',
  ]
  const extra: string[] = [
    `- load average at the start: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  ]
  const none = { wall: Number.NaN, cpu: Number.NaN, perSecond: Number.NaN, cpuMs: Number.NaN, value: { entries: 0, pageCpuMs: [] } }
  for (const people of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-scale-'))
    const children: ChildProcess[] = []
    let postgres: PostgresServer | null = null
    try {
      mkdirSync(join(dir, 'slapd'))
      let theirs: Awaited<ReturnType<typeof measure>> | null = null
      if (WITH_SLAPD) {
        const slapd = await startSlapd(join(dir, 'slapd'), people)
        children.push(slapd.child)
        theirs = await measure(slapd, people)
        await stop(slapd.child)
        if (MEASURES.has('sync')) {
          const more = await moreColdSyncs(async () => {
            const again = await runSlapd(join(dir, 'slapd'), slapd.port as number)
            children.push(again.child)
            return again
          })
          const samples = [theirs.cold, ...more.map((m) => m.cold)]
          const median = medianOf(samples)
          theirs = { ...theirs, cold: median, coldWhole: median }
          extra.push(`- ${people} people, slapd: cold syncs of ${samples.length} starts, wall/CPU s: ${samplesText(samples)}`)
        }
        extra.push(
          `- ${people} people, slapd: resident memory after three syncs ${f(theirs.rss, 0)} MB; ${pageSpread(theirs.warm.value.pageCpuMs)} warm; entries ${theirs.cold.value.entries}`,
        )
      }
      for (const engine of ENGINES) {
        const home = join(dir, `gatehouse-${engine}`)
        mkdirSync(home)
        let databaseUrl: string | undefined
        if (engine === 'postgres') {
          postgres ??= await startPostgres({
            shared_buffers: '256MB',
            ...(PG_STATEMENTS ? { shared_preload_libraries: 'pg_stat_statements' } : {}),
          })
          databaseUrl = await postgres.createDatabase(`ldap_scale_${people}`)
        }
        const prepared = await prepareGatehouse(home, people, databaseUrl)
        const gatehouse = await launchGatehouse(prepared)
        children.push(gatehouse.child)
        if (PG_STATEMENTS && databaseUrl) await statements(databaseUrl, 'reset')
        let ours = await measure(gatehouse, people)
        if (PG_STATEMENTS && databaseUrl) extra.push(await statements(databaseUrl, 'report'))
        await stop(gatehouse.child)
        if (MEASURES.has('sync')) {
          const more = await moreColdSyncs(async () => {
            const again = await launchGatehouse(prepared)
            children.push(again.child)
            return again
          })
          const cold = [ours.cold, ...more.map((m) => m.cold)]
          const whole = [ours.coldWhole, ...more.map((m) => m.coldWhole)]
          ours = { ...ours, cold: medianOf(cold), coldWhole: medianOf(whole) }
          extra.push(
            `- ${people} people, ${engine}: cold syncs of ${cold.length} starts, wall/CPU s${databaseUrl ? '+PostgreSQL CPU s' : ''}: from the first page ${samplesText(cold)}; the load counted from the listener's start ${samplesText(whole)}`,
          )
        }
        const withHttp = MEASURES.has('sync') ? await coldWithHttp(prepared) : null
        const t = theirs ?? { cold: none, warm: none, member: none, uid: none }
        const row = (what: string, a: Timed<unknown>, b: { wall: number; cpu: number }) =>
          lines.push(
            `| ${people} | ${engine} | ${what} | ${f(a.wall)} | ${f(a.cpu)} | ${f(a.dbCpu)} | ${f(b.wall)} | ${f(b.cpu)} | ${f(b.cpu / a.cpu)}× |`,
          )
        const starts = COLD_STARTS > 1 ? `, median of ${COLD_STARTS} starts` : ''
        row(`full paged sync, cold${starts}`, ours.cold, t.cold)
        row(`full paged sync, cold, the load counted from the listener's start (wall: from there)${starts}`, ours.coldWhole, t.cold)
        row('full paged sync, warm', ours.warm, t.warm)
        if (withHttp) row('full paged sync, cold, HTTP get-session alongside', withHttp.cold, t.cold)
        const rateRow = (what: string, a: { perSecond: number; cpuMs: number; dbCpuMs: number }, b: { perSecond: number; cpuMs: number }) =>
          lines.push(
            `| ${people} | ${engine} | ${what} (ops/s wall; CPU ms/op) | ${f(a.perSecond, 0)} | ${f(a.cpuMs, 3)} ms | ${f(a.dbCpuMs, 3)} ms | ${f(b.perSecond, 0)} | ${f(b.cpuMs, 3)} ms | ${f(b.cpuMs / a.cpuMs)}× |`,
          )
        rateRow('group search by member', ours.member, t.member)
        rateRow('search by uid', ours.uid, t.uid)
        extra.push(
          `- ${people} people, ${engine}: Gatehouse start-up ${f(gatehouse.startup)} s wall (${f(gatehouse.startupCpu)} s CPU); resident memory after three syncs ${f(ours.rss, 0)} MB, after the searches ${f(ours.idle.start, 0)} MB, idle 30 s ${f(ours.idle.at30, 0)} MB, idle ${IDLE} s ${f(ours.idle.end, 0)} MB, within 20 % of the first figure ${ours.idle.withinFrom === null ? `not by ${IDLE} s of idle` : `from ${ours.idle.withinFrom} s of idle on`}; HTTP get-session during a cold sync (${withHttp?.http?.n} requests) p50 ${f(withHttp?.http?.p50 ?? Number.NaN, 1)} ms, p99 ${f(withHttp?.http?.p99 ?? Number.NaN, 1)} ms, during a warm sync p50 ${f(ours.http?.p50 ?? Number.NaN, 1)} ms, p99 ${f(ours.http?.p99 ?? Number.NaN, 1)} ms; cold ${pageSpread(ours.cold.value.pageCpuMs)}; warm ${pageSpread(ours.warm.value.pageCpuMs)}; entries ${ours.cold.value.entries}`,
        )
        console.log([...lines, '', ...extra].join('\n'))
      }
    } finally {
      await Promise.all(children.map(stop))
      await postgres?.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  extra.push(
    `- load average at the end: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  )
  console.log([...lines, '', ...extra].join('\n'))
}

await main()
