/**
 * The exact `total` of list-users at 1 000 000 users on SQLite: today's count(*) for each query
 * shape of bench/list-users.ts against the counts proposed in docs/proposals/list-users-total.md
 * (indexes that answer the filters, the trigram index counting substring matches, a maintained
 * count). Not a test; run on demand:
 *
 *   node bin/run-ts.js bench/list-users-total.ts               # 1 000 000 users, 15 runs per row
 *   BENCH_USERS=200000 BENCH_RUNS=10 node bin/run-ts.js bench/list-users-total.ts
 *
 * Same population as bench/list-users.ts (same generator and seed). Times the COUNT alone (the
 * page of 100 rows is already cheap, see docs/BENCHMARKS.md), in ms, p50 and p95.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../server/db/index.js'

const USERS = Number(process.env.BENCH_USERS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-total-'))

const FIRST = [
  'olivia',
  'liam',
  'emma',
  'noah',
  'ava',
  'elijah',
  'sophia',
  'lucas',
  'mia',
  'mateo',
  'amelia',
  'levi',
  'harper',
  'ezra',
  'evelyn',
  'james',
  'luna',
  'asher',
  'ella',
  'leo',
  'chloe',
  'henry',
  'nora',
  'jack',
  'zoe',
]
const LAST = [
  'smith',
  'johnson',
  'williams',
  'brown',
  'jones',
  'garcia',
  'miller',
  'davis',
  'rodriguez',
  'martinez',
  'hernandez',
  'lopez',
  'gonzalez',
  'wilson',
  'anderson',
  'thomas',
  'taylor',
  'moore',
  'jackson',
  'martin',
  'lee',
  'perez',
  'thompson',
  'white',
  'harris',
  'sanchez',
  'clark',
  'ramirez',
  'lewis',
  'robinson',
]
const DOMAINS = ['example.com', 'mail.test', 'corp.example', 'lan.local', 'uni.example.org']
const cap = (s: string) => s[0]?.toUpperCase() + s.slice(1)
function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}
const random = rng(42)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN

const database = openDatabase(join(dir, 'gatehouse.db'))
const { sqlite } = database
const t0 = performance.now()
const insert = sqlite.prepare(
  'INSERT INTO user (id, name, email, emailVerified, image, createdAt, updatedAt, role, banned) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
)
const emails: string[] = []
const start = Date.UTC(2024, 0, 1)
sqlite.transaction(() => {
  for (let i = 0; i < USERS; i++) {
    const first = pick(FIRST)
    const last = pick(LAST)
    const email = `${first}.${last}${i}@${pick(DOMAINS)}`
    emails.push(email)
    const created = start + i * 60_000 + Math.floor(random() * 60_000)
    insert.run(
      `bench${i.toString(36).padStart(27, '0')}`,
      `${cap(first)} ${cap(last)}`,
      email,
      random() < 0.8 ? 1 : 0,
      random() < 0.3 ? `https://avatars.example.com/${i}.png` : null,
      created,
      created,
      random() < 0.01 ? 'admin' : 'user',
      random() < 0.02 ? 1 : 0,
    )
  }
})()
console.log(`filled ${USERS} users in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

const fragment = () => {
  const email = pick(emails)
  const local = email.slice(0, email.indexOf('@'))
  const len = 5 + Math.floor(random() * 3)
  const at = Math.floor(random() * Math.max(1, local.length - len))
  return local.slice(at, at + len)
}
const esc = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`)
const phrase = (col: string, term: string) => `${col} : "${term.replace(/"/g, '""')}"`
/** The exclusive upper bound of a prefix range: the prefix with its last character incremented. */
const after = (prefix: string) => prefix.slice(0, -1) + String.fromCodePoint((prefix.codePointAt(prefix.length - 1) ?? 0) + 1)

interface Shape {
  name: string
  term: () => string
  today: (t: string) => number
  proposed: (t: string) => number
}
const one = (stmt: string) => {
  const s = sqlite.prepare(stmt).pluck()
  return (...args: unknown[]) => s.get(...args) as number
}

