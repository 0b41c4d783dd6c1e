/**
 * The PostgreSQL storage on a real PostgreSQL (tests/helpers/engines.ts): migrations under the
 * advisory lock, the migrated database against the pg-core mirror, the storage port (transactions,
 * nesting, isolation, retries), number parsing, JS types, unique clashes and the change signal.
 */
import { and, count, eq, sql } from 'drizzle-orm'
import { executionAsyncId } from 'node:async_hooks'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import '../../server/schema.js' // the tables, handed down to db/ as they load (as gatehouse.ts does first)
import * as bound from '../../server/db/schema.js'
import { openPostgresEngine } from '../../server/db/pg/index.js'
import { ANY_TABLE, LISTENER_APPLICATION_NAME, listenForChanges } from '../../server/db/pg/change-signal.js'
import { pgSchema } from '../../server/db/pg/schema.js'
import { openPostgres, type PostgresDatabase, pgMigrationsFolder } from '../../server/db/pg/storage.js'
import { isUniqueViolation } from '../../server/db/storage.js'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core'

const unavailable = postgresUnavailable()
warnSkipped('tests/db/postgres.test.ts (PostgreSQL storage)', unavailable)

const { user, organization, member, rateLimit } = pgSchema
const at = new Date(Date.UTC(2026, 0, 1, 12, 0, 0, 123))

