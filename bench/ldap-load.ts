/**
 * The LDAP directory index's load (issue 48; not a test): the CPU of one `load()` of the index
 * (server/features/ldap/directory-index.ts) at a given size, and the longest single task it holds
 * the event loop, in this process, on SQLite and PostgreSQL. The people are bench/ldap-seed.ts's
 * (600 groups' worth of organizations and teams: about three rows per person).
 *
 *   LDAP_LOAD_PEOPLE=100000 LDAP_LOAD_ENGINES=sqlite,postgres LDAP_LOAD_ROUNDS=3 node bin/run-ts.js bench/ldap-load.ts
 *
 * The longest task is measured three ways: the gaps between ticks of a 1 ms interval (the probe
 * runs beside the load, as an HTTP request would), perf_hooks' monitorEventLoopDelay max, and the
 * most CPU the process spent between two ticks (on a shared machine the wall-clock gaps include
 * the time other processes held the cores; the CPU one does not, but counts V8's GC threads).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { openGatehouse } from '../server/gatehouse.js'
import { indexesOf } from '../server/features/ldap/directory-index.js'
import { layoutOf, openSearch, type Viewer, writeSelected } from '../server/features/ldap/directory.js'
import { EntryWriter } from '../server/features/ldap/wire.js'
import type { AuthContext } from '../server/core/context.js'
import type { UserRow } from '../server/core/sessions.js'
import { type PostgresServer, startPostgres } from '../tests/helpers/engines.js'
import { silentLogger } from '../tests/helpers/server-log.js'
import { seedPostgres, seedSqlite } from './ldap-seed.js'

const PEOPLE = Number(process.env.LDAP_LOAD_PEOPLE ?? 100_000)
const ENGINES = (process.env.LDAP_LOAD_ENGINES ?? 'sqlite').split(',') as Array<'sqlite' | 'postgres'>
const ROUNDS = Number(process.env.LDAP_LOAD_ROUNDS ?? 3)
const SYNC = process.env.LDAP_LOAD_SYNC === '1'

/** One full paged sync in-process (pages of 500, written 64 entries at a time into one buffer, as the listener does); its CPU in ms and the entries. */
async function sync(ctx: AuthContext): Promise<{ cpuMs: number; entries: number }> {
  const viewer: Viewer = { user: { id: 'bench-reader', role: 'admin' } as UserRow, everything: true }
  const attributes = ['uid', 'cn', 'mail', 'memberOf']
  const c0 = process.cpuUsage()
  let entries = 0
  let cookie: Buffer | null = null
  for (let id = 2; ; id++) {
    await indexesOf(ctx).begin()
    const opened = await openSearch(
      ctx,
      viewer,
      { base: layoutOf(ctx).people, scope: 'one', filter: { kind: 'equal', attribute: 'objectClass', value: 'inetOrgPerson' } },
      false,
    )
    if ('code' in opened) throw new Error(`search answered ${opened.code}`)
    if (cookie && !opened.cursor.seek(cookie)) break
    const writer = new EntryWriter(id)
    for (let taken = 0; taken < 500; ) {
      const slice = await opened.cursor.take(Math.min(64, 500 - taken))
      for (const entry of slice) writeSelected(writer, entry, attributes, false)
      writer.take()
      entries += slice.length
      taken += slice.length
      if (slice.length === 0) break
    }
    if (!(await opened.cursor.more())) break
    cookie = opened.cursor.cookie()
  }
  const c = process.cpuUsage(c0)
  return { cpuMs: (c.user + c.system) / 1000, entries }
}

interface Round {
  wallMs: number
  cpuMs: number
  /** Longest gap between two ticks of the 1 ms probe, less its period. */
  longestTaskMs: number
  /** monitorEventLoopDelay's max. */
  histogramMaxMs: number
  /** The most CPU the process spent between two ticks of the probe (not inflated by other processes taking the cores). */
  longestTaskCpuMs: number
  people: number
}

async function round(load: () => Promise<{ people: unknown[] }>): Promise<Round> {
  let last = performance.now()
  let longest = 0
  let lastCpu = process.cpuUsage()
  let longestCpu = 0
  const probe = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last - 1)
    last = now
    const cpu = process.cpuUsage(lastCpu)
    longestCpu = Math.max(longestCpu, (cpu.user + cpu.system) / 1000)
    lastCpu = process.cpuUsage()
  }, 1)
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const index = await load()
  const wallMs = performance.now() - t0
  const c = process.cpuUsage(c0)
  histogram.disable()
  clearInterval(probe)
  return {
    wallMs,
    cpuMs: (c.user + c.system) / 1000,
    longestTaskMs: longest,
    histogramMaxMs: histogram.max / 1e6,
    longestTaskCpuMs: longestCpu,
    people: index.people.length,
  }
}

async function main(): Promise<void> {
  console.log(
    `load average at the start: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  )
  console.log(
    '| engine | people | round | wall ms | CPU ms | longest task ms (probe) | event-loop delay max ms | most CPU between two probe ticks ms |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
  let postgres: PostgresServer | null = null
  try {
    for (const engine of ENGINES) {
      const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-load-'))
      let databaseUrl: string | undefined
      if (engine === 'postgres') {
        postgres ??= await startPostgres({ shared_buffers: '256MB' })
        databaseUrl = await postgres.createDatabase(`ldap_load_${PEOPLE}`)
      }
      const gatehouse = await openGatehouse({
        engine: databaseUrl ? { databaseUrl } : {},
        dataDir,
        secret: 'bench-secret-0123456789-abcdefghijklmnop',
        config: { rateLimit: { enabled: false }, ldap: { enabled: false } },
        logger: silentLogger,
      })
      try {
        if (databaseUrl) await seedPostgres(databaseUrl, PEOPLE)
        else seedSqlite(join(dataDir, 'gatehouse.db'), PEOPLE)
        const indexes = indexesOf(gatehouse.ctx)
        for (let i = 1; i <= ROUNDS; i++) {
          indexes.drop()
          // A change of what the directory shows would make the next current() load again; drop() does it here.
          const r = await round(async () => {
            await indexes.begin()
            return indexes.current()
          })
          console.log(
            `| ${engine} | ${r.people} | ${i} | ${r.wallMs.toFixed(0)} | ${r.cpuMs.toFixed(0)} | ${r.longestTaskMs.toFixed(1)} | ${r.histogramMaxMs.toFixed(1)} | ${r.longestTaskCpuMs.toFixed(1)} |`,
          )
          if (SYNC) {
            const cold = await sync(gatehouse.ctx)
            const warm = await sync(gatehouse.ctx)
            console.log(
              `|   sync after load ${i}: first ${cold.cpuMs.toFixed(0)} ms CPU, second ${warm.cpuMs.toFixed(0)} ms CPU, ${cold.entries} / ${warm.entries} entries |`,
            )
          }
        }
      } finally {
        await gatehouse.close()
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  } finally {
    await postgres?.stop()
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  )
}

await main()
