import Database from 'better-sqlite3'
import { eq, inArray, sql } from 'drizzle-orm'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { banUser, listUsers, setRole, systemActor } from '../../../server/features/admin/index.js'
import { countUsers, listUsersTuning, MAX_REMEMBERED_TERMS, type UserQuery } from '../../../server/features/admin/user-search/index.js'
import { user } from '../../../server/db/schema.js'
import { sqliteOnly, startTestServer, type TestServer, testEngine } from '../../helpers/server.js'

/**
 * The exact `total` of list-users (issue 14, migration list_users_counts) on the engine of the run
 * (this file runs on SQLite and on PostgreSQL): every count path (maintained counts per role and
 * ban state, the lower(col) prefix index, count(*) through the exact-total cache) against a count
 * computed in plain JavaScript from the rows themselves; the maintained counts after inserts,
 * updates, deletes, bans and role changes (NULLs included); the cache emptied by any write.
 */

let server: TestServer
const panel = systemActor('panel')
const ctx = () => server.gatehouse.ctx

interface Row {
  id: string
  name: string
  email: string
  role: string | null
  banned: boolean | null
}

const FIRST = ['Ann', 'Bob', 'Cid', 'Dee', 'Éva', 'li_m', 'Li%a']
const DOMAINS = ['alpha.test', 'Beta.example', 'gamma.example.org']

function person(i: number): Row {
  const first = FIRST[i % FIRST.length] as string
  return {
    id: `u${String(i).padStart(4, '0')}`,
    name: `${first} Stone${i % 3}`,
    email: `${i % 5 === 0 ? first.toUpperCase() : first.toLowerCase()}.${i}@${DOMAINS[i % DOMAINS.length]}`,
    role: i % 10 === 0 ? 'admin' : i % 13 === 0 ? null : i % 17 === 0 ? 'admin,user' : 'user',
    banned: i % 6 === 0 ? true : i % 11 === 0 ? null : false,
  }
}

async function insert(rows: Row[]): Promise<void> {
  const at = new Date(server.clock.now())
  await ctx()
    .db.insert(user)
    .values(rows.map((r) => ({ ...r, emailVerified: false, createdAt: at, updatedAt: at })))
}

/** Every user as the database holds it now. */
async function everyone(): Promise<Row[]> {
  return ctx().db.select({ id: user.id, name: user.name, email: user.email, role: user.role, banned: user.banned }).from(user)
}

/** SQLite's LIKE and PostgreSQL's lower() LIKE lower() on these rows: ASCII-only folding is enough here. */
const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase())

function matches(row: Row, query: Pick<UserQuery, 'search' | 'filter'>): boolean {
  if (query.search) {
    const text = fold(query.search.field === 'name' ? row.name : row.email)
    const v = fold(query.search.value)
    const ok =
      query.search.operator === 'starts_with'
        ? text.startsWith(v)
        : query.search.operator === 'ends_with'
          ? text.endsWith(v)
          : text.includes(v)
    if (!ok) return false
  }
  const f = query.filter
  if (f) {
    if (f.field === 'role') {
      const list = Array.isArray(f.value) ? f.value.map(String) : String(f.value).split(',')
      if (f.operator === 'eq') return row.role === String(f.value)
      if (f.operator === 'in') return row.role !== null && list.includes(row.role)
      if (f.operator === 'ne') return row.role !== null && row.role !== String(f.value)
    }
    if (f.field === 'banned') {
      const b = f.value === true || f.value === 'true'
      return f.operator === 'eq' ? (row.banned ?? false) === b : (row.banned ?? false) !== b
    }
    throw new Error(`no plain count for ${JSON.stringify(f)}`)
  }
  return true
}

const SEARCHED = ['term', 'trigram', 'counted']
const postgresOnly = testEngine === 'postgres' ? it : it.skip

