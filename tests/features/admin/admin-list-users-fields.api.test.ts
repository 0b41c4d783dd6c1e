import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { administrator } from '../../helpers/members.js'

/**
 * Issue 11: list-users filters on configured additional user fields (each type, each operator
 * family), and echoes limit/offset only when the request gave them, as better-auth 1.7 does.
 */
let server: TestServer
let admin: Awaited<ReturnType<typeof administrator>>
const tag = Date.now().toString(36)

interface Person {
  email: string
  plan: string
  seats: number
  trial: boolean
  renewsAt: string
}
const people: Person[] = [
  { email: uniqueEmail(`f${tag}a`), plan: 'pro', seats: 10, trial: false, renewsAt: '2027-01-01T00:00:00.000Z' },
  { email: uniqueEmail(`f${tag}b`), plan: 'free', seats: 1, trial: true, renewsAt: '2026-06-01T00:00:00.000Z' },
  { email: uniqueEmail(`f${tag}c`), plan: 'pro', seats: 3, trial: true, renewsAt: '2026-12-24T00:00:00.000Z' },
  { email: uniqueEmail(`f${tag}d`), plan: 'team', seats: 25, trial: false, renewsAt: '2028-03-01T00:00:00.000Z' },
]

beforeAll(async () => {
  server = await startTestServer({
    config: {
      user: {
        additionalFields: {
          plan: { type: 'string' },
          seats: { type: 'number' },
          trial: { type: 'boolean' },
          renewsAt: { type: 'date' },
        },
      },
    },
  })
  for (const p of people) {
    const res = await new HttpClient(server.base).post('/sign-up/email', { name: 'Field Person', password: 'correct horse battery', ...p })
    expect(res.status).toBe(200)
  }
  admin = await administrator(server)
})
afterAll(() => server.close())

async function list(query: Record<string, string | number | boolean>) {
  const res = await admin.client.admin.listUsers({ query: { searchValue: `f${tag}`, ...query } })
  expect(res.error).toBeNull()
  return res.data as { users: Array<{ email: string }>; total: number; limit?: number; offset?: number }
}
const emails = (r: { users: Array<{ email: string }> }) => r.users.map((u) => u.email).sort()
const expected = (pred: (p: Person) => boolean) =>
  people
    .filter(pred)
    .map((p) => p.email)
    .sort()

describe('list-users filters on configured additional fields', () => {
  it.each([
    ['plan eq pro', { filterField: 'plan', filterValue: 'pro' }, (p: Person) => p.plan === 'pro'],
    ['plan ne pro', { filterField: 'plan', filterValue: 'pro', filterOperator: 'ne' }, (p: Person) => p.plan !== 'pro'],
    ['plan starts_with t', { filterField: 'plan', filterValue: 't', filterOperator: 'starts_with' }, (p: Person) => p.plan.startsWith('t')],
    [
      'plan in free,team',
      { filterField: 'plan', filterValue: 'free,team', filterOperator: 'in' },
      (p: Person) => ['free', 'team'].includes(p.plan),
    ],
    ['seats gt 5', { filterField: 'seats', filterValue: 5, filterOperator: 'gt' }, (p: Person) => p.seats > 5],
    ['seats lte 3', { filterField: 'seats', filterValue: '3', filterOperator: 'lte' }, (p: Person) => p.seats <= 3],
    ['trial true', { filterField: 'trial', filterValue: true }, (p: Person) => p.trial],
    ['trial false', { filterField: 'trial', filterValue: 'false' }, (p: Person) => !p.trial],
    [
      'renewsAt before 2027',
      { filterField: 'renewsAt', filterValue: '2027-01-01T00:00:00.000Z', filterOperator: 'lt' },
      (p: Person) => p.renewsAt < '2027-01-01T00:00:00.000Z',
    ],
  ] as const)('%s', async (_name, query, pred) => {
    const result = await list(query)
    expect(emails(result)).toEqual(expected(pred))
    expect(result.total).toBe(expected(pred).length)
  })

  it('a value of the wrong type, or a field that is not configured, answers no users', async () => {
    expect(await list({ filterField: 'seats', filterValue: 'many', filterOperator: 'gt' })).toEqual({ users: [], total: 0 })
    expect(await list({ filterField: 'colour', filterValue: 'red' })).toEqual({ users: [], total: 0 })
  })
})

describe('list-users echoes limit and offset only when given', () => {
  it('omits both without them, echoes both with them', async () => {
    const plain = await list({})
    expect(Object.keys(plain).sort()).toEqual(['total', 'users'])
    const paged = await list({ limit: 2, offset: 1 })
    expect(paged).toMatchObject({ limit: 2, offset: 1, total: people.length })
    expect(paged.users).toHaveLength(2)
  })
})
