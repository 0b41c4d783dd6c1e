/**
 * LDAP benchmark (not a test; issue 36): Gatehouse's LDAP directory against OpenLDAP's slapd
 * (Debian `slapd`) holding the same people, both on loopback, measured in the same run:
 *   - search by uid on one bound connection, and on 10 (issue 36's goal: ≥ 0.5× slapd);
 *   - bind rate with the main password on 10 connections (Gatehouse: one scrypt check per bind,
 *     like a sign-in; slapd: a salted SHA-1). Its anchor is the scrypt ceiling, measured in this
 *     process right before and right after it (averaged): password verifications
 *     (server/crypto/password.ts: the same parameters, through the same hash queue and its
 *     limits) from 10 loops (goal: ≥ 0.9×);
 *   - bind rate with an app password on 10 connections, against slapd's bind rate (goal: ≥ 0.5×).
 * Prints a Markdown table with the ratios. `npm run bench` runs it after the HTTP scenarios
 * (BENCH_LDAP=0 skips it); alone: `node bin/run-ts.js bench/ldap.ts`.
 *
 *   LDAP_BENCH_SECONDS=5 LDAP_BENCH_PEOPLE=200 node bin/run-ts.js bench/ldap.ts
 *
 * LDAP_BENCH_RUNS=3 repeats the whole measure (both servers, same order) and prints each run and
 * the medians. LDAP_BENCH_PROFILE=<dir> starts Gatehouse with `--cpu-prof` into that directory
 * (the profile is written when it stops at the end).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'ldapts'
import { hashPassword, verifyPassword } from '../server/crypto/password.js'

const SECONDS = Number(process.env.LDAP_BENCH_SECONDS ?? 5)
const PEOPLE = Number(process.env.LDAP_BENCH_PEOPLE ?? 100)
const BASE = 'dc=gatehouse,dc=lan'
const PASSWORD = 'bench-password-123'
const SLAPD = '/usr/sbin/slapd'
const RUNS = Number(process.env.LDAP_BENCH_RUNS ?? 1)
const PROFILE = process.env.LDAP_BENCH_PROFILE
const root = join(import.meta.dirname, '..')

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${out}`)), 30_000)
    const on = (chunk: Buffer) => {
      out += chunk.toString()
      if (pattern.test(out)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', on)
    child.stderr?.on('data', on)
  }).finally(() => {
    // Read on, unkept: a full pipe would stall the child.
    child.stdout?.removeAllListeners('data').resume()
    child.stderr?.removeAllListeners('data').resume()
  })
}

async function startSlapd(dir: string): Promise<Target> {
  const port = await freePort()
  mkdirSync(join(dir, 'db'))
  const hash = execFileSync('/usr/sbin/slappasswd', ['-s', PASSWORD], { encoding: 'utf8' }).trim()
  writeFileSync(
    join(dir, 'slapd.conf'),
    `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile ${dir}/slapd.pid
access to attrs=userPassword by anonymous auth by self write by * none
access to * by * read
database mdb
maxsize 104857600
suffix "${BASE}"
rootdn "cn=admin,${BASE}"
rootpw ${PASSWORD}
directory ${dir}/db
index uid eq
`,
  )
  // -d 0: in the foreground, logging nothing per operation (its stats log would slow it down).
  const child = spawn(SLAPD, ['-f', join(dir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${port}/`, '-d', '0'], { stdio: 'ignore' })
  const url = `ldap://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    const probe = new Client({ url, timeout: 1_000, connectTimeout: 1_000 })
    try {
      await probe.bind(`cn=admin,${BASE}`, PASSWORD)
      await probe.unbind()
      break
    } catch (error) {
      if (attempt > 100) throw new Error(`slapd did not start: ${(error as Error).message}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const people = Array.from(
    { length: PEOPLE },
    (_, i) => `dn: uid=bench${i},ou=people,${BASE}
objectClass: inetOrgPerson
uid: bench${i}
cn: Bench Person ${i}
sn: Person
mail: bench${i}@example.com
userPassword: ${hash}
`,
  )
  const ldif = [
    `dn: ${BASE}\nobjectClass: domain\ndc: gatehouse\n`,
    `dn: ou=people,${BASE}\nobjectClass: organizationalUnit\nou: people\n`,
    ...people,
  ].join('\n')
  execFileSync('ldapadd', ['-x', '-H', url, '-D', `cn=admin,${BASE}`, '-w', PASSWORD], {
    input: ldif,
    stdio: ['pipe', 'ignore', 'inherit'],
  })
  return { url, child, bindDn: (i) => `uid=bench${i},ou=people,${BASE}` }
}

interface Target {
  url: string
  child: ChildProcess
  bindDn: (i: number) => string
  /** Person i's app password (Gatehouse only). */
  appPassword?: (i: number) => string
}