const SHAPES: Array<{ query: Pick<UserQuery, 'search' | 'filter'>; path: string[] }> = [
  { query: {}, path: ['maintained'] },
  { query: { filter: { field: 'role', operator: 'eq', value: 'admin' } }, path: ['maintained'] },
  { query: { filter: { field: 'role', operator: 'eq', value: 'user' } }, path: ['maintained'] },
  { query: { filter: { field: 'role', operator: 'eq', value: 'admin,user' } }, path: ['maintained'] },
  { query: { filter: { field: 'role', operator: 'eq', value: 'nobody' } }, path: ['maintained'] },
  { query: { filter: { field: 'role', operator: 'in', value: ['admin', 'user'] } }, path: ['maintained'] },
  { query: { filter: { field: 'role', operator: 'ne', value: 'admin' } }, path: ['counted', 'cached'] },
  { query: { filter: { field: 'banned', operator: 'eq', value: true } }, path: ['maintained'] },
  { query: { filter: { field: 'banned', operator: 'eq', value: 'false' } }, path: ['maintained'] },
  { query: { filter: { field: 'banned', operator: 'ne', value: true } }, path: ['maintained'] },
  { query: { search: { field: 'email', operator: 'starts_with', value: 'li' } }, path: ['prefix'] },
  { query: { search: { field: 'email', operator: 'starts_with', value: 'LI_M.1' } }, path: ['prefix'] },
  { query: { search: { field: 'email', operator: 'starts_with', value: 'li%' } }, path: ['prefix'] },
  { query: { search: { field: 'email', operator: 'starts_with', value: 'l%' } }, path: ['prefix'] },
  { query: { search: { field: 'email', operator: 'starts_with', value: 'a' } }, path: ['prefix'] },
  { query: { search: { field: 'name', operator: 'starts_with', value: 'ann stone1' } }, path: ['prefix'] },
  { query: { search: { field: 'email', operator: 'starts_with', value: 'zzz' } }, path: ['prefix'] },
  // A search alone: a remembered term total, else (SQLite) the trigram index, else a count that remembers it.
  { query: { search: { field: 'email', operator: 'starts_with', value: 'éva' } }, path: SEARCHED },
  { query: { search: { field: 'email', operator: 'contains', value: 'example' } }, path: SEARCHED },
  { query: { search: { field: 'email', operator: 'contains', value: '_m.' } }, path: SEARCHED },
  { query: { search: { field: 'name', operator: 'contains', value: 'stone2' } }, path: SEARCHED },
  { query: { search: { field: 'email', operator: 'ends_with', value: '.ORG' } }, path: SEARCHED },
  { query: { search: { field: 'name', operator: 'contains', value: 'kat' } }, path: SEARCHED },
  { query: { search: { field: 'email', operator: 'contains', value: 'e' } }, path: SEARCHED },
  { query: { search: { field: 'email', operator: 'contains', value: 'zq"x' } }, path: SEARCHED },
  {
    query: { search: { field: 'email', operator: 'starts_with', value: 'ann' }, filter: { field: 'role', operator: 'eq', value: 'user' } },
    path: ['counted', 'cached'],
  },
  {
    query: { search: { field: 'email', operator: 'contains', value: 'example' }, filter: { field: 'banned', operator: 'eq', value: true } },
    path: ['counted', 'cached'],
  },
]

async function expectExact(): Promise<void> {
  const rows = await everyone()
  for (const { query, path } of SHAPES) {
    const expected = rows.filter((r) => matches(r, query)).length
    const got = await countUsers(ctx(), query)
    expect({ query, total: got.total }).toEqual({ query, total: expected })
    expect(path).toContain(got.path)
  }
}

beforeAll(async () => {
  server = await startTestServer()
  await insert(Array.from({ length: 300 }, (_, i) => person(i)))
  // Characters that fold to ASCII letters in the trigram index's Unicode case folding but not in
  // LIKE's (KELVIN SIGN, LATIN CAPITAL I WITH DOT ABOVE, LONG S): the trigram count must re-check.
  await insert([
    { id: 'k0001', name: 'Kelvin \u212Aate', email: 'kelvin.\u212Aat@alpha.test', role: 'user', banned: false },
    { id: 'k0002', name: 'Dotted \u0130sa', email: 'dotted.\u0130sa@alpha.test', role: 'user', banned: false },
    { id: 'k0003', name: 'Long \u017Fstone2', email: 'long.\u017Fs@alpha.test', role: 'user', banned: false },
    { id: 'k0004', name: 'Plain Kate', email: 'plain.kate@alpha.test', role: 'user', banned: false },
  ])
})
afterAll(() => server.close())

