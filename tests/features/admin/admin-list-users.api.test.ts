import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { banUser, createUser, systemActor } from '../../../server/features/admin/index.js'
import { listUsersTuning } from '../../../server/features/admin/user-search/index.js'
import { HttpClient } from '../../helpers/http.js'
import { startTestServer, type TestServer, sqliteOf, testEngine } from '../../helpers/server.js'
import { administrator, type Member, member } from '../../helpers/members.js'

/**
 * list-users query semantics (SPEC §7, reference §8.5) against a known population. Expected
 * answers are computed from the population in plain JavaScript, independently of the SQL.
 */

interface Person {
  id: string
  name: string
  email: string
  role: string
  banned: boolean
  createdAt: number
}

const FIRST = ['Ann', 'Bob', 'Cid', 'Dee', 'Eve']
const LAST = ['Stone', 'River', 'Hill_Top']
const panel = systemActor('panel')

let server: TestServer
let admin: Member
const people: Person[] = []

beforeAll(async () => {
  server = await startTestServer()
  admin = await administrator(server)
  const ctx = server.gatehouse.ctx
  const adminRow = { id: admin.id, name: admin.name, email: admin.email, role: 'admin', banned: false, createdAt: server.clock.now() }
  people.push(adminRow)
  for (let i = 0; i < 25; i++) {
    server.clock.advanceSeconds(10)
    const name = `${FIRST[i % 5]} ${LAST[i % 3]} ${String(i).padStart(2, '0')}`
    const email = `${FIRST[i % 5]?.toLowerCase()}${i}@${i % 2 === 0 ? 'alpha' : 'beta'}.test`
    const role = i % 4 === 0 ? 'admin' : 'user'
    const created = await createUser(ctx, panel, { email, name, role }, null)
    const banned = i % 6 === 0
    if (banned) await banUser(ctx, panel, { userId: created.id, banReason: 'test' }, null)
    people.push({ id: created.id, name, email, role, banned, createdAt: server.clock.now() })
  }
})
afterAll(() => server.close())

interface Page {
  users: Array<{ id: string; name: string }>
  total: number
  limit?: number
  offset?: number
}

async function list(query: Record<string, string | number | boolean>): Promise<Page> {
  const res = await admin.client.admin.listUsers({ query })
  if (res.error) throw new Error(JSON.stringify(res.error))
  return res.data as unknown as Page
}

const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id)
const byName = (a: Person, b: Person) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
const lower = (s: string) => s.toLowerCase()

