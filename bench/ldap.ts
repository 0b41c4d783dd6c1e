/**
 * LDAP benchmark (not a test; issue 36): Gatehouse's LDAP directory against OpenLDAP's slapd
 * (Debian `slapd`) holding the same people, both on loopback, measured in the same run:
 *   - search by uid on one bound connection, and on 10;
 *   - bind rate with the main password on 10 connections (Gatehouse: one scrypt check per bind,
 *     like a sign-in; slapd: a salted SHA-1).
 * Prints a Markdown table with Gatehouse / slapd ratios. `npm run bench` runs it after the HTTP
 * scenarios (BENCH_LDAP=0 skips it); alone: `node bin/run-ts.js bench/ldap.ts`.
 *
 *   LDAP_BENCH_SECONDS=5 LDAP_BENCH_PEOPLE=200 node bin/run-ts.js bench/ldap.ts
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'ldapts'

const SECONDS = Number(process.env.LDAP_BENCH_SECONDS ?? 5)
const PEOPLE = Number(process.env.LDAP_BENCH_PEOPLE ?? 100)
const BASE = 'dc=gatehouse,dc=lan'
const PASSWORD = 'bench-password-123'
const SLAPD = '/usr/sbin/slapd'
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

async function startSlapd(dir: string): Promise<{ url: string; child: ChildProcess; bindDn: (i: number) => string }> {
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

async function startGatehouse(dir: string): Promise<{ url: string; child: ChildProcess; bindDn: (i: number) => string }> {
  const [port, ldapPort] = [await freePort(), await freePort()]
  const config = join(dir, 'config.json')
  // Every person may search the whole directory here: the bench binds as one of them.
  writeFileSync(
    config,
    JSON.stringify({ rateLimit: { enabled: false }, ldap: { enabled: true, address: `127.0.0.1:${ldapPort}`, searchRoles: ['user'] } }),
  )
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'gatehouse.js'), 'serve', '--port', String(port), '--panel-port', '0', '--data-dir', dir, '--config', config],
    {
      env: { ...process.env, GATEHOUSE_SECRET: 'bench-secret-0123456789-abcdefghijklmnop', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  await waitFor(child, /LDAP listening on/, 'gatehouse')
  const origin = `http://127.0.0.1:${port}`
  for (let i = 0; i < PEOPLE; i++) {
    const res = await fetch(`${origin}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ name: `Bench Person ${i}`, email: `bench${i}@example.com`, username: `bench${i}`, password: PASSWORD }),
    })
    if (res.status !== 200) throw new Error(`sign-up ${i}: ${res.status} ${await res.text()}`)
  }
  return { url: `ldap://127.0.0.1:${ldapPort}`, child, bindDn: (i) => `uid=bench${i},ou=people,${BASE}` }
}

/** Operations per second of `op` run back to back on each of `clients` for SECONDS. */
async function rate(clients: Client[], op: (c: Client, n: number) => Promise<void>): Promise<number> {
  const end = Date.now() + SECONDS * 1000
  let count = 0
  await Promise.all(
    clients.map(async (c, k) => {
      for (let n = k; Date.now() < end; n += clients.length) {
        await op(c, n)
        count++
      }
    }),
  )
  return count / SECONDS
}

async function measure(target: { url: string; bindDn: (i: number) => string }): Promise<Record<string, number>> {
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
  const result = {
    'search by uid, 1 connection': await rate(one, search),
    'search by uid, 10 connections': await rate(ten, search),
    'bind (main password), 10 connections': await rate(ten, (c, n) => c.bind(target.bindDn(n % PEOPLE), PASSWORD)),
  }
  for (const c of [...one, ...ten]) await c.unbind()
  return result
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
    const ours = await measure(gatehouse)
    const theirs = await measure(slapd)
    const lines = [
      '',
      `## LDAP (${PEOPLE} people, ${SECONDS} s per measure, same run)`,
      '',
      '| measure | Gatehouse ops/s | slapd ops/s | Gatehouse / slapd |',
      '|---|---:|---:|---:|',
    ]
    for (const [name, value] of Object.entries(ours)) {
      const anchor = theirs[name] ?? Number.NaN
      lines.push(`| ${name} | ${value.toFixed(0)} | ${anchor.toFixed(0)} | ${(value / anchor).toFixed(2)}× |`)
    }
    console.log(lines.join('\n'))
  } finally {
    for (const child of children) child.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
