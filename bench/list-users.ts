/**
 * list-users at 100 000 users (not a test; run on demand):
 *
 *   node bin/run-ts.js bench/list-users.ts              # 100 000 users, 200 runs per query
 *   BENCH_USERS=20000 BENCH_RUNS=50 node bin/run-ts.js bench/list-users.ts
 *   BENCH_WRITE=0 ...                                    # print only, leave docs/BENCHMARKS.md alone
 *
 * Fills a real data directory (SQLite file, WAL, migrations, search triggers) with users, starts
 * the real server, signs an administrator in and measures GET /admin/list-users over loopback
 * HTTP (what a client waits for: query, JSON of 100 users, cookies) and the domain function
 * alone. Each run picks a different search term or page so the figures are not one cached answer.
 * The figures replace the "## list-users at 100 000 users" section of docs/BENCHMARKS.md.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUser, type ListUsersQuery, listUsers, systemActor } from '../server/features/admin/index.js'
import { createGatehouse } from '../server/gatehouse.js'

const USERS = Number(process.env.BENCH_USERS ?? 100_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const WRITE = process.env.BENCH_WRITE !== '0'
const root = join(import.meta.dirname, '..')
const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-list-users-'))
const quiet = { info() {}, warn() {}, error: (m: string, e?: unknown) => console.error(m, e ?? '') }

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

/** A deterministic pseudo-random sequence, so every run benchmarks the same population. */
function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}
const random = rng(42)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

interface Scenario {
  name: string
  query: () => ListUsersQuery
}

