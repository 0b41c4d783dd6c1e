import Database from 'better-sqlite3'
import { eq, inArray, sql } from 'drizzle-orm'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { banUser, listUsers, setRole, systemActor } from '../../server/features/admin/index.js'
import { countUsers, type UserQuery } from '../../server/features/admin/store.js'
import { user } from '../../server/db/schema.js'
import { sqliteOnly, startTestServer, type TestServer } from '../helpers/server.js'

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
  { query: { search: { field: 'email', operator: 'starts_with', value: 'éva' } }, path: ['counted', 'cached'] },
  { query: { search: { field: 'email', operator: 'contains', value: 'example' } }, path: ['counted', 'cached'] },
  { query: { search: { field: 'email', operator: 'contains', value: '_m.' } }, path: ['counted', 'cached'] },
  { query: { search: { field: 'name', operator: 'contains', value: 'stone2' } }, path: ['counted', 'cached'] },
  { query: { search: { field: 'email', operator: 'ends_with', value: '.ORG' } }, path: ['counted', 'cached'] },
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

  it('a cached total is used while nothing changed and dropped by a write', async () => {
    const query: Pick<UserQuery, 'search' | 'filter'> = { search: { field: 'email', operator: 'contains', value: 'example' } }
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
    const query: Pick<UserQuery, 'search' | 'filter'> = { search: { field: 'email', operator: 'contains', value: 'example' } }
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
