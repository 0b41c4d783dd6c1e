/**
 * The exact `total` of list-users at 1 000 000 users on PostgreSQL (a throwaway server started by
 * tests/helpers/engines.ts): the counts the store would run, with the pg migrations' GIN trigram
 * indexes and the proposal of docs/proposals/list-users-total.md (docs/proposals/
 * list-users-total.pg.sql). Not a test; run on demand:
 *
 *   node bin/run-ts.js bench/list-users-total-pg.ts
 *   BENCH_USERS=200000 BENCH_RUNS=10 node bin/run-ts.js bench/list-users-total-pg.ts
 *
 * Times the COUNT alone, in ms (client round trip included), p50 and p95.
 */
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { openPostgres } from '../server/db/pg/storage.js'
import { startPostgres } from '../tests/helpers/engines.js'

const USERS = Number(process.env.BENCH_USERS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 15)
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
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
const arr = (xs: string[]) => `ARRAY[${xs.map((x) => `'${x}'`).join(',')}]`
let seed = 7
const random = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 2 ** 32
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T

const server = await startPostgres()
try {
  const url = await server.createDatabase()
  const database = await openPostgres(url, { poolSize: 2 })
  const { pool } = database
  const t0 = performance.now()
  await pool.query(`
    INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt", role, banned)
    SELECT 'bench' || i,
           initcap(f) || ' ' || initcap(l),
           f || '.' || l || i || '@' || (${arr(DOMAINS)})[(1 + (i * 7919) % 5)::int],
           random() < 0.8, now(), now(),
           CASE WHEN random() < 0.01 THEN 'admin' ELSE 'user' END,
           random() < 0.02
    FROM (SELECT i, (${arr(FIRST)})[(1 + (i * 31) % 25)::int] AS f, (${arr(LAST)})[(1 + (i * 17 + i / 25) % 30)::int] AS l
          FROM generate_series(0::bigint, ${USERS - 1}) AS i) AS g`)
  console.log(`filled ${USERS} users in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  const t1 = performance.now()
  await pool.query(readFileSync(join(import.meta.dirname, '..', 'docs', 'proposals', 'list-users-total.pg.sql'), 'utf8'))
  console.log(`proposal migration applied in ${((performance.now() - t1) / 1000).toFixed(1)} s`)
  await pool.query('VACUUM ANALYZE "user"')
  await pool.query('VACUUM ANALYZE "userCount"')

  const emails = (await pool.query<{ email: string }>(`SELECT email FROM "user" ORDER BY random() LIMIT 2000`)).rows.map((r) => r.email)
  const fragment = () => {
    const email = pick(emails)
    const local = email.slice(0, email.indexOf('@'))
    const len = 5 + Math.floor(random() * 3)
    const at = Math.floor(random() * Math.max(1, local.length - len))
    return local.slice(at, at + len)
  }
  const esc = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`)
  const count = async (text: string, values: unknown[]) => Number((await pool.query(text, values)).rows[0].n)
  const shapes: { name: string; term: () => string; today: (t: string) => Promise<number>; proposed: (t: string) => Promise<number> }[] = [
    {
      name: 'email contains a 5-7 character fragment',
      term: fragment,
      today: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(email) LIKE lower($1)`, [`%${esc(t)}%`]),
      proposed: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(email) LIKE lower($1)`, [`%${esc(t)}%`]),
    },
    {
      name: 'name contains a first name (~4 %)',
      term: () => pick(FIRST),
      today: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(name) LIKE lower($1)`, [`%${esc(t)}%`]),
      proposed: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(name) LIKE lower($1)`, [`%${esc(t)}%`]),
    },
    {
      name: 'email contains "example" (~60 %), first time',
      term: () => 'example',
      today: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(email) LIKE lower($1)`, [`%${t}%`]),
      proposed: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(email) LIKE lower($1)`, [`%${t}%`]),
    },
    {
      name: 'email starts_with a 2-letter prefix',
      term: () => pick(FIRST).slice(0, 2),
      today: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(email) LIKE lower($1)`, [`${esc(t)}%`]),
      proposed: (t) => count(`SELECT count(*) AS n FROM "user" WHERE lower(email) LIKE lower($1)`, [`${esc(t)}%`]),
    },
    {
      name: 'role eq admin (1 %)',
      term: () => 'admin',
      today: (t) => count(`SELECT count(*) AS n FROM "user" WHERE role = $1`, [t]),
      proposed: (t) => count(`SELECT coalesce(sum(n), 0) AS n FROM "userCount" WHERE role = $1`, [t]),
    },
    {
      name: 'role eq user (99 %)',
      term: () => 'user',
      today: (t) => count(`SELECT count(*) AS n FROM "user" WHERE role = $1`, [t]),
      proposed: (t) => count(`SELECT coalesce(sum(n), 0) AS n FROM "userCount" WHERE role = $1`, [t]),
    },
    {
      name: 'banned eq true (2 %)',
      term: () => 'true',
      today: () => count(`SELECT count(*) AS n FROM "user" WHERE coalesce(banned, false) = true`, []),
      proposed: () => count(`SELECT coalesce(sum(n), 0) AS n FROM "userCount" WHERE banned = true`, []),
    },
    {
      name: 'everyone (sorted pages)',
      term: () => '',
      today: () => count(`SELECT count(*) AS n FROM "user"`, []),
      proposed: () => count(`SELECT coalesce(sum(n), 0) AS n FROM "userCount"`, []),
    },
  ]
  console.log(`\n${USERS} users, ${RUNS} runs per row, load average ${loadavg()[0]?.toFixed(1)} (2 vCPU shared with other work)\n`)
  console.log('| count for | today p50 | today p95 | proposed p50 | proposed p95 | same totals |')
  console.log('|---|---|---|---|---|---|')
  for (const shape of shapes) {
    const today: number[] = []
    const proposed: number[] = []
    let same = true
    for (let i = 0; i < RUNS; i++) {
      const term = shape.term()
      let a = performance.now()
      const x = await shape.today(term)
      today.push(performance.now() - a)
      a = performance.now()
      const y = await shape.proposed(term)
      proposed.push(performance.now() - a)
      if (x !== y) same = false
    }
    today.sort((p, q) => p - q)
    proposed.sort((p, q) => p - q)
    const f = (n: number) => n.toFixed(1)
    console.log(
      `| ${shape.name} | ${f(percentile(today, 50))} | ${f(percentile(today, 95))} | ${f(percentile(proposed, 50))} | ${f(percentile(proposed, 95))} | ${same ? 'yes' : 'NO'} |`,
    )
  }
  await database.close()
} finally {
  await server.stop()
}
