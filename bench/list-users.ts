/**
 * list-users at scale (not a test; run on demand), on SQLite or PostgreSQL:
 *
 *   node bin/run-ts.js bench/list-users.ts                          # SQLite, 100 000 users, 200 runs
 *   BENCH_USERS=1000000 BENCH_RUNS=100 node bin/run-ts.js bench/list-users.ts
 *   BENCH_ENGINE=postgres BENCH_USERS=1000000 BENCH_RUNS=100 node bin/run-ts.js bench/list-users.ts
 *   BENCH_WRITE=0 ...                                                # print only, leave docs/BENCHMARKS.md alone
 *   BENCH_ONLY="starts_with" ...                                     # only the scenarios whose name holds it
 *   BENCH_DATA_DIR=/tmp/lu-1m ...                                    # SQLite: keep the filled data directory and reuse it
 *   BENCH_HOLD=1 ...                                                 # fill, print the database, wait for SIGTERM (experiments)
 *   BENCH_PG_SHARED_BUFFERS=1GB ...                                  # PostgreSQL's shared_buffers (default: PostgreSQL's, 128MB)
 *   BENCH_TRACE=1 ...                                                # print every run (query, HTTP ms, domain ms): which runs make the tail
 *
 * Fills a real database with users (SQLite: a data directory, WAL, migrations, search triggers;
 * PostgreSQL: a throwaway server started by tests/helpers/engines.ts, migrated by the server's own
 * start), starts the real server (openGatehouse), signs an administrator in and measures
 * GET /admin/list-users over loopback HTTP (what a client waits for: query, JSON of 100 users,
 * cookies) and the domain function alone. Each run picks a different search term or page so the
 * figures are not one cached answer; repeated terms (a first name, "example") do hit the exact-total
 * cache, so each row is also measured "after a write": the domain function right after a write to
 * the user table, which empties that cache (remembered term totals, kept by triggers, survive it).
 * The figures replace the section "## list-users at N users (engine)" of docs/BENCHMARKS.md.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import pg from 'pg'
import '../server/schema.js' // the tables, handed down as it loads: before the feature modules below
import { user } from '../server/db/schema.js'
import { createUser, type ListUsersQuery, listUsers, systemActor } from '../server/features/admin/index.js'
import { openGatehouse } from '../server/gatehouse.js'
import { type PostgresServer, startPostgres } from '../tests/helpers/engines.js'

const USERS = Number(process.env.BENCH_USERS ?? 100_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const WRITE = process.env.BENCH_WRITE !== '0'
const ENGINE = process.env.BENCH_ENGINE === 'postgres' ? 'postgres' : 'sqlite'
/** Runs per row measured right after a write (the exact-total cache empty). */
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 20)
let postgres: PostgresServer | undefined
const root = join(import.meta.dirname, '..')
/** SQLite: a data directory kept between runs (filled on the first, reused after: the same population). */
const KEEP = ENGINE === 'sqlite' ? process.env.BENCH_DATA_DIR : undefined
/**
 * PostgreSQL's shared_buffers, when set (PostgreSQL's own 128 MB otherwise). 1 GB, about the size of
 * 1 M users with their indexes, was measured against the default on 2026-11-24 and did not lower
 * the tails (docs/BENCHMARKS.md), so the default stays.
 */
const PG_SETTINGS: Record<string, string> = process.env.BENCH_PG_SHARED_BUFFERS
  ? { shared_buffers: process.env.BENCH_PG_SHARED_BUFFERS }
  : {}