describe('list-users', () => {
  it('lists everyone in insertion order with total (default limit 100, not echoed when not given)', async () => {
    const page = await list({})
    expect(page.total).toBe(people.length)
    expect(page).not.toHaveProperty('limit')
    expect(page).not.toHaveProperty('offset')
    expect(ids(page.users)).toEqual(ids(people))
    expect(page.users[1]).toMatchObject({ email: people[1]?.email, role: people[1]?.role })
  })

  it('pages everyone sorted by each column, both directions, every offset (deep pages are read from the nearer end)', async () => {
    const orders: Array<[string, (a: Person, b: Person) => number]> = [
      ['name', byName],
      ['email', (a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0)],
      ['createdAt', (a, b) => a.createdAt - b.createdAt],
    ]
    for (const [sortBy, compare] of orders) {
      const ascending = [...people].sort(compare)
      for (const [sortDirection, expected] of [
        ['asc', ascending],
        ['desc', [...ascending].reverse()],
      ] as const) {
        for (let offset = 0; offset <= people.length; offset++) {
          const page = await list({ sortBy, sortDirection, limit: 4, offset })
          const what = `${sortBy} ${sortDirection} offset ${offset}`
          expect(page.total, what).toBe(people.length)
          expect(ids(page.users), what).toEqual(ids(expected.slice(offset, offset + 4)))
        }
      }
    }
  })

  it('searches email (default field and operator) through the trigram index and by a short term', async () => {
    const beta = await list({ searchValue: 'BETA.t' })
    const expected = people.filter((p) => p.email.includes('beta.t'))
    expect(beta.total).toBe(expected.length)
    expect(ids(beta.users)).toEqual(ids(expected))
    const short = await list({ searchValue: 'e1', searchField: 'email' })
    const expectedShort = people.filter((p) => p.email.includes('e1'))
    expect(short.total).toBe(expectedShort.length)
    expect(ids(short.users)).toEqual(ids(expectedShort))
    const none = await list({ searchValue: 'zzzqqq' })
    expect(none).toEqual({ users: [], total: 0 }) // limit and offset are echoed only when given (better-auth 1.7)
  })

  it('searches names with contains, starts_with and ends_with, wildcards taken literally', async () => {
    const cases: Array<[string, string, (n: string) => boolean]> = [
      ['contains', 'river', (n) => lower(n).includes('river')],
      ['starts_with', 'dee', (n) => lower(n).startsWith('dee')],
      ['ends_with', '07', (n) => n.endsWith('07')],
      ['contains', 'hill_top', (n) => lower(n).includes('hill_top')],
      ['contains', 'l_t', (n) => lower(n).includes('l_t')],
      ['contains', '%', (n) => n.includes('%')],
      ['contains', 'a"b', (n) => n.includes('a"b')],
    ]
    for (const [searchOperator, searchValue, match] of cases) {
      const page = await list({ searchField: 'name', searchOperator, searchValue })
      const expected = people.filter((p) => match(p.name))
      expect(page.total, `${searchOperator} ${searchValue}`).toBe(expected.length)
      expect(ids(page.users), `${searchOperator} ${searchValue}`).toEqual(ids(expected))
    }
  })

  it('filters by role, banned, name and createdAt with each operator', async () => {
    const middle = people[12]?.createdAt as number
    const cases: Array<[Record<string, string | number | boolean>, (p: Person) => boolean]> = [
      [{ filterField: 'role', filterValue: 'admin' }, (p) => p.role === 'admin'],
      [{ filterField: 'role', filterValue: 'admin', filterOperator: 'ne' }, (p) => p.role !== 'admin'],
      [{ filterField: 'banned', filterValue: true }, (p) => p.banned],
      [{ filterField: 'banned', filterValue: 'false' }, (p) => !p.banned],
      [{ filterField: 'name', filterValue: 'stone', filterOperator: 'contains' }, (p) => lower(p.name).includes('stone')],
      [{ filterField: 'createdAt', filterValue: middle, filterOperator: 'lt' }, (p) => p.createdAt < middle],
      [{ filterField: 'createdAt', filterValue: middle, filterOperator: 'lte' }, (p) => p.createdAt <= middle],
      [{ filterField: 'createdAt', filterValue: new Date(middle).toISOString(), filterOperator: 'gt' }, (p) => p.createdAt > middle],
      [{ filterField: 'createdAt', filterValue: middle, filterOperator: 'gte' }, (p) => p.createdAt >= middle],
      [{ filterValue: people[3]?.email as string }, (p) => p.email === people[3]?.email],
    ]
    for (const [query, match] of cases) {
      const page = await list(query)
      const expected = people.filter(match)
      expect(page.total, JSON.stringify(query)).toBe(expected.length)
      expect(ids(page.users), JSON.stringify(query)).toEqual(ids(expected))
    }
  })

  it('ANDs search and filter, sorts and pages, with the total of all matches', async () => {
    const matches = people
      .filter((p) => p.email.includes('alpha') && p.role === 'user')
      .sort(byName)
      .reverse()
    const page = await list({
      searchValue: 'alpha',
      filterField: 'role',
      filterValue: 'user',
      sortBy: 'name',
      sortDirection: 'desc',
      limit: 3,
      offset: 2,
    })
    expect(page.total).toBe(matches.length)
    expect(page.limit).toBe(3)
    expect(page.offset).toBe(2)
    expect(ids(page.users)).toEqual(ids(matches.slice(2, 5)))

    // Pages of a sort walk everyone exactly once, in order, for indexed and unindexed columns.
    for (const sortBy of ['name', 'createdAt', 'role', 'email']) {
      const seen: string[] = []
      for (let offset = 0; offset < people.length; offset += 7) {
        const p = await list({ sortBy, sortDirection: 'asc', limit: 7, offset })
        expect(p.total).toBe(people.length)
        seen.push(...ids(p.users))
      }
      const key = (x: Person) => (sortBy === 'createdAt' ? x.createdAt : (x[sortBy as 'name' | 'role' | 'email'] as string))
      const expected = people
        .map((x, i) => ({ x, i }))
        .sort((a, b) => (key(a.x) < key(b.x) ? -1 : key(a.x) > key(b.x) ? 1 : a.i - b.i))
        .map(({ x }) => x.id)
      expect(seen, sortBy).toEqual(expected)
    }
    // A short (index-walk) search sorted by name, and an offset past the end.
    const dense = await list({ searchValue: 'e', searchField: 'name', sortBy: 'name', limit: 2 })
    const denseExpected = people.filter((p) => lower(p.name).includes('e')).sort(byName)
    expect(dense.total).toBe(denseExpected.length)
    expect(ids(dense.users)).toEqual(ids(denseExpected.slice(0, 2)))
    const denseDesc = await list({ searchValue: 'E', searchField: 'name', sortBy: 'name', sortDirection: 'desc', limit: 2, offset: 3 })
    expect(ids(denseDesc.users)).toEqual(ids([...denseExpected].reverse().slice(3, 5)))
    // An email prefix sorted by email, both ways and paged (PostgreSQL takes the page's addresses
    // from the lower(email) prefix index).
    const prefixed = people.filter((p) => p.email.startsWith('e')).sort((a, b) => (a.email < b.email ? -1 : 1))
    for (const [sortDirection, expected] of [
      ['asc', prefixed],
      ['desc', [...prefixed].reverse()],
    ] as const) {
      const seen: string[] = []
      for (let offset = 0; offset < prefixed.length; offset += 2) {
        const p = await list({ searchValue: 'E', searchOperator: 'starts_with', sortBy: 'email', sortDirection, limit: 2, offset })
        expect(p.total).toBe(prefixed.length)
        seen.push(...ids(p.users))
      }
      expect(seen, sortDirection).toEqual(ids(expected))
    }
    const past = await list({ limit: 10, offset: 500 })
    expect(past).toEqual({ users: [], total: people.length, limit: 10, offset: 500 })
    const pastSearch = await list({ searchValue: 'alpha', limit: 10, offset: 500 })
    expect(pastSearch).toEqual({ users: [], total: people.filter((p) => p.email.includes('alpha')).length, limit: 10, offset: 500 })
  })

  it('a sparse search alone (SQLite: matches from the trigram index, sorted) gives the same pages', async () => {
    const sparse = listUsersTuning.sparseWalkRows
    listUsersTuning.sparseWalkRows = 0
    try {
      const cases: Array<[Record<string, string | number>, (p: Person) => boolean, ((a: Person, b: Person) => number) | null]> = [
        [{ searchValue: 'BETA.t' }, (p) => p.email.includes('beta.t'), null],
        [{ searchValue: 'alpha', limit: 3, offset: 2 }, (p) => p.email.includes('alpha'), null],
        [{ searchValue: 'ann', searchField: 'name', sortBy: 'name' }, (p) => lower(p.name).includes('ann'), byName],
        [
          { searchValue: 'stone', searchField: 'name', sortBy: 'name', sortDirection: 'desc', limit: 2, offset: 1 },
          (p) => lower(p.name).includes('stone'),
          (a, b) => byName(b, a),
        ],
        [
          { searchValue: 'l_t', searchField: 'name', sortBy: 'createdAt' },
          (p) => lower(p.name).includes('l_t'),
          (a, b) => a.createdAt - b.createdAt,
        ],
        [
          { searchValue: '.test', searchOperator: 'ends_with', sortBy: 'email', limit: 4 },
          (p) => p.email.endsWith('.test'),
          (a, b) => (a.email < b.email ? -1 : 1),
        ],
        [{ searchValue: 'zzzqqq' }, () => false, null],
      ]
      for (const [query, match, sort] of cases) {
        const all = people.filter(match)
        const sorted = sort ? [...all].sort(sort) : all
        const from = Number(query.offset ?? 0)
        const page = await list(query)
        expect(page.total, JSON.stringify(query)).toBe(all.length)
        expect(ids(page.users), JSON.stringify(query)).toEqual(ids(sorted.slice(from, from + Number(query.limit ?? 100))))
      }
    } finally {
      listUsersTuning.sparseWalkRows = sparse
    }
  })

  it('a substring or prefix sorted by the searched column pages through every match in order', async () => {
    // PostgreSQL splits these into the matches starting with the term (from the prefix index) and
    // the rest (a walk of the sort index); every page of both directions against JavaScript.
    // SQLite merges the index ranges of a prefix's case variants (starts_with).
    const cases: Array<['name' | 'email', 'contains' | 'starts_with', string]> = [
      ['name', 'contains', 'e'],
      ['name', 'contains', 'E'],
      ['name', 'contains', 'ann'],
      ['name', 'contains', 'stone'],
      ['name', 'contains', 'hill_'],
      ['email', 'contains', 'e'],
      ['email', 'contains', 'a'],
      ['email', 'contains', 'zzzqqq'],
      ['name', 'starts_with', 'aNN s'],
      ['name', 'starts_with', 'DEE'],
      ['name', 'starts_with', 'e'],
      ['name', 'starts_with', 'hill'],
      ['email', 'starts_with', 'ann1'],
      ['email', 'starts_with', 'BOB11@BETA.T'],
      ['email', 'starts_with', 'e'],
      ['email', 'starts_with', 'c_d'],
    ]
    for (const [field, operator, term] of cases) {
      const value = (p: Person) => (field === 'name' ? p.name : p.email)
      const all = people.filter((p) =>
        operator === 'contains' ? lower(value(p)).includes(lower(term)) : lower(value(p)).startsWith(lower(term)),
      )
      const asc = [...all].sort((a, b) => (value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : 0))
      for (const [sortDirection, expected] of [
        ['asc', asc],
        ['desc', [...asc].reverse()],
      ] as const) {
        const seen: string[] = []
        for (let offset = 0; offset < Math.max(1, all.length); offset += 3) {
          const page = await list({
            searchValue: term,
            searchField: field,
            searchOperator: operator,
            sortBy: field,
            sortDirection,
            limit: 3,
            offset,
          })
          expect(page.total, `${field} ${operator} ${term} ${sortDirection} ${offset}`).toBe(all.length)
          seen.push(...ids(page.users))
        }
        expect(seen, `${field} ${operator} ${term} ${sortDirection}`).toEqual(ids(expected))
      }
    }
  })

  it('answers no users and total 0 for unknown fields or impossible values, 400 for bad enums', async () => {
    expect(await list({ filterField: 'password', filterValue: 'x' })).toEqual({ users: [], total: 0 })
    expect(await list({ sortBy: 'nope' })).toEqual({ users: [], total: 0 })
    expect(await list({ filterField: 'banned', filterValue: 'maybe' })).toEqual({ users: [], total: 0 })
    expect(await list({ filterField: 'createdAt', filterValue: 'not a date', filterOperator: 'lt' })).toEqual({ users: [], total: 0 })
    const raw = new HttpClient(server.base)
    raw.jar.cookies.set('better-auth.session_token', admin.jar.get('better-auth.session_token') as string)
    const bad = await raw.get('/admin/list-users?searchOperator=like&searchValue=x')
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({
      code: 'VALIDATION_ERROR',
      message: '[query.searchOperator] Invalid option: expected one of "contains"|"starts_with"|"ends_with"',
    })
  })

  it('keeps the search index in step with new, renamed, re-addressed and removed users', async () => {
    const fresh = await member(server, { name: 'Quentin Zebulon' })
    expect(ids((await list({ searchValue: 'zebulon', searchField: 'name' })).users)).toEqual([fresh.id])
    await admin.client.admin.updateUser({ userId: fresh.id, data: { name: 'Quentin Xylophone', email: 'xylo@gamma.test' } })
    expect((await list({ searchValue: 'zebulon', searchField: 'name' })).total).toBe(0)
    expect(ids((await list({ searchValue: 'xylophone', searchField: 'name' })).users)).toEqual([fresh.id])
    expect(ids((await list({ searchValue: 'xylo@gam' })).users)).toEqual([fresh.id])
    expect((await list({ searchValue: fresh.email })).total).toBe(0)
    await admin.client.admin.removeUser({ userId: fresh.id })
    expect((await list({ searchValue: 'xylophone', searchField: 'name' })).total).toBe(0)
    // The trigram index is an SQLite FTS5 table (migration 0001_user_search); PostgreSQL searches
    // the user table itself (pg_trgm), so there is nothing left over to look for there.
    if (testEngine === 'sqlite') {
      const leftovers = sqliteOf(server.gatehouse.ctx).prepare('SELECT count(*) AS n FROM user_search WHERE userId = ?').get(fresh.id)
      expect(leftovers).toEqual({ n: 0 })
    }
  })
})
