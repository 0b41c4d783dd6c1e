/**
 * The statement work of a rotating refresh in isolation (issue 30): two single-row upserts of
 * oidcModel against one two-row upsert, two prepared finds (refresh token, grant) against two hits
 * of a ChangeGuardedCache (what a model cache would cost: one `pragma data_version` per look).
 * Measured interleaved in one process, CPU time per iteration, inside one open transaction (no
 * commit, no fsync). Not a test; docs/BENCHMARKS.md, issue 30's `oidc-perf3` subsection.
 *
 *   node bin/run-ts.js bench/oidc-statements.ts
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { and, eq, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { ChangeGuardedCache } from '../server/core/session-cache.js'
import { sqliteChangeSignal } from '../server/db/storage.js'
import { oidcModel } from '../server/features/oidc-provider/schema.js'

const sqlite = new Database(join(mkdtempSync(join(tmpdir(), 'gatehouse-bench-stmts-')), 'm.db'))
sqlite.pragma('journal_mode = WAL')
sqlite.exec(
  `drop table if exists oidcModel; create table oidcModel (kind text not null, id text not null, payload text not null, grantId text, uid text, userCode text, gatehouseSessionId text, consumedAt integer, expiresAt integer, primary key (kind, id))`,
)
const db = drizzle(sqlite)
const p = sql.placeholder
const payload = JSON.stringify({
  iat: 1,
  exp: 2,
  accountId: 'u'.repeat(32),
  grantId: 'g'.repeat(43),
  scope: 'openid offline_access',
  kind: 'RefreshToken',
  jti: 'x'.repeat(43),
  clientId: 'c'.repeat(24),
  sessionUid: 's'.repeat(21),
  sid: 'd'.repeat(21),
  rotations: 3,
})
const excluded = (c: { name: string }) => sql`excluded.${sql.identifier(c.name)}`
const vals = (n: string) => ({
  kind: p(`kind${n}`),
  id: p(`id${n}`),
  payload: p(`payload${n}`),
  grantId: p(`grantId${n}`),
  uid: p(`uid${n}`),
  userCode: p(`userCode${n}`),
  gatehouseSessionId: p(`g${n}`),
  consumedAt: sql`${p(`c${n}`)}`,
  expiresAt: sql`${p(`e${n}`)}`,
})
const set = {
  payload: excluded(oidcModel.payload),
  grantId: excluded(oidcModel.grantId),
  uid: excluded(oidcModel.uid),
  userCode: excluded(oidcModel.userCode),
  gatehouseSessionId: sql`coalesce(${excluded(oidcModel.gatehouseSessionId)}, ${oidcModel.gatehouseSessionId})`,
  consumedAt: excluded(oidcModel.consumedAt),
  expiresAt: excluded(oidcModel.expiresAt),
}
const one = db
  .insert(oidcModel)
  .values(vals('0'))
  .onConflictDoUpdate({ target: [oidcModel.kind, oidcModel.id], set })
  .prepare()
const two = db
  .insert(oidcModel)
  .values([vals('0'), vals('1')])
  .onConflictDoUpdate({ target: [oidcModel.kind, oidcModel.id], set })
  .prepare()
const find = db
  .select()
  .from(oidcModel)
  .where(and(eq(oidcModel.kind, p('kind')), eq(oidcModel.id, p('id'))))
  .prepare()
const params = (id: string, n: string) => ({
  [`kind${n}`]: 'RefreshToken',
  [`id${n}`]: id,
  [`payload${n}`]: payload,
  [`grantId${n}`]: 'g',
  [`uid${n}`]: null,
  [`userCode${n}`]: null,
  [`g${n}`]: null,
  [`c${n}`]: null,
  [`e${n}`]: Date.now() + 1e9,
})
const cache = new ChangeGuardedCache<unknown>(sqliteChangeSignal(sqlite), 10_000)
let seq = 0
const N = 4000
const timeIt = (f: () => unknown): number => {
  const t = process.cpuUsage()
  for (let i = 0; i < N; i++) f()
  const d = process.cpuUsage(t)
  return (d.user + d.system) / N
}
const r = { twoUpserts: [] as number[], oneTwoRowUpsert: [] as number[], twoFinds: [] as number[], twoCacheGets: [] as number[] }
sqlite.exec('begin')
for (let round = 0; round < 8; round++) {
  r.twoUpserts.push(
    timeIt(() => {
      one.run(params(`a${seq++}`, '0'))
      one.run(params(`a${seq++}`, '0'))
    }),
  )
  r.oneTwoRowUpsert.push(
    timeIt(() => {
      two.run({ ...params(`b${seq++}`, '0'), ...params(`b${seq++}`, '1') })
    }),
  )
  r.twoFinds.push(
    timeIt(() => {
      find.all({ kind: 'RefreshToken', id: `a${seq % 1000}` })
      find.all({ kind: 'RefreshToken', id: `b${(seq + 7) % 1000}` })
    }),
  )
  for (let i = 0; i < 2000; i++) cache.set(`k${i}`, { i }, cache.mark())
  r.twoCacheGets.push(
    timeIt(() => {
      cache.get(`k${seq % 1000}`)
      cache.get(`k${(seq + 7) % 1000}`)
    }),
  )
}
sqlite.exec('commit')
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number
for (const [k, v] of Object.entries(r))
  console.log(`${k}: median ${med(v).toFixed(1)} µs CPU (rounds: ${v.map((x) => x.toFixed(1)).join(' ')})`)