function shapes(): Shape[] {
  const likeEmail = one("SELECT count(*) FROM user WHERE email LIKE ? ESCAPE '\\'")
  const likeName = one("SELECT count(*) FROM user WHERE name LIKE ? ESCAPE '\\'")
  // Proposed: the FTS5 trigram index finds the candidates, LIKE on the indexed copy re-checks them.
  const ftsCount = one("SELECT count(*) FROM user_search WHERE user_search MATCH ? AND email LIKE ? ESCAPE '\\'")
  const ftsNameCount = one("SELECT count(*) FROM user_search WHERE user_search MATCH ? AND name LIKE ? ESCAPE '\\'")
  const prefixCount = one("SELECT count(*) FROM user WHERE lower(email) >= ? AND lower(email) < ? AND email LIKE ? ESCAPE '\\'")
  // An ASCII prefix without wildcards: the lower(email) range is exactly LIKE's rows (SQLite's
  // lower() and LIKE both fold ASCII only), so the index alone answers, no row is read.
  const prefixIndexOnly = one('SELECT count(*) FROM user WHERE lower(email) >= ? AND lower(email) < ?')
  const roleToday = one('SELECT count(*) FROM user WHERE role = ?')
  const bannedToday = one('SELECT count(*) FROM user WHERE coalesce(banned, 0) = ?')
  const counted = one('SELECT n FROM userCount WHERE role = ? AND banned = ?')
  const countedBanned = one('SELECT coalesce(sum(n), 0) FROM userCount WHERE banned = ?')
  const allToday = one('SELECT count(*) FROM user')
  const allCounted = one('SELECT coalesce(sum(n), 0) FROM userCount')
  return [
    {
      name: 'email contains a 5-7 character fragment',
      term: fragment,
      today: (t) => likeEmail(`%${esc(t)}%`),
      proposed: (t) => ftsCount(phrase('email', t), `%${esc(t)}%`),
    },
    {
      name: 'name contains a first name (~4 %)',
      term: () => pick(FIRST),
      today: (t) => likeName(`%${esc(t)}%`),
      proposed: (t) => ftsNameCount(phrase('name', t), `%${esc(t)}%`),
    },
    {
      name: 'email contains "example" (~60 %), first time',
      term: () => 'example',
      today: (t) => likeEmail(`%${t}%`),
      proposed: (t) => ftsCount(phrase('email', t), `%${t}%`),
    },
    {
      name: 'email starts_with a 2-letter prefix',
      term: () => pick(FIRST).slice(0, 2),
      today: (t) => likeEmail(`${esc(t)}%`),
      proposed: (t) =>
        /^[\x20-\x7e]+$/.test(t) && !/[%_\\]/.test(t)
          ? prefixIndexOnly(t.toLowerCase(), after(t.toLowerCase()))
          : prefixCount(t.toLowerCase(), after(t.toLowerCase()), `${esc(t)}%`),
    },
    { name: 'role eq admin (1 %)', term: () => 'admin', today: (t) => roleToday(t), proposed: (t) => counted(t, 0) + counted(t, 1) },
    { name: 'role eq user (99 %)', term: () => 'user', today: (t) => roleToday(t), proposed: (t) => counted(t, 0) + counted(t, 1) },
    { name: 'banned eq true (2 %)', term: () => '1', today: (t) => bannedToday(Number(t)), proposed: (t) => countedBanned(Number(t)) },
    { name: 'everyone (sorted pages)', term: () => '', today: () => allToday(), proposed: () => allCounted() },
  ]
}

const proposal = readFileSync(join(import.meta.dirname, '..', 'docs', 'proposals', 'list-users-total.sqlite.sql'), 'utf8')
const t1 = performance.now()
sqlite.exec(proposal)
console.log(`proposal migration applied in ${((performance.now() - t1) / 1000).toFixed(1)} s`)
sqlite.exec('ANALYZE')

const load = loadavg()[0]?.toFixed(1)
console.log(`\n${USERS} users, ${RUNS} runs per row, load average ${load} (2 vCPU shared with other work)\n`)
console.log('| count for | today p50 | today p95 | proposed p50 | proposed p95 | same totals |')
console.log('|---|---|---|---|---|---|')
for (const shape of shapes()) {
  const today: number[] = []
  const proposed: number[] = []
  let same = true
  for (let i = 0; i < RUNS; i++) {
    const term = shape.term()
    let a = performance.now()
    const x = shape.today(term)
    today.push(performance.now() - a)
    a = performance.now()
    const y = shape.proposed(term)
    proposed.push(performance.now() - a)
    if (x !== y) {
      same = false
      console.error(`  MISMATCH ${shape.name} "${term}": today ${x}, proposed ${y}`)
    }
  }
  today.sort((p, q) => p - q)
  proposed.sort((p, q) => p - q)
  const f = (n: number) => n.toFixed(1)
  console.log(
    `| ${shape.name} | ${f(percentile(today, 50))} | ${f(percentile(today, 95))} | ${f(percentile(proposed, 50))} | ${f(percentile(proposed, 95))} | ${same ? 'yes' : 'NO'} |`,
  )
}
database.close()
rmSync(dir, { recursive: true, force: true })