const dataDir = KEEP ?? mkdtempSync(join(tmpdir(), 'gatehouse-bench-list-users-'))
const reuse = KEEP !== undefined && existsSync(join(KEEP, 'gatehouse.db'))
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
  if (ENGINE === 'postgres') postgres = await startPostgres(PG_SETTINGS)
  const databaseUrl = postgres ? await postgres.createDatabase('bench') : undefined
  const gatehouse = await openGatehouse({
    engine: databaseUrl ? { databaseUrl } : {},
    dataDir,
    port: 0,
    secret: 'bench-secret-0123456789-abcdefghijklmnop',
    config: { rateLimit: { enabled: false } },
    logger: quiet,
  })
  const { ctx } = gatehouse
  const t0 = performance.now()
  const start = Date.UTC(2024, 0, 1)
  const emails: string[] = []
  type Row = [string, string, string, number, string | null, number, number, string, number]
  const rowAt = (i: number): Row => {
    const first = pick(FIRST)
    const last = pick(LAST)
    const email = `${first}.${last}${i}@${pick(DOMAINS)}`
    emails.push(email)
    const created = start + i * 60_000 + Math.floor(random() * 60_000)
    return [
      `bench${i.toString(36).padStart(27, '0')}`,
      `${cap(first)} ${cap(last)}`,
      email,
      random() < 0.8 ? 1 : 0,
      random() < 0.3 ? `https://avatars.example.com/${i}.png` : null,
      created,
      created,
      random() < 0.01 ? 'admin' : 'user',
      random() < 0.02 ? 1 : 0,
    ]
  }
  if (reuse) {
    // The same rows as the first fill (the generator is deterministic): only the addresses are kept.
    for (let i = 0; i < USERS; i++) rowAt(i)
  } else if (ctx.sqlite) {
    const insert = ctx.sqlite.prepare(
      'INSERT INTO user (id, name, email, emailVerified, image, createdAt, updatedAt, role, banned) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
    ctx.sqlite.transaction(() => {
      for (let i = 0; i < USERS; i++) insert.run(...rowAt(i))
    })()
  } else {
    // Batches of 20 000 rows through unnest. The per-row userCount trigger is off during the load
    // and the counts are rebuilt after it, exactly as migration list_users_counts builds them.
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    await client.query('ALTER TABLE "user" DISABLE TRIGGER user_count_insert_delete')
    // No term is remembered yet: the term-count trigger would only read the epoch row per insert.
    await client.query('ALTER TABLE "user" DISABLE TRIGGER user_term_count_insert_delete')
    for (let from = 0; from < USERS; from += 20_000) {
      const rows = Array.from({ length: Math.min(20_000, USERS - from) }, (_, k) => rowAt(from + k))
      const col = (j: number) => rows.map((r) => r[j])
      await client.query(
        `INSERT INTO "user" (id, name, email, "emailVerified", image, "createdAt", "updatedAt", role, banned)
         SELECT id, name, email, ev = 1, image, to_timestamp(c / 1000.0), to_timestamp(u / 1000.0), role, b = 1
           FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::float8[], $7::float8[], $8::text[], $9::int[])
             AS t(id, name, email, ev, image, c, u, role, b)`,
        [col(0), col(1), col(2), col(3), col(4), col(5), col(6), col(7), col(8)],
      )
    }
    await client.query('ALTER TABLE "user" ENABLE TRIGGER user_count_insert_delete')
    await client.query('ALTER TABLE "user" ENABLE TRIGGER user_term_count_insert_delete')
    await client.query('DELETE FROM "userCount"')
    await client.query(
      `INSERT INTO "userCount" (role, banned, shard, n) SELECT coalesce(role, ''), coalesce(banned, false), 0, count(*) FROM "user" GROUP BY 1, 2`,
    )
    await client.query('VACUUM ANALYZE "user"')
    await client.query('VACUUM ANALYZE "userCount"')
    await client.end()
  }
  const fillSeconds = (performance.now() - t0) / 1000
  if (!reuse) {
    await createUser(
      ctx,
      systemActor('cli'),
      { email: 'bench-admin@example.com', password: 'bench password 1234', name: 'Bench', role: 'admin' },
      null,
    )
  }
  let pgVersion = ''
  let pgBuffers = ''
  const dbBytes = ctx.sqlite
    ? ['gatehouse.db', 'gatehouse.db-wal']
        .map((f) => join(dataDir, f))
        .filter((f) => existsSync(f))
        .reduce((n, f) => n + readFileSync(f).byteLength, 0)
    : await (async () => {
        const client = new pg.Client({ connectionString: databaseUrl })
        await client.connect()
        const size = await client.query<{ n: string; v: string; b: string }>(
          "select pg_database_size(current_database()) as n, current_setting('server_version') as v, current_setting('shared_buffers') as b",
        )
        await client.end()
        pgVersion = ` ${size.rows[0]?.v ?? ''}`
        pgBuffers = size.rows[0]?.b ?? ''
        return Number(size.rows[0]?.n ?? 0)
      })()

  if (process.env.BENCH_HOLD) {
    // Experiments by hand on the filled database: prints where it is and waits for SIGTERM.
    console.log(`holding ${databaseUrl ?? join(dataDir, 'gatehouse.db')} (pid ${process.pid}); kill -TERM to end`)
    await new Promise((resolve) => process.once('SIGTERM', resolve))
  }
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
  // BENCH_ONLY="starts_with" runs only the scenarios whose name contains it.
  for (const scenario of scenarios.filter((x) => !process.env.BENCH_ONLY || x.name.includes(process.env.BENCH_ONLY))) {
    const http: number[] = []
    const domain: number[] = []
    let totals = 0
    for (let i = 0; i < RUNS + 10; i++) {
      const q = scenario.query()
      const params = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))
      // A keep-alive socket the server closed as the request left is reset: that run is retried
      // (on a fresh connection) and timed from the retry.
      const get = () => fetch(`${base}/admin/list-users?${params}`, { headers: { cookie, origin } })
      let h0 = performance.now()
      const res = await get().catch(() => {
        h0 = performance.now()
        return get()
      })
      const body = (await res.json()) as { users: unknown[]; total: number }
      const h1 = performance.now()
      if (res.status !== 200 || !Array.isArray(body.users)) throw new Error(`list-users failed: ${res.status}`)
      const d0 = performance.now()
      await listUsers(ctx, actor, q)
      const d1 = performance.now()
      if (process.env.BENCH_TRACE) console.log(`run ${i} ${JSON.stringify(q)} HTTP ${(h1 - h0).toFixed(1)} domain ${(d1 - d0).toFixed(1)}`)
      if (i >= 10) {
        http.push(h1 - h0)
        domain.push(d1 - d0)
        totals += body.total
      }
    }
    // After a write: the exact-total cache is empty, as for the first query of a term.
    const cold: number[] = []
    for (let i = 0; i < COLD_RUNS; i++) {
      await ctx.db
        .update(user)
        .set({ updatedAt: new Date(Date.now()) })
        .where(eq(user.email, 'bench-admin@example.com'))
      const q = scenario.query()
      const c0 = performance.now()
      await listUsers(ctx, actor, q)
      cold.push(performance.now() - c0)
    }
    http.sort((a, b) => a - b)
    domain.sort((a, b) => a - b)
    cold.sort((a, b) => a - b)
    const f = (n: number) => n.toFixed(1)
    rows.push(
      `| ${scenario.name} | ${Math.round(totals / RUNS)} | ${f(percentile(http, 50))} | ${f(percentile(http, 95))} | ${f(http.at(-1) ?? 0)} | ${f(percentile(domain, 50))} | ${f(percentile(domain, 95))} | ${f(percentile(cold, 50))} | ${f(percentile(cold, 95))} |`,
    )
    console.log(rows.at(-1))
  }
  await gatehouse.close()
  const load = `load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after`

  const engineName = ENGINE === 'postgres' ? 'PostgreSQL' : 'SQLite'
  const scale = USERS === 1_000_000 ? '1 M' : USERS.toLocaleString('en-US').replace(/,/g, ' ')
  const title = `## list-users at ${scale} users (${engineName})`
  const section = [
    title,
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} with \`${ENGINE === 'postgres' ? 'BENCH_ENGINE=postgres ' : ''}BENCH_USERS=${USERS} BENCH_RUNS=${RUNS} node bin/run-ts.js bench/list-users.ts\` on ${cpus().length} vCPU (${cpus()[0]?.model.trim()}), Node ${process.version}, shared with other work (${load}; noisy).`,
    ENGINE === 'postgres'
      ? `${USERS.toLocaleString('en-US')} users in a throwaway PostgreSQL${pgVersion} (tests/helpers/engines.ts, fsync off, shared_buffers ${pgBuffers}; ${(dbBytes / 1e6).toFixed(0)} MB; loaded in ${fillSeconds.toFixed(1)} s), ${RUNS} runs per row after 10 warm-up runs, each run with a different term or offset.`
      : `${USERS.toLocaleString('en-US')} users in a real data directory (SQLite WAL, ${(dbBytes / 1e6).toFixed(0)} MB incl. the trigram index; filled in ${fillSeconds.toFixed(1)} s), ${RUNS} runs per row after 10 warm-up runs, each run with a different term or offset.`,
    `HTTP = \`GET /admin/list-users\` over loopback with an admin session cookie (query, 100 users as JSON, session check); domain = \`listUsers()\` alone, right after the HTTP call with the same query; after a write = \`listUsers()\` right after an UPDATE of the user table (${COLD_RUNS} runs): the exact-total cache of filtered queries is empty then, remembered term totals (kept by triggers) are not. The first query of a never-seen term (its count) falls in the HTTP column. Times in ms. Target: p95 < 100 ms.`,
    '',
    '| query | avg total | HTTP p50 | HTTP p95 | HTTP max | domain p50 | domain p95 | after a write p50 | after a write p95 |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n')
  console.log(`\n${section}`)
  if (WRITE) {
    const file = join(root, 'docs', 'BENCHMARKS.md')
    const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n\n'
    const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    const pattern = new RegExp(`${escaped}\\n[\\s\\S]*?(?=\\n## |$)`)
    const next = pattern.test(current) ? current.replace(pattern, `${section.trimEnd()}\n`) : `${current.trimEnd()}\n\n${section}`
    writeFileSync(file, next.endsWith('\n') ? next : `${next}\n`)
    console.log(`written to ${file}`)
  }
}

try {
  await main()
} finally {
  if (!KEEP) rmSync(dataDir, { recursive: true, force: true })
  await postgres?.stop()
}