describe('list-users exact total', () => {
  it('every count path equals a plain count of the rows', async () => {
    await expectExact()
    // The shapes are not all trivially empty or full.
    const rows = await everyone()
    expect(rows.filter((r) => matches(r, SHAPES[1]?.query ?? {})).length).toBeGreaterThan(0)
    expect(rows.filter((r) => matches(r, SHAPES[10]?.query ?? {})).length).toBeGreaterThan(0)
    expect(rows.filter((r) => matches(r, SHAPES[12]?.query ?? {})).length).toBeGreaterThan(0)
  })

  it('the maintained counts stay exact through inserts, updates (NULLs included), bans, role changes and deletes', async () => {
    const db = ctx().db
    await insert(Array.from({ length: 40 }, (_, i) => person(300 + i)))
    await db
      .update(user)
      .set({ role: 'admin' })
      .where(inArray(user.id, ['u0001', 'u0002', 'u0003']))
    await db.update(user).set({ role: null }).where(eq(user.id, 'u0004'))
    await db
      .update(user)
      .set({ banned: true })
      .where(inArray(user.id, ['u0005', 'u0007', 'u0013']))
    await db.update(user).set({ banned: null }).where(eq(user.id, 'u0006'))
    await db.update(user).set({ banned: false, role: 'admin,user' }).where(eq(user.id, 'u0012'))
    await db.update(user).set({ name: 'renamed' }).where(eq(user.id, 'u0008'))
    await db
      .update(user)
      .set({ role: sql`${user.role}`, banned: sql`${user.banned}` })
      .where(eq(user.id, 'u0009'))
    await db.delete(user).where(inArray(user.id, ['u0000', 'u0010', 'u0055', 'u0004', 'u0006']))
    // Through the admin feature too: a ban and a role change as the panel makes them.
    await banUser(ctx(), panel, { userId: 'u0014', banReason: 'test' }, null)
    await setRole(ctx(), panel, { userId: 'u0015', role: 'admin' }, null)
    await expectExact()
  })

  it('list-users answers the same totals as the count paths, pages included', async () => {
    const rows = await everyone()
    const cases = [
      { query: {}, plain: {} },
      { query: { sortBy: 'name', sortDirection: 'desc' as const, limit: 10, offset: 50 }, plain: {} },
      { query: { sortBy: 'createdAt', limit: 10, offset: 330 }, plain: {} },
      { query: { filterField: 'role', filterValue: 'admin' }, plain: { filter: { field: 'role', operator: 'eq', value: 'admin' } } },
      { query: { filterField: 'banned', filterValue: 'true' }, plain: { filter: { field: 'banned', operator: 'eq', value: true } } },
      {
        query: { searchValue: 'li', searchOperator: 'starts_with' as const, sortBy: 'email' },
        plain: { search: { field: 'email', operator: 'starts_with', value: 'li' } },
      },
      {
        query: { searchValue: 'example', limit: 10, offset: 20 },
        plain: { search: { field: 'email', operator: 'contains', value: 'example' } },
      },
      {
        query: { searchValue: 'stone2', searchField: 'name' as const },
        plain: { search: { field: 'name', operator: 'contains', value: 'stone2' } },
      },
    ] satisfies Array<{ query: Parameters<typeof listUsers>[2]; plain: Pick<UserQuery, 'search' | 'filter'> }>
    for (const { query, plain } of cases) {
      const expected = rows.filter((r) => matches(r, plain))
      const page = await listUsers(ctx(), panel, query)
      expect({ query, total: page.total }).toEqual({ query, total: expected.length })
      const ids = new Set(expected.map((r) => r.id))
      expect(page.users.every((u) => ids.has(u.id))).toBe(true)
      expect(page.users.length).toBe(Math.max(0, Math.min(Number(query.limit ?? 100), expected.length - Number(query.offset ?? 0))))
    }
  })

  it('a cached total (search with a filter) is used while nothing changed and dropped by a write', async () => {
    const query: Pick<UserQuery, 'search' | 'filter'> = {
      search: { field: 'email', operator: 'contains', value: 'example' },
      filter: { field: 'role', operator: 'eq', value: 'user' },
    }
    const first = await countUsers(ctx(), query)
    const again = await countUsers(ctx(), query)
    expect(again).toEqual({ total: first.total, path: 'cached' })
    await insert([{ id: 'x0001', name: 'New One', email: 'new.one@example.net', role: 'user', banned: false }])
    expect(await countUsers(ctx(), query)).toEqual({ total: first.total + 1, path: 'counted' })
    expect(await countUsers(ctx(), query)).toEqual({ total: first.total + 1, path: 'cached' })
    await ctx().db.delete(user).where(eq(user.id, 'x0001'))
    expect(await countUsers(ctx(), query)).toEqual({ total: first.total, path: 'counted' })
    // A write that changes no total (a rename) empties it as well: the signal does not look at what changed.
    await countUsers(ctx(), query)
    await ctx().db.update(user).set({ name: 'Renamed Again' }).where(eq(user.id, 'u0020'))
    expect((await countUsers(ctx(), query)).path).toBe('counted')
  })

  sqliteOnly('a write by another process (another connection to the file) drops a cached total', async () => {
    const query: Pick<UserQuery, 'search' | 'filter'> = {
      search: { field: 'email', operator: 'contains', value: 'example' },
      filter: { field: 'banned', operator: 'eq', value: false },
    }
    const before = await countUsers(ctx(), query)
    expect((await countUsers(ctx(), query)).path).toBe('cached')
    const other = new Database(join(server.dataDir, 'gatehouse.db'))
    try {
      other
        .prepare('INSERT INTO user (id, name, email, emailVerified, createdAt, updatedAt, role, banned) VALUES (?, ?, ?, 0, 0, 0, ?, 0)')
        .run('x0002', 'Other Process', 'other@example.com', 'user')
    } finally {
      other.close()
    }
    expect(await countUsers(ctx(), query)).toEqual({ total: before.total + 1, path: 'counted' })
    expect((await countUsers(ctx(), {})).total).toBe((await everyone()).length)
  })
})

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** Searches alone whose totals the term rows remember (migrations list_users_terms). */
const TERMS: Array<NonNullable<UserQuery['search']>> = [
  { field: 'email', operator: 'contains', value: 'example' },
  { field: 'email', operator: 'contains', value: 'EXAMPLE' },
  { field: 'email', operator: 'contains', value: 'li_m' },
  { field: 'email', operator: 'contains', value: 'li%' },
  { field: 'email', operator: 'ends_with', value: '.ORG' },
  { field: 'email', operator: 'starts_with', value: 'éva' },
  { field: 'name', operator: 'contains', value: 'stone2' },
  { field: 'name', operator: 'contains', value: 'kat' },
  { field: 'name', operator: 'ends_with', value: 'e' },
  { field: 'email', operator: 'contains', value: 'e' },
]