async function startGatehouse(dir: string): Promise<Target> {
  const [port, ldapPort] = [await freePort(), await freePort()]
  const config = join(dir, 'config.json')
  // Every person may search the whole directory here: the bench binds as one of them. Its people sign
  // up without a mailbox, so their unverified addresses are let in (identity.requireVerifiedEmail,
  // on by default, would answer every bind 49).
  writeFileSync(
    config,
    JSON.stringify({
      rateLimit: { enabled: false },
      identity: { requireVerifiedEmail: false },
      ldap: { enabled: true, address: `127.0.0.1:${ldapPort}`, searchRoles: ['user'] },
    }),
  )
  const child = spawn(
    process.execPath,
    [
      ...(PROFILE ? ['--cpu-prof', '--cpu-prof-dir', PROFILE] : []),
      join(root, 'bin', 'gatehouse.js'),
      'serve',
      '--port',
      String(port),
      '--panel-port',
      '0',
      '--data-dir',
      dir,
      '--config',
      config,
    ],
    {
      env: { ...process.env, GATEHOUSE_SECRET: 'bench-secret-0123456789-abcdefghijklmnop', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  await waitFor(child, /LDAP listening on/, 'gatehouse')
  const origin = `http://127.0.0.1:${port}`
  const appPasswords: string[] = []
  for (let i = 0; i < PEOPLE; i++) {
    const res = await fetch(`${origin}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ name: `Bench Person ${i}`, email: `bench${i}@example.com`, username: `bench${i}`, password: PASSWORD }),
    })
    if (res.status !== 200) throw new Error(`sign-up ${i}: ${res.status} ${await res.text()}`)
    // One app password each, made as a user makes it on the account page (the sign-up's fresh session).
    const cookie = res.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ')
    const made = await fetch(`${origin}/api/auth/app-password/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, cookie },
      body: JSON.stringify({ name: 'bench' }),
    })
    if (made.status !== 200) throw new Error(`app password ${i}: ${made.status} ${await made.text()}`)
    appPasswords.push(((await made.json()) as { password: string }).password)
  }
  return {
    url: `ldap://127.0.0.1:${ldapPort}`,
    child,
    bindDn: (i) => `uid=bench${i},ou=people,${BASE}`,
    appPassword: (i) => appPasswords[i % PEOPLE] as string,
  }
}

/** The scrypt ceiling: password verifications per second from 10 loops, through the server's hash queue. */
async function scryptCeiling(): Promise<number> {
  const hash = await hashPassword(PASSWORD)
  const loops = Array.from({ length: 10 }, () => null)
  const end = Date.now() + SECONDS * 1000
  let count = 0
  await Promise.all(
    loops.map(async () => {
      while (Date.now() < end) {
        if (!(await verifyPassword(hash, PASSWORD))) throw new Error('scrypt ceiling: the password did not verify')
        count++
      }
    }),
  )
  return count / SECONDS
}

/** Warm-up before each measure (not counted), for both servers alike: V8 compiles the hot path. */
const WARM_UP_SECONDS = Number(process.env.LDAP_BENCH_WARM_UP ?? 1)

/** Operations per second of `op` run back to back on each of `clients` for SECONDS, after the warm-up. */
async function rate(clients: Client[], op: (c: Client, n: number) => Promise<void>): Promise<number> {
  const loop = async (seconds: number) => {
    const end = Date.now() + seconds * 1000
    let count = 0
    await Promise.all(
      clients.map(async (c, k) => {
        for (let n = k; Date.now() < end; n += clients.length) {
          await op(c, n)
          count++
        }
      }),
    )
    return count
  }
  if (WARM_UP_SECONDS > 0) await loop(WARM_UP_SECONDS)
  return (await loop(SECONDS)) / SECONDS
}

const MEASURES = {
  search1: 'search by uid, 1 connection',
  search10: 'search by uid, 10 connections',
  bindMain: 'bind (main password), 10 connections',
  bindApp: 'bind (app password), 10 connections',
} as const
type Measure = keyof typeof MEASURES

/**
 * The measures on one server. With `ceiling` (Gatehouse), the scrypt ceiling is measured right
 * before and right after the main-password binds and averaged: the load on this shared machine
 * moves by the minute, and the ratio should compare like with like.
 */
async function measure(target: Target, ceiling?: () => Promise<number>): Promise<Partial<Record<Measure | 'ceiling', number>>> {
  const open = async (n: number) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const c = new Client({ url: target.url, timeout: 30_000 })
        await c.bind(target.bindDn(i % PEOPLE), PASSWORD)
        return c
      }),
    )
  const search = async (c: Client, n: number) => {
    const uid = `bench${(n * 7919) % PEOPLE}`
    const { searchEntries } = await c.search(`ou=people,${BASE}`, {
      scope: 'one',
      filter: `(uid=${uid})`,
      attributes: ['uid', 'mail', 'cn'],
    })
    if (searchEntries[0]?.uid !== uid) throw new Error(`search for ${uid} found ${JSON.stringify(searchEntries)}`)
  }
  const one = await open(1)
  const ten = await open(10)
  const result: Partial<Record<Measure | 'ceiling', number>> = {
    search1: await rate(one, search),
    search10: await rate(ten, search),
  }
  const before = ceiling ? await ceiling() : Number.NaN
  result.bindMain = await rate(ten, (c, n) => c.bind(target.bindDn(n % PEOPLE), PASSWORD))
  if (ceiling) result.ceiling = (before + (await ceiling())) / 2
  const { appPassword } = target
  if (appPassword) result.bindApp = await rate(ten, (c, n) => c.bind(target.bindDn(n % PEOPLE), appPassword(n % PEOPLE)))
  for (const c of [...one, ...ten]) await c.unbind()
  return result
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** One run's figures: Gatehouse, its anchor (slapd, or the scrypt ceiling) and the ratio, per measure. */
type Row = { measure: Measure; ours: number; anchor: number; ratio: number; anchorName: string; goal: number }
async function runOnce(gatehouse: Target, slapd: Target): Promise<Row[]> {
  const ours = await measure(gatehouse, scryptCeiling)
  const theirs = await measure(slapd)
  const row = (measure: Measure, anchor: number | undefined, anchorName: string, goal: number): Row => {
    const value = ours[measure] ?? Number.NaN
    const a = anchor ?? Number.NaN
    return { measure, ours: value, anchor: a, ratio: value / a, anchorName, goal }
  }
  return [
    row('search1', theirs.search1, 'slapd', 0.5),
    row('search10', theirs.search10, 'slapd', 0.5),
    row('bindMain', ours.ceiling, 'scrypt ceiling', 0.9),
    // slapd has no app passwords: its bind (a salted SHA-1 of its one password) is the anchor.
    row('bindApp', theirs.bindMain, 'slapd bind', 0.5),
  ]
}