describe.skipIf(unavailable)('PostgreSQL storage', () => {
  let server: PostgresServer
  let database: PostgresDatabase
  let url: string

  beforeAll(async () => {
    server = await startPostgres()
    url = await server.createDatabase()
    database = await openPostgres(url, { poolSize: 5 })
  })
  afterAll(async () => {
    await database?.close()
    await server?.stop()
  })

  const newUser = (id: string, extra: Partial<typeof user.$inferInsert> = {}) => ({
    id,
    name: `Name ${id}`,
    email: `${id}@example.com`,
    createdAt: at,
    updatedAt: at,
    ...extra,
  })

  it('three instances opening one empty database together all succeed; each migration is applied once', async () => {
    const fresh = await server.createDatabase()
    const opened = await Promise.all([openPostgres(fresh), openPostgres(fresh), openPostgres(fresh)])
    try {
      const files = readMigrationFiles({ migrationsFolder: pgMigrationsFolder })
      const rows = await opened[0]?.pool.query<{ hash: string }>('select hash from drizzle.__drizzle_migrations order by id')
      expect(rows?.rows.map((r) => r.hash)).toEqual(files.map((m) => m.hash))
      const tables = await opened[1]?.pool.query<{ n: number }>(
        "select count(*) as n from information_schema.tables where table_schema = 'public'",
      )
      // The mirror's tables, plus userCount and userTermCount (written only by the list_users_counts
      // and list_users_terms triggers and the admin store) and the shared configuration
      // (server/config/shared.ts): none is a drizzle table.
      expect(Number(tables?.rows[0]?.n)).toBe(Object.keys(pgSchema).length + 3)
      // A fourth open later finds nothing to apply.
      const again = await openPostgres(fresh)
      const after = await again.pool.query('select count(*) as n from drizzle.__drizzle_migrations')
      expect(after.rows[0].n).toBe(files.length)
      await again.close()
    } finally {
      await Promise.all(opened.map((d) => d.close()))
    }
  })

  it('the migrated database has every table, column (nullability), index and the pg_trgm extension of the mirror', async () => {
    for (const table of Object.values(pgSchema) as PgTable[]) {
      const config = getTableConfig(table)
      const columns = await database.pool.query<{ column_name: string; is_nullable: string; data_type: string }>(
        "select column_name, is_nullable, data_type from information_schema.columns where table_schema = 'public' and table_name = $1 order by column_name",
        [config.name],
      )
      const byName = (a: [string, boolean], b: [string, boolean]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
      expect(columns.rows.map((c): [string, boolean] => [c.column_name, c.is_nullable === 'NO']).sort(byName)).toEqual(
        config.columns.map((c): [string, boolean] => [c.name, c.notNull]).sort(byName),
      )
      const indexes = await database.pool.query<{ indexname: string }>(
        "select indexname from pg_indexes where schemaname = 'public' and tablename = $1",
        [config.name],
      )
      const names = indexes.rows.map((r) => r.indexname)
      for (const index of config.indexes) expect(names).toContain(index.config.name)
    }
    const ext = await database.pool.query("select extname from pg_extension where extname = 'pg_trgm'")
    expect(ext.rowCount).toBe(1)
    const plan = await database.pool.query('explain select id from "user" where lower(email) like \'%smith12%\'')
    // The planner may still prefer a scan on an empty table; the index must at least be usable.
    // Scans that can only filter (a sequential scan, a walk of the prefix or sort btrees) are off:
    // what remains is a bitmap scan, and only the trigram index can answer a contains condition.
    await database.pool.query('set enable_seqscan = off; set enable_indexscan = off; set enable_indexonlyscan = off')
    const forced = await database.pool.query('explain select id from "user" where lower(email) like \'%smith12%\'')
    await database.pool.query('reset enable_seqscan; reset enable_indexscan; reset enable_indexonlyscan')
    expect(plan.rows.length).toBeGreaterThan(0)
    expect(JSON.stringify(forced.rows)).toContain('user_email_trgm_idx')
  })

  it('the pool size option is the pool of the storage', () => {
    expect(database.pool.options.max).toBe(5)
    expect(database.storage.dialect).toBe('postgres')
  })

  it('round-trips the same JS values as SQLite: Date, boolean, JSON, null, bigint as number; counts are numbers', async () => {
    const db = database.storage.db as unknown as typeof database.db
    await db.insert(user).values(newUser('types', { emailVerified: true, banned: false, additionalFields: { plan: 'pro', seats: 3 } }))
    const [row] = await db.select().from(user).where(eq(user.id, 'types'))
    expect(row).toEqual({
      ...newUser('types'),
      emailVerified: true,
      image: null,
      username: null,
      displayUsername: null,
      role: 'user',
      banned: false,
      banReason: null,
      banExpires: null,
      additionalFields: { plan: 'pro', seats: 3 },
      twoFactorEnabled: false,
      lastLoginMethod: null,
      isAnonymous: null,
    })
    expect(row?.createdAt).toBeInstanceOf(Date)
    expect(row?.createdAt.getTime()).toBe(at.getTime())
    await db.insert(rateLimit).values({ key: 'k', count: 1, lastRequest: at.getTime() })
    const [limit] = await db.select().from(rateLimit).where(eq(rateLimit.key, 'k'))
    expect(limit).toEqual({ key: 'k', count: 1, lastRequest: at.getTime() })
    const [counted] = await db.select({ n: sql`count(*)` }).from(user)
    expect(counted?.n).toBe(1)
    const raw = await database.pool.query('select count(*) as n, sum(1)::numeric as s, 12345678901::int8 as big')
    expect(raw.rows[0]).toEqual({ n: 1, s: 1, big: 12345678901 })
  })

  it('recognises a unique clash on user.email (and not on another column)', async () => {
    const db = database.storage.db as unknown as typeof database.db
    await db.insert(user).values(newUser('clash1'))
    const error = await db
      .insert(user)
      .values(newUser('clash2', { email: 'clash1@example.com' }))
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(isUniqueViolation(error, 'user.email')).toBe(true)
    expect(isUniqueViolation(error, 'user.username')).toBe(false)
  })

  it('transaction: commits, rolls back on a throw, db is the transaction handle inside and nested calls join it', async () => {
    const { storage } = database
    const db = () => storage.db as unknown as typeof database.db
    const outside = db()
    const txids: unknown[] = []
    await storage.transaction(async () => {
      expect(db()).not.toBe(outside)
      txids.push((await db().execute(sql`select txid_current() as id`)).rows[0]?.id)
      await db().insert(user).values(newUser('tx1'))
      await storage.transaction(async () => {
        txids.push((await db().execute(sql`select txid_current() as id`)).rows[0]?.id)
        await db().insert(user).values(newUser('tx2'))
      })
    })
    expect(txids[0]).toBe(txids[1])
    expect(db()).toBe(outside)
    const failed = await storage
      .transaction(async () => {
        await db().insert(user).values(newUser('tx3'))
        await storage.transaction(async () => {
          await db().insert(user).values(newUser('tx4'))
        })
        throw new Error('boom')
      })
      .catch((e: Error) => e.message)
    expect(failed).toBe('boom')
    const ids = (await outside.select({ id: user.id }).from(user).where(sql`${user.id} like 'tx%'`)).map((r) => r.id).sort()
    expect(ids).toEqual(['tx1', 'tx2'])
  })

  it("once its transactions have ended, the transaction marker leaves no promise hook on (Node 20's AsyncLocalStorage taxes every promise while enabled)", async () => {
    // With async_hooks' promise hooks on, a promise's reaction runs under an async id of its own;
    // off, under none (0).
    const hooked = async () => (await Promise.resolve().then(() => executionAsyncId())) !== 0
    const before = await hooked()
    const { storage } = database
    await Promise.all([
      storage.transaction(async () => {
        await (storage.db as unknown as typeof database.db).execute(sql`select 1`)
      }),
      storage.transaction(
        async () => {
          await (storage.db as unknown as typeof database.db).execute(sql`select 2`)
        },
        { isolation: 'read committed' },
      ),
    ])
    expect(before).toBe(false)
    expect(await hooked()).toBe(false)
    // A transaction begun afterwards still has its handle.
    await storage.transaction(async () => {
      expect(storage.db).not.toBe(database.db)
    })
    expect(await hooked()).toBe(false)
  })

  it('rows: a select as arrays of plain values, in the transaction when called inside one (its uncommitted rows seen)', async () => {
    const { storage } = database
    const db = () => storage.db as unknown as typeof database.db
    const query = () =>
      db().select({ id: user.id, verified: user.emailVerified }).from(user).where(sql`${user.id} like 'raw%'`).orderBy(user.id)
    await db()
      .insert(user)
      .values(newUser('raw1', { emailVerified: true }))
    expect(await storage.rows(query())).toEqual([['raw1', true]])
    let inside: unknown[][] = []
    const rolledBack = await storage
      .transaction(async () => {
        await db().insert(user).values(newUser('raw2'))
        inside = await storage.rows(query())
        throw new Error('rolled back')
      })
      .catch((e: Error) => e.message)
    expect(rolledBack).toBe('rolled back')
    // Only the transaction's own connection sees raw2 before the commit.
    expect(inside).toEqual([
      ['raw1', true],
      ['raw2', false],
    ])
    expect(await storage.rows(query())).toEqual([['raw1', true]])
  })

  it('transaction isolation: serializable by default, READ COMMITTED when a body asks for it, a nested call keeps the outer one', async () => {
    const { storage } = database
    const db = () => storage.db as unknown as typeof database.db
    const isolation = async () =>
      (await db().execute<{ level: string }>(sql`select current_setting('transaction_isolation') as level`)).rows[0]?.level
    expect(await storage.transaction(isolation)).toBe('serializable')
    expect(await storage.transaction(isolation, { isolation: 'read committed' })).toBe('read committed')
    expect(await storage.transaction(() => storage.transaction(isolation, { isolation: 'read committed' }))).toBe('serializable')
    expect(await storage.transaction(() => storage.transaction(isolation), { isolation: 'read committed' })).toBe('read committed')
  })

  it('read-then-write transactions stay exact under parallel load (serializable, re-run on conflict): 20 joins, 3 seats', async () => {
    const { storage } = database
    const db = () => storage.db as unknown as typeof database.db
    await db().insert(organization).values({ id: 'org', name: 'Org', slug: 'org', createdAt: at })
    const ids = Array.from({ length: 20 }, (_, i) => `seat${i}`)
    for (const id of ids) await db().insert(user).values(newUser(id))
    const outcomes = await Promise.all(
      ids.map((id) =>
        storage.transaction(async () => {
          const [taken] = await db().select({ n: count() }).from(member).where(eq(member.organizationId, 'org'))
          if ((taken?.n ?? 0) >= 3) return 'full'
          await db()
            .insert(member)
            .values({ id: `m-${id}`, organizationId: 'org', userId: id, role: 'member', createdAt: at })
          return 'joined'
        }),
      ),
    )
    expect(outcomes.filter((o) => o === 'joined')).toHaveLength(3)
    const [final] = await db()
      .select({ n: count() })
      .from(member)
      .where(and(eq(member.organizationId, 'org')))
    expect(final?.n).toBe(3)
  })

  it('openPostgresEngine: store code importing tables from server/db/schema.ts runs on PostgreSQL; its writes move the change signal', async () => {
    const fresh = await server.createDatabase()
    const engine = await openPostgresEngine({ kind: 'postgres', url: fresh, poolSize: 3 })
    try {
      expect(bound.boundDialect).toBe('postgres')
      expect(bound.user).toBe(pgSchema.user)
      expect(engine.database.pool.options.max).toBe(3)
      const { storage } = engine.database
      // What a store function does after the async port: ctx.db + the tables of server/db/schema.ts.
      await engine.changes.sync()
      const before = engine.changes.version()
      await storage.transaction(async () => {
        await storage.db.insert(bound.user).values(newUser('bound'))
      })
      const [row] = await storage.db.select().from(bound.user).where(eq(bound.user.id, 'bound'))
      expect(row?.createdAt).toEqual(at)
      expect(row?.emailVerified).toBe(false)
      await engine.changes.sync()
      expect(engine.changes.version()).toBe(before + 1)
    } finally {
      await engine.close()
      bound.bindTables(bound.sqliteTables(), 'sqlite')
    }
  })

  it('change signal: a committed write to a watched table from another connection moves version() by the next sync(); rateLimit does not', async () => {
    const seen: string[] = []
    const signal = await listenForChanges(url, (table) => seen.push(table))
    const other = new pg.Client({ connectionString: url })
    await other.connect()
    try {
      await signal.sync()
      const v0 = signal.version()
      await other.query(`insert into "rateLimit" ("key", "count", "lastRequest") values ('quiet', 1, 1)`)
      await signal.sync()
      expect(signal.version()).toBe(v0)
      await other.query(`update "user" set "banned" = true where "id" = 'types'`)
      await signal.sync()
      expect(signal.version()).toBe(v0 + 1)
      expect(seen).toEqual(['user'])
      // Uncommitted writes are not signalled; the commit is.
      await other.query('begin')
      await other.query(`delete from "session"`)
      await other.query(`update "user" set "banned" = false where "id" = 'types'`)
      await signal.sync()
      expect(signal.version()).toBe(v0 + 1)
      await other.query('commit')
      await signal.sync()
      expect(seen.slice(1).sort()).toEqual(['session', 'user'])
      // Concurrent sync() calls share round trips and all resolve.
      await Promise.all(Array.from({ length: 50 }, () => signal.sync()))
    } finally {
      await other.end()
      await signal.close()
    }
  })

  it('change signal: a lost listening connection empties caches at once, comes back by itself, and then announces that anything may have changed', async () => {
    const seen: string[] = []
    const signal = await listenForChanges(url, (table) => seen.push(table), { reconnectDelayMs: 400 })
    const other = new pg.Client({ connectionString: url })
    await other.connect()
    const waitFor = async (what: string, done: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 25))
      if (!done()) throw new Error(`timed out waiting for ${what}`)
    }
    try {
      await signal.sync()
      const v0 = signal.version()
      const { rows } = await other.query<{ killed: boolean }>(
        `select pg_terminate_backend(pid) as killed from pg_stat_activity where application_name = $1 and datname = current_database()`,
        [LISTENER_APPLICATION_NAME],
      )
      expect(rows).toEqual([{ killed: true }])
      await waitFor('the loss to be noticed', () => signal.version() > v0)
      // Written while nobody listens: its notification is lost for good.
      await other.query(`update "user" set "banned" = true where "id" = 'types'`)
      await waitFor('the listener to come back', () => seen.includes(ANY_TABLE))
      expect(seen).toEqual([ANY_TABLE])
      const back = await other.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where application_name = $1 and datname = current_database()`,
        [LISTENER_APPLICATION_NAME],
      )
      expect(back.rows[0]?.n).toBe(1)
      // Listening again: the next write is announced by name.
      const v1 = signal.version()
      await other.query(`update "user" set "banned" = false where "id" = 'types'`)
      await signal.sync()
      expect(signal.version()).toBe(v1 + 1)
      expect(seen).toEqual([ANY_TABLE, 'user'])
    } finally {
      await other.end()
      await signal.close()
    }
  })
})