async function main() {
  const gatehouse = createGatehouse({
    dataDir,
    port: 0,
    secret: 'bench-secret-0123456789-abcdefghijklmnop',
    config: { rateLimit: { enabled: false } },
    logger: quiet,
  })
  const { ctx } = gatehouse
  const { sqlite } = ctx
  if (!sqlite) throw new Error('bench/list-users.ts loads users into SQLite')
  const t0 = performance.now()
  const insert = sqlite.prepare(
    'INSERT INTO user (id, name, email, emailVerified, image, createdAt, updatedAt, role, banned) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const start = Date.UTC(2024, 0, 1)
  const emails: string[] = []
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
  const fillSeconds = (performance.now() - t0) / 1000
  await createUser(
    ctx,
    systemActor('cli'),
    { email: 'bench-admin@example.com', password: 'bench password 1234', name: 'Bench', role: 'admin' },
    null,
  )
  const dbBytes = ['gatehouse.db', 'gatehouse.db-wal']
    .map((f) => join(dataDir, f))
    .filter((f) => existsSync(f))
    .reduce((n, f) => n + readFileSync(f).byteLength, 0)

  const base = await gatehouse.listen()
  const origin = new URL(base).origin
  const signIn = await fetch(`${base}/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ email: 'bench-admin@example.com', password: 'bench password 1234' }),
  })
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  if (signIn.status !== 200 || !cookie) throw new Error(`sign-in failed: ${signIn.status}`)

  // A realistic admin search: a fragment of some user's address (name part, 5-7 characters).
  const fragment = () => {
    const email = pick(emails)
    const local = email.slice(0, email.indexOf('@'))
    const len = 5 + Math.floor(random() * 3)
    const at = Math.floor(random() * Math.max(1, local.length - len))
    return local.slice(at, at + len)
  }
  const scenarios: Scenario[] = [
    {
      name: 'search email contains (a 5-7 character fragment of an address), limit 100',
      query: () => ({ searchValue: fragment(), limit: 100 }),
    },
    {
      name: 'search name contains (a first name, ~4 % of users), sortBy name, limit 100',
      query: () => ({ searchValue: pick(FIRST), searchField: 'name', sortBy: 'name', limit: 100 }),
    },
    { name: 'search email contains a common term ("example", ~60 %), limit 100', query: () => ({ searchValue: 'example', limit: 100 }) },
    {
      name: 'search email starts_with a 2-letter prefix, sortBy email',
      query: () => ({ searchValue: pick(FIRST).slice(0, 2), searchOperator: 'starts_with', sortBy: 'email', limit: 100 }),
    },
    {
      name: 'sorted page: sortBy createdAt desc, limit 100, random offset',
      query: () => ({ sortBy: 'createdAt', sortDirection: 'desc', limit: 100, offset: Math.floor(random() * (USERS - 100)) }),
    },
    {
      name: 'sorted page: sortBy name asc, limit 100, random offset',
      query: () => ({ sortBy: 'name', sortDirection: 'asc', limit: 100, offset: Math.floor(random() * (USERS - 100)) }),
    },
    {
      name: 'filter role eq admin, sortBy createdAt desc, limit 100',
      query: () => ({ filterField: 'role', filterValue: 'admin', sortBy: 'createdAt', sortDirection: 'desc', limit: 100 }),
    },
    { name: 'filter banned eq true, limit 100', query: () => ({ filterField: 'banned', filterValue: 'true', limit: 100 }) },
  ]

  const actor = systemActor('panel')
  const loadBefore = loadavg()[0] ?? 0
  const rows: string[] = []
  for (const scenario of scenarios) {
    const http: number[] = []
    const domain: number[] = []
    let totals = 0
    for (let i = 0; i < RUNS + 10; i++) {
      const q = scenario.query()
      const params = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))
      const h0 = performance.now()
      const res = await fetch(`${base}/admin/list-users?${params}`, { headers: { cookie, origin } })
      const body = (await res.json()) as { users: unknown[]; total: number }
      const h1 = performance.now()
      if (res.status !== 200 || !Array.isArray(body.users)) throw new Error(`list-users failed: ${res.status}`)
      const d0 = performance.now()
      await listUsers(ctx, actor, q)
      const d1 = performance.now()
      if (i >= 10) {
        http.push(h1 - h0)
        domain.push(d1 - d0)
        totals += body.total
      }
    }
    http.sort((a, b) => a - b)
    domain.sort((a, b) => a - b)
    const f = (n: number) => n.toFixed(1)
    rows.push(
      `| ${scenario.name} | ${Math.round(totals / RUNS)} | ${f(percentile(http, 50))} | ${f(percentile(http, 95))} | ${f(http.at(-1) ?? 0)} | ${f(percentile(domain, 50))} | ${f(percentile(domain, 95))} |`,
    )
    console.log(rows.at(-1))
  }
  await gatehouse.close()
  const load = `load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after`

  const section = [
    '## list-users at 100 000 users',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} with \`node bin/run-ts.js bench/list-users.ts\` on ${cpus().length} vCPU (${cpus()[0]?.model.trim()}), Node ${process.version}, shared with other work (${load}; noisy).`,
    `${USERS.toLocaleString('en-US')} users in a real data directory (SQLite WAL, ${(dbBytes / 1e6).toFixed(0)} MB incl. the trigram index; filled in ${fillSeconds.toFixed(1)} s), ${RUNS} runs per row after 10 warm-up runs, each run with a different term or offset.`,
    'HTTP = `GET /admin/list-users` over loopback with an admin session cookie (query, 100 users as JSON, session check); domain = `listUsers()` alone. Times in ms. Target: p95 < 50 ms.',
    '',
    '| query | avg total | HTTP p50 | HTTP p95 | HTTP max | domain p50 | domain p95 |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    "How: substring search narrows candidates through an FTS5 trigram index (`user_search`, kept by triggers) when the term has ≥ 3 characters and its rarest trigram is in at most 1/50 of the rows, 500 to 2 000 (counts read from `fts5vocab`), then re-checks with `LIKE` so results are exactly better-auth's; common or short terms use the plain `LIKE` scan, which fills a page early. Totals are a `count(*)` with the same conditions. Pages of everyone walk only the covering index to the offset, then fetch 100 rows.",
    '',
  ].join('\n')
  console.log(`\n${section}`)
  if (WRITE) {
    const file = join(root, 'docs', 'BENCHMARKS.md')
    const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n\n'
    const pattern = /## list-users at 100 000 users\n[\s\S]*?(?=\n## |$)/
    const next = pattern.test(current) ? current.replace(pattern, section.trimEnd()) : `${current.trimEnd()}\n\n${section}`
    writeFileSync(file, next.endsWith('\n') ? next : `${next}\n`)
    console.log(`written to ${file}`)
  }
}

try {
  await main()
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