function table(rows: Row[]): string[] {
  const lines = ['| measure | Gatehouse ops/s | anchor | anchor ops/s | ratio | goal |', '|---|---:|---|---:|---:|---:|']
  for (const r of rows) {
    lines.push(
      `| ${MEASURES[r.measure]} | ${r.ours.toFixed(0)} | ${r.anchorName} | ${r.anchor.toFixed(0)} | ${r.ratio.toFixed(2)}× | ≥ ${r.goal}× |`,
    )
  }
  return lines
}

async function main(): Promise<void> {
  if (!existsSync(SLAPD)) {
    console.log('\n## LDAP\n\nskipped: no slapd (install Debian\'s "slapd" package) to compare with')
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-bench-'))
  mkdirSync(join(dir, 'slapd'))
  mkdirSync(join(dir, 'gatehouse'))
  const children: ChildProcess[] = []
  try {
    const slapd = await startSlapd(join(dir, 'slapd'))
    children.push(slapd.child)
    const gatehouse = await startGatehouse(join(dir, 'gatehouse'))
    children.push(gatehouse.child)
    const runs: Row[][] = []
    for (let run = 0; run < RUNS; run++) {
      const rows = await runOnce(gatehouse, slapd)
      runs.push(rows)
      if (RUNS > 1) console.log([``, `run ${run + 1} of ${RUNS}:`, ``, ...table(rows)].join('\n'))
    }
    // Each column's median on its own; the ratio's is of the per-run ratios (a run's pair shares its load).
    const medians: Row[] = (runs[0] as Row[]).map((first, i) => {
      const of = (pick: (r: Row) => number) => median(runs.map((rows) => pick(rows[i] as Row)))
      return { ...first, ours: of((r) => r.ours), anchor: of((r) => r.anchor), ratio: of((r) => r.ratio) }
    })
    const heading = `## LDAP (${PEOPLE} people, ${SECONDS} s per measure, same run${RUNS > 1 ? `, medians of ${RUNS} runs` : ''})`
    console.log(['', heading, '', ...table(medians)].join('\n'))
  } finally {
    await Promise.all(
      children.map((child) => {
        const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())))
        child.kill('SIGTERM')
        return exited
      }),
    )
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
