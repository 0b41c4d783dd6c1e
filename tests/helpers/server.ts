import type { StartupSources } from '../../server/config/startup.js'
import type Database from 'better-sqlite3'
import pg from 'pg'
import { inject, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../../server/core/context.js'
import type { GatehouseConfigInput } from '../../server/config/schema.js'
import { type Gatehouse, openGatehouse } from '../../server/gatehouse.js'
import { silentLogger } from './server-log.js'

// The log a test server keeps lives in server-log.ts, which loads no server code: the setup file
// every test file runs (tests/setup/server-log.ts) imports it without loading the whole server.
export { type LoggedEntry, serverLog, silentLogger } from './server-log.js'

/** A clock the test moves by hand: expiry is tested without sleeping. */
export class TestClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 1, 12, 0, 0)) {}
  now(): number {
    return this.t
  }
  advance(ms: number): void {
    this.t += ms
  }
  advanceSeconds(s: number): void {
    this.t += s * 1000
  }
}

export interface TestServer {
  /** http://127.0.0.1:PORT */
  origin: string
  /** origin + /api/auth */
  base: string
  dataDir: string
  /** postgres://… of this server's own database on the PostgreSQL run (undefined on SQLite). */
  databaseUrl: string | undefined
  clock: TestClock
  gatehouse: Gatehouse
  close(): Promise<void>
}

export interface TestServerOptions {
  config?: GatehouseConfigInput
  /** Where each part of `config` came from, as `gatehouse serve` names it (server/config/startup.ts). */
  configSources?: StartupSources
  /** --smtp-url: an SMTP server set at start-up (wins over the panel's settings). */
  smtpUrl?: string
  clock?: TestClock
  secret?: string
  dataDir?: string
  /** Keep the data directory after close (restart tests). */
  keepData?: boolean
  /** Public URL the server believes it is reached at (e.g. https://… for secure cookies). */
  baseURL?: string
  /** Loopback port to listen on (default: any free one); for a baseURL naming the port. */
  port?: number
}

/**
 * The engine of this test run: 'postgres' in the `postgres` project of vitest.config.ts (the API
 * suite run a second time, each test server on a fresh PostgreSQL database), else 'sqlite'.
 */
export const testEngine: 'sqlite' | 'postgres' = process.env.GATEHOUSE_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

/** Marks a test that is SQLite's by nature (it reads the file, or SQLite's own behaviour): skipped on the PostgreSQL run. */
export const sqliteOnly = testEngine === 'sqlite' ? it : it.skip

const databasesByDataDir = new Map<string, { url: string; drop(): Promise<void> }>()

/** A fresh database for one test server, copied from the run's migrated template; dropped at close. */
async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('postgresAdminUrl')
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    // A template can be copied by one session at a time: concurrent workers retry.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE gatehouse_template`)
        break
      } catch (error) {
        if (attempt >= 50 || !/being accessed by other users/.test(String(error))) throw error
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100))
      }
    }
  } finally {
    await admin.end()
  }
  return {
    url: adminUrl.replace(/\/postgres$/, `/${name}`),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}

/**
 * The real server on a loopback port: a real SQLite file in a temporary directory, or on the
 * PostgreSQL run a real PostgreSQL database of its own (the data directory then holds config,
 * secret and keys only, as on a PostgreSQL install).
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'gatehouse-test-'))
  const clock = options.clock ?? new TestClock()
  // A restart test passes the same data directory again: on PostgreSQL, the same database.
  let postgres = testEngine === 'postgres' ? (databasesByDataDir.get(dataDir) ?? null) : null
  if (testEngine === 'postgres' && !postgres) {
    postgres = await freshPostgresDatabase()
    databasesByDataDir.set(dataDir, postgres)
  }
  const gatehouse = await openGatehouse({
    engine: postgres ? { databaseUrl: postgres.url } : {},
    dataDir,
    port: options.port ?? 0,
    host: '127.0.0.1',
    baseURL: options.baseURL,
    secret: options.secret ?? 'test-secret-0123456789-abcdefghijkl',
    config: { rateLimit: { enabled: false }, ...options.config },
    ...(options.configSources ? { configSources: options.configSources } : {}),
    ...(options.smtpUrl ? { smtpUrl: options.smtpUrl } : {}),
    clock,
    logger: silentLogger,
  })
  let base: string
  try {
    base = await gatehouse.listen()
  } catch (error) {
    // A configuration refused at listen (gatehouse.ts configProblems): nothing stays open.
    await gatehouse.close()
    if (!options.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  const origin = new URL(base).origin
  return {
    origin,
    base,
    dataDir,
    databaseUrl: postgres?.url,
    clock,
    gatehouse,
    async close() {
      await gatehouse.close()
      if (!options.keepData) {
        rmSync(dataDir, { recursive: true, force: true })
        databasesByDataDir.delete(dataDir)
        await postgres?.drop()
      }
    },
  }
}

/**
 * The SQLite driver of a test server, for checks that read the file directly. Such a check is
 * SQLite's by nature: on the PostgreSQL run (GATEHOUSE_TEST_ENGINE=postgres) it fails loudly here
 * rather than read nothing; those tests are marked `sqliteOnly`.
 */
export function sqliteOf(holder: { sqlite: Database.Database | null }): Database.Database {
  if (!holder.sqlite) throw new Error('this check reads the SQLite file; the server runs on PostgreSQL')
  return holder.sqlite
}