/** Every term's total: from the term rows, and equal to a count of the rows in JavaScript. */
async function expectTermsExact(): Promise<void> {
  const rows = await everyone()
  for (const search of TERMS) {
    const expected = rows.filter((r) => matches(r, { search })).length
    expect({ search, got: await countUsers(ctx(), { search }) }).toEqual({ search, got: { total: expected, path: 'term' } })
    const page = await listUsers(ctx(), panel, { searchField: search.field, searchOperator: search.operator, searchValue: search.value })
    expect({ search, total: page.total }).toEqual({ search, total: expected })
  }
}

describe('list-users remembered term totals', () => {
  const tuning = listUsersTuning.trigramCountLimit
  beforeAll(() => {
    // Every search alone goes the remembering way (on SQLite a small table's terms are otherwise
    // counted through the trigram index and never remembered).
    listUsersTuning.trigramCountLimit = -1
  })
  afterAll(() => {
    listUsersTuning.trigramCountLimit = tuning
  })

  it('a term is counted once, then read from its row, exact through every kind of write of this process', async () => {
    const rows = await everyone()
    for (const search of TERMS) {
      const first = await countUsers(ctx(), { search })
      expect(['counted', 'term']).toContain(first.path)
      expect(first.total).toBe(rows.filter((r) => matches(r, { search })).length)
    }
    await expectTermsExact()
    const db = ctx().db
    await insert([
      { id: 't0001', name: 'Liam Stone2', email: 'li_m.new@example.org', role: 'user', banned: false },
      { id: 't0002', name: 'Kat Kate', email: 'KAT@EXAMPLE.ORG', role: null, banned: null },
      { id: 't0003', name: 'Nobody', email: 'nobody@nowhere.test', role: 'user', banned: false },
    ])
    await expectTermsExact()
    // An address moved out of and into matches, a name changed, both at once, an unrelated column.
    await db.update(user).set({ email: 'moved@nowhere.test' }).where(eq(user.id, 't0001'))
    await db.update(user).set({ email: 'li%x@example.org', name: 'Kat Stone2' }).where(eq(user.id, 't0003'))
    await db.update(user).set({ name: 'Zed' }).where(eq(user.id, 'u0002'))
    await db.update(user).set({ role: 'admin', banned: true }).where(eq(user.id, 'u0003'))
    await db
      .update(user)
      .set({ email: sql`${user.email}`, name: sql`${user.name}` })
      .where(eq(user.id, 'u0009'))
    await expectTermsExact()
    await db.delete(user).where(inArray(user.id, ['t0002', 'u0001', 'u0005']))
    await expectTermsExact()
  })

  it('totals stay exact through writes of another connection (another process, SQL by hand)', async () => {
    await expectTermsExact()
    const statements: Array<[string, unknown[]]> = [
      [
        'INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt", role, banned) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
        ['o0001', 'Other Stone2', 'other.li_m@example.com', false, new Date(0), new Date(0), 'user', false],
      ],
      ['UPDATE "user" SET email = $1 WHERE id = $2', ['renamed.by.hand@nowhere.test', 'u0007']],
      ['UPDATE "user" SET name = $1 WHERE id = $2', ['Kathy Hand', 'u0011']],
      ['DELETE FROM "user" WHERE id IN ($1, $2)', ['u0012', 'u0013']],
    ]
    if (testEngine === 'sqlite') {
      const other = new Database(join(server.dataDir, 'gatehouse.db'))
      try {
        for (const [text, values] of statements) {
          other
            .prepare(text.replace(/\$\d+/g, '?'))
            .run(...values.map((v) => (v instanceof Date ? v.getTime() : typeof v === 'boolean' ? Number(v) : v)))
        }
        // Inside one transaction of the other connection, too.
        other.transaction(() => {
          other.prepare('UPDATE "user" SET email = ? WHERE id = ?').run('back.li_m@example.com', 'u0007')
          other.prepare('DELETE FROM "user" WHERE id = ?').run('u0014')
        })()
      } finally {
        other.close()
      }
    } else {
      const other = new pg.Client({ connectionString: server.databaseUrl })
      await other.connect()
      try {
        for (const [text, values] of statements) await other.query(text, values)
        await other.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
        await other.query('SELECT count(*) FROM "user"')
        await other.query('UPDATE "user" SET email = $1 WHERE id = $2', ['back.li_m@example.com', 'u0007'])
        await other.query('DELETE FROM "user" WHERE id = $1', ['u0014'])
        await other.query('COMMIT')
      } finally {
        await other.end()
      }
    }
    await expectTermsExact()
  })

  it('a term with many trigram candidates (SQLite: counted through the trigram index) is remembered too', async () => {
    const saved = { ...listUsersTuning }
    listUsersTuning.trigramCountLimit = 40_000
    listUsersTuning.trigramRememberFrom = 0
    try {
      const search = { field: 'email' as const, operator: 'contains' as const, value: 'ALPHA.t' }
      const expected = async () => (await everyone()).filter((r) => matches(r, { search })).length
      expect(await countUsers(ctx(), { search })).toEqual({ total: await expected(), path: 'counted' })
      expect(await countUsers(ctx(), { search })).toEqual({ total: await expected(), path: 'term' })
      await insert([{ id: 't0100', name: 'Alpha Too', email: 'too@alpha.test', role: 'user', banned: false }])
      await ctx().db.update(user).set({ email: 'gone@nowhere.test' }).where(eq(user.id, 'k0004'))
      expect(await countUsers(ctx(), { search })).toEqual({ total: await expected(), path: 'term' })
    } finally {
      Object.assign(listUsersTuning, saved)
    }
  })

  postgresOnly('a term added while other transactions write stays exact (PostgreSQL: SHARE lock, epoch row)', async () => {
    const connect = async () => {
      const client = new pg.Client({ connectionString: server.databaseUrl })
      await client.connect()
      return client
    }
    const row = (id: string, email: string) => [id, `Writer ${id}`, email, false, new Date(0), new Date(0), 'user', false]
    const insertSql =
      'INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt", role, banned) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)'
    const exactFor = async (search: NonNullable<UserQuery['search']>) => (await everyone()).filter((r) => matches(r, { search })).length
    const [a, b, c] = await Promise.all([connect(), connect(), connect()])
    try {
      // 1. A writer in flight (its insert not committed) when the term is added: the count waits for it.
      const first = { field: 'email' as const, operator: 'contains' as const, value: 'inflight' }
      const writerPid = (await a.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid
      await a.query('BEGIN')
      await a.query(insertSql, row('w0001', 'inflight.1@example.com'))
      const counting = countUsers(ctx(), { search: first })
      // The count is seen waiting on a lock held by the writer (a count that did not wait would
      // never show up here), and only then does the writer commit.
      const blockedByWriter = async () =>
        (
          await b.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and $1 = any(pg_blocking_pids(pid))`,
            [writerPid],
          )
        ).rows[0]?.n
      await vi.waitFor(async () => expect(await blockedByWriter()).toBeGreaterThan(0), { timeout: 10_000, interval: 20 })
      await a.query('COMMIT')
      expect(await counting).toEqual({ total: await exactFor(first), path: 'counted' })
      expect(await countUsers(ctx(), { search: first })).toEqual({ total: await exactFor(first), path: 'term' })

      // 2. Writers whose snapshot predates the term, writing after it was added: a REPEATABLE READ
      // one fails (serialization) instead of leaving the count one short; a READ COMMITTED one
      // sees the term and counts itself.
      const second = { field: 'email' as const, operator: 'contains' as const, value: 'snapshot' }
      await b.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
      await b.query('SELECT count(*) FROM "user"')
      await c.query('BEGIN ISOLATION LEVEL READ COMMITTED')
      await c.query('SELECT count(*) FROM "user"')
      expect((await countUsers(ctx(), { search: second })).path).toBe('counted')
      const failed = await b.query(insertSql, row('w0002', 'snapshot.rr@example.com')).then(
        () => null,
        (error: { code?: string }) => error.code,
      )
      await b.query(failed ? 'ROLLBACK' : 'COMMIT')
      expect(failed).toBe('40001')
      await c.query(insertSql, row('w0003', 'snapshot.rc@example.com'))
      await c.query('COMMIT')
      expect(await countUsers(ctx(), { search: second })).toEqual({ total: await exactFor(second), path: 'term' })
      expect(await exactFor(second)).toBe(1)
    } finally {
      await Promise.all([a.end(), b.end(), c.end()])
    }
  })

  it('keeps at most MAX_REMEMBERED_TERMS terms and forgets the least recently used first', async () => {
    await expectTermsExact()
    // TERMS are the oldest now; fill up with newer terms (each at a later time).
    for (let i = 0; i < MAX_REMEMBERED_TERMS; i++) {
      server.clock.advanceSeconds(1)
      // Two characters: no trigram, so never counted through the trigram index.
      const search = { field: 'email' as const, operator: 'contains' as const, value: `${ALNUM[i % 36]}${ALNUM[Math.floor(i / 36)]}` }
      expect((await countUsers(ctx(), { search })).path).toBe('counted')
    }
    const rows = await everyone()
    for (const search of TERMS) {
      const again = await countUsers(ctx(), { search })
      // Forgotten, so counted again; 'EXAMPLE' shares the row 'example' has just been given back.
      const path = search.value === 'EXAMPLE' ? 'term' : 'counted'
      expect({ search, again }).toEqual({ search, again: { total: rows.filter((r) => matches(r, { search })).length, path } })
    }
    const remembered = await ctx()
      .db.select({ n: sql<number>`count(*)` })
      .from(sql`"userTermCount"`)
      .where(testEngine === 'sqlite' ? sql`1 = 1` : sql`"shard" = 0 AND "field" <> ''`)
    expect(Number(remembered[0]?.n)).toBe(MAX_REMEMBERED_TERMS)
  })
})
