import { Agent } from 'node:http'
import { and, count, eq, notExists } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account, member, organization, user } from '../../server/db/schema.js'
import { firstRow } from '../../server/db/storage.js'
import { allRoutes } from '../../server/routes.js'
import { HttpClient, rawRequest, type SignedUp, signUp } from '../helpers/http.js'
import { startTestServer, type TestServer, sqliteOf, testEngine } from '../helpers/server.js'

/**
 * Hostile input never hurts. At least 20 000 requests across every declared endpoint from 16
 * concurrent workers, each with its own seeded generator (the seeds are printed; FUZZ_SEED=<n>
 * replays a run). Two kinds of body:
 * - malformed (wrong types, broken encodings, oversized or missing fields): must stop at the
 *   validator with a 4xx;
 * - valid-but-hostile (the right shape, hostile values: huge strings, Unicode edge cases, numbers
 *   at their limits, unknown extra fields such as `role`, `emailVerified`, `__proto__`): they reach
 *   the handlers, and the run asserts that a real share of them is answered with something other
 *   than 400.
 * Half the requests carry the session of a signed-in user, so signed-in handlers are fuzzed too;
 * routes that end a session never get that cookie, and the session must still work at the end.
 * After the run: no 5xx, no leak of internals, no prototype pollution, the fuzzed user unchanged
 * in what a request must never change (role, ban, verification, password), no user created, no
 * dangling rows, and the database intact.
 */
let server: TestServer
let victim: SignedUp
let cookie = ''
beforeAll(async () => {
  server = await startTestServer({ config: { user: { changeEmail: { enabled: true }, deleteUser: { enabled: true } } } })
  victim = await signUp(server.base)
  cookie = victim.client.jar.header()
})
afterAll(() => server.close())

/** xorshift32: one per worker, so every worker's sequence is replayable from its seed. */
function generator(seed: number) {
  let s = seed >>> 0 || 1
  const rand = () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 0x100000000
  }
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T
  return { rand, pick }
}
type Gen = ReturnType<typeof generator>

const MEGABYTE = 'x'.repeat(1024 * 1024)
const badValues: readonly string[] = [
  'null',
  'true',
  '-1',
  '9007199254740993',
  '1e309',
  '-0',
  '""',
  '"\\u0000"',
  '"\\ud800"',
  '[]',
  '[[[[[]]]]]',
  '{}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  `"${'a'.repeat(10_000)}"`,
  '"not-an-email"',
  '"../../etc/passwd"',
  '"\' OR 1=1 --"',
  '"<script>alert(1)</script>"',
  '"%00%2e%2e%2f"',
  '"\\u202e\\u0301\\ufeff"',
]

/** Strings a handler must survive: sizes, Unicode edge cases, injection shapes. */
const hostileStrings: readonly string[] = [
  '',
  ' ',
  'a'.repeat(20_000),
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '\u202e\u0301\ufeff\u200b',
  'ﬀ\u212b\u2126', // NFKC changes these
  '🧪'.repeat(500),
  'e\u0301'.repeat(1000),
  '\r\nSet-Cookie: x=1',
  "' OR 1=1 --",
  '"; DROP TABLE user; --',
  '<img src=x onerror=alert(1)>',
  '../../etc/passwd',
  'javascript:alert(1)',
  '__proto__',
  'constructor',
  'toString',
  'null',
  '%00%2e%2e%2f',
  'owner',
  'admin',
]
/** Email-shaped values (they pass the format check): the handler behind it runs. */
const hostileEmails: readonly string[] = [
  'a@b.co',
  'UPPER.CASE@EXAMPLE.COM',
  `${'a'.repeat(64)}@${'b'.repeat(63)}.com`,
  `x+${'y'.repeat(200)}@example.com`,
  'üñî@exämple.com',
  'a"b@example.com',
  "o'hara@example.com",
  'x@xn--80ak6aa92e.com',
  'nobody@example.com',
]
const hostileNumbers: readonly number[] = [0, -0, -1, 1, 2 ** 31, -(2 ** 31), 2 ** 53, Number.MAX_SAFE_INTEGER, 1e308, -1e308, 5e-324, 0.5]
/** Passwords outside the policy (under 8 or over 128 characters): sign-up stops before hashing. */
const hostilePasswords: readonly string[] = ['', 'short', '\u0000', 'x'.repeat(129), '🧪'.repeat(100), 'a'.repeat(20_000)]
const extraFields: readonly [string, string][] = [
  ['role', '"admin"'],
  ['emailVerified', 'true'],
  ['banned', 'false'],
  ['id', '"forged-id"'],
  ['userId', '"forged-id"'],
  ['createdAt', '"1970-01-01T00:00:00.000Z"'],
  ['__proto__', '{"polluted":"yes"}'],
  ['constructor', '{"prototype":{"polluted":"yes"}}'],
  ['prototype', '{"polluted":"yes"}'],
  ['isAdmin', 'true'],
]

interface ZodLike {
  def?: {
    type?: string
    innerType?: ZodLike
    options?: ZodLike[]
    element?: ZodLike
    shape?: Record<string, ZodLike>
    values?: unknown[]
    entries?: Record<string, unknown>
    in?: ZodLike
  }
  shape?: Record<string, ZodLike>
}

/** A value of the schema's shape with hostile content. */
function hostileValue(g: Gen, field: string, schema: ZodLike | undefined, depth = 0): unknown {
  const def = schema?.def
  switch (def?.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return g.rand() < 0.2 ? null : hostileValue(g, field, def.innerType, depth)
    case 'pipe':
      return hostileValue(g, field, def.in, depth)
    case 'union':
      return hostileValue(g, field, g.pick(def.options ?? []), depth)
    case 'enum':
      return g.rand() < 0.7 ? g.pick(Object.values(def.entries ?? {})) : g.pick(hostileStrings)
    case 'literal':
      return g.pick(def.values ?? [null])
    case 'number':
      return g.pick(hostileNumbers)
    case 'boolean':
      return g.rand() < 0.5
    case 'array':
      return depth > 2 ? [] : Array.from({ length: g.pick([0, 1, 3, 50]) }, () => hostileValue(g, field, def.element, depth + 1))
    case 'object':
    case 'record': {
      if (depth > 2) return {}
      const keys = def.shape ? Object.keys(def.shape) : ['name', 'image', 'role', 'email', 'slug', 'metadata']
      return Object.fromEntries(keys.map((k) => [k, hostileValue(g, k, def.shape?.[k], depth + 1)]))
    }
    default: {
      if (/password/i.test(field)) return g.pick(hostilePasswords)
      if (/email/i.test(field)) return g.pick(hostileEmails)
      return g.pick(hostileStrings)
    }
  }
}

/** The route's body shape filled with hostile values, plus unknown extra fields written as raw JSON (a literal `__proto__` key). */
function hostileBody(g: Gen, schema: unknown): string {
  // Routes that read their body by hand (update-user) get the fields a profile update takes.
  const shape: Record<string, ZodLike | undefined> = (schema as ZodLike | undefined)?.shape ?? { name: undefined, image: undefined }
  const body = Object.fromEntries(
    Object.entries(shape)
      .map(([k, s]) => [k, hostileValue(g, k, s)])
      .filter(([, v]) => v !== null),
  )
  const json = JSON.stringify(body)
  const extras = g.rand() < 0.5 ? [] : Array.from({ length: 1 + Math.floor(g.rand() * 3) }, () => g.pick(extraFields))
  if (extras.length === 0) return json
  const raw = extras.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')
  return json === '{}' ? `{${raw}}` : `${json.slice(0, -1)},${raw}}`
}

function fieldsOf(schema: unknown): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape
  return shape ? Object.keys(shape) : ['email', 'password', 'token', 'name', 'userId']
}

function malformedBody(g: Gen, fields: string[]): { body: string | Buffer; type: string | null } {
  const { rand, pick } = g
  switch (Math.floor(rand() * 10)) {
    case 0:
      return { body: pick(['', 'null', '[]', '"str"', '42', '{', '{"a":}', 'undefined']), type: 'application/json' }
    case 1:
      return { body: `${'['.repeat(20_000)}${']'.repeat(20_000)}`, type: 'application/json' }
    case 2:
      return { body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), type: 'application/json' }
    case 3:
      return {
        body: pick(['a=%zz&b', '%%%', `${fields[0] ?? 'x'}[]=1&${fields[0] ?? 'x'}[]=2`, `email=${'%'.repeat(100)}`]),
        type: 'application/x-www-form-urlencoded',
      }
    case 4:
      return { body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n', type: 'multipart/form-data; boundary=y' }
    case 5:
      return { body: '<a/>', type: pick(['application/xml', 'text/plain', 'image/png', 'application/octet-stream']) }
    case 6:
      return { body: JSON.stringify({ [pick(fields)]: MEGABYTE.slice(0, 100_000) }), type: 'application/json' }
    default: {
      // Every known field holds a wrong-typed or hostile value: no email is valid in it, so
      // sign-in and sign-up stop at validation, before any hash.
      const entries = fields.map(
        (f) =>
          `${JSON.stringify(f)}:${f === 'email' || f === 'newEmail' ? pick(badValues.filter((v) => !v.includes('@'))) : pick(badValues)}`,
      )
      return { body: `{${entries.join(',')}}`, type: pick(['application/json', 'application/json; charset=utf-8', null]) }
    }
  }
}

/** Routes whose valid-shaped bodies would run a password hash (sign-in always hashes): only malformed bodies go there. */
const HASHING = new Set([
  '/sign-in/email',
  '/sign-in/username',
  '/change-password',
  '/delete-user',
  '/admin/set-user-password',
  '/admin/create-user',
])
/** Routes that end the signed-in session: never sent with its cookie. */
const SESSION_ENDING = new Set(['/sign-out', '/revoke-sessions', '/delete-user', '/change-password', '/admin/stop-impersonating'])

const FORBIDDEN_IN_BODY = /\bat [\w.<>]+ \(|node_modules|SQLITE_|sqlite3|\bSELECT\b|\bINSERT INTO\b|TypeError|RangeError|ReferenceError/

const TOTAL = 20_000
const WORKERS = 16
// A safety bound (a hung server fails the test instead of stalling CI), far above a normal run.
const TIME_BOUND_MS = 240_000

function describeRequest(r: {
  worker: number
  seed: number
  n: number
  kind: string
  method: string
  url: string
  headers: Record<string, string>
  body?: string | Buffer
}): string {
  const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : `<bytes ${r.body.toString('hex')}>`
  const shown = body.length > 16_384 ? `${body.slice(0, 16_384)}… (${body.length} characters in all)` : body
  return `worker ${r.worker} (seed ${r.seed}) request #${r.n} [${r.kind}]\n${r.method} ${r.url}\n${Object.entries(r.headers)
    .map(([k, v]) => `${k}: ${v.length > 2048 ? `${v.slice(0, 2048)}… (${v.length})` : v}`)
    .join('\n')}\n\n${shown}`
}

describe('hostile input', () => {
  it(`answers ${TOTAL} malformed and valid-but-hostile requests across every endpoint without a 5xx, a leak, pollution or a corrupted user`, async () => {
    const prototypeKeys = (o: object) => Object.getOwnPropertyNames(o).sort()
    const before = { object: prototypeKeys(Object.prototype), array: prototypeKeys(Array.prototype), fn: prototypeKeys(Function.prototype) }
    const baseSeed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 0x7fffffff))
    const seeds = Array.from({ length: WORKERS }, (_, i) => Math.imul(baseSeed ^ (i * 0x9e3779b9), 2654435761) >>> 0 || 1)
    console.log(`fuzz: FUZZ_SEED=${baseSeed} (worker seeds ${seeds.join(', ')})`)

    const agent = new Agent({ keepAlive: true, maxSockets: WORKERS })
    const origin = server.origin
    const routes = allRoutes
    expect(routes.length).toBeGreaterThan(8)
    const histogram = { get: new Map<number, number>(), malformed: new Map<number, number>(), hostile: new Map<number, number>() }
    const failures: string[] = []
    let sent = 0
    const startedAt = Date.now()
    const deadline = startedAt + TIME_BOUND_MS
    const worker = async (index: number) => {
      const g = generator(seeds[index] ?? 1)
      const { rand, pick } = g
      let n = 0
      while (sent < TOTAL && failures.length < 5 && Date.now() < deadline) {
        sent++
        n++
        const route = pick(routes)
        const valid = route.method === 'POST' && !HASHING.has(route.path) && rand() < 0.4
        const kind = route.method === 'GET' ? 'get' : valid ? 'hostile' : 'malformed'
        const path = route.path.replace(/:[A-Za-z]+/g, () =>
          encodeURIComponent(pick(['..', '%00', 'x'.repeat(3000), '\u00e9\u202e', '<>"\'', '1', 'github'])),
        )
        const query =
          rand() < 0.5
            ? `?${pick(['a=1&a=2', 'token=', 'callbackURL=javascript:alert(1)', 'limit=-1&offset=1e309', `x=${'y'.repeat(4000)}`, '%zz', 'disableCookieCache=maybe', 'id=__proto__', 'organizationId=x&userId=%00', 'searchValue=%ED%A0%BE', 'limit=9007199254740993'])}`
            : ''
        let body: string | Buffer | undefined
        let type: string | null = null
        if (route.method === 'POST') {
          if (valid) {
            body = hostileBody(g, route.body)
            type = 'application/json'
          } else ({ body, type } = malformedBody(g, fieldsOf(route.body)))
        }
        const headers: Record<string, string> = { origin }
        if (type) headers['content-type'] = type
        if (rand() < 0.5 && !SESSION_ENDING.has(route.path)) headers.cookie = cookie
        if (rand() < 0.1) headers.cookie = `better-auth.session_token=${pick(['', '%', 'a.b', 'x'.repeat(500), '%E0%A4%A'])}`
        if (rand() < 0.1) headers.authorization = pick(['Bearer', 'Bearer %', 'Bearer a.b.c', 'Basic xx', `Bearer ${'z'.repeat(2000)}`])
        const method = rand() < 0.05 ? pick(['PUT', 'DELETE', 'PATCH', 'OPTIONS']) : route.method
        const url = `${server.base}${path}${query}`
        const res = await rawRequest(url, { method, headers, body, agent }).catch((e: Error) => ({
          status: 0,
          text: e.message,
          headers: {},
        }))
        const counts = histogram[kind]
        counts.set(res.status, (counts.get(res.status) ?? 0) + 1)
        if (res.status >= 500 || res.status === 0 || FORBIDDEN_IN_BODY.test(res.text)) {
          failures.push(
            `${describeRequest({ worker: index, seed: seeds[index] ?? 1, n, kind, method, url, headers, body })}\n→ ${res.status} ${res.text.slice(0, 500)}`,
          )
        }
      }
    }
    await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)))
    agent.destroy()

    const show = (m: Map<number, number>) =>
      [...m]
        .sort(([a], [b]) => a - b)
        .map(([s, c]) => `${s}×${c}`)
        .join(' ')
    console.log(
      `fuzz: ${sent} requests in ${Date.now() - startedAt} ms\n  GET: ${show(histogram.get)}\n  malformed POST: ${show(histogram.malformed)}\n  valid-but-hostile POST: ${show(histogram.hostile)}`,
    )
    expect(failures, `FUZZ_SEED=${baseSeed}`).toEqual([])
    expect(sent, `only ${sent} requests within ${TIME_BOUND_MS} ms`).toBeGreaterThanOrEqual(TOTAL)

    // The valid-shaped half reaches the handlers: a real share is answered with something other than a 400.
    const hostileTotal = [...histogram.hostile.values()].reduce((a, b) => a + b, 0)
    const beyondValidation = [...histogram.hostile].filter(([s]) => s !== 400).reduce((a, [, c]) => a + c, 0)
    expect(hostileTotal).toBeGreaterThan(TOTAL / 10)
    expect(beyondValidation / hostileTotal).toBeGreaterThan(0.3)
    expect(histogram.hostile.get(200) ?? 0).toBeGreaterThan(100)

    // No prototype pollution in the process that served all of this.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined()
    expect({
      object: prototypeKeys(Object.prototype),
      array: prototypeKeys(Array.prototype),
      fn: prototypeKeys(Function.prototype),
    }).toEqual(before)

    // The signed-in session lived through the run, and still names the same user.
    const me = await new HttpClient(server.base).get<{ user: { id: string } }>('/get-session', { cookie })
    expect([me.status, me.body?.user?.id]).toEqual([200, victim.user.id])
    const sessions = await new HttpClient(server.base).get<unknown[]>('/list-sessions', { cookie })
    expect(sessions.status).toBe(200)

    // What no request may change: nobody was created (every sign-up body breaks the password
    // policy), the victim's role, ban and verification are untouched, its password still works.
    if (testEngine === 'sqlite') {
      // The file's own consistency checks (PostgreSQL enforces foreign keys as it writes).
      const file = sqliteOf(server.gatehouse.ctx)
      expect(file.pragma('integrity_check', { simple: true })).toBe('ok')
      expect(file.pragma('foreign_key_check')).toEqual([])
    }
    const db = server.gatehouse.ctx.db
    const users = await db.select().from(user)
    expect(users.map((u) => u.id)).toEqual([victim.user.id])
    const [row] = users
    expect(row).toMatchObject({ role: 'user', banned: false, emailVerified: false })
    expect(row?.email).toBe(row?.email.toLowerCase())
    expect(row?.email).toMatch(/^[^\s@]+@[^\s@]+\.[^\s@]+$/)
    expect(typeof row?.name).toBe('string')
    expect(row!.updatedAt.getTime()).toBeGreaterThanOrEqual(row!.createdAt.getTime())
    const credentials = await db
      .select({ password: account.password })
      .from(account)
      .where(and(eq(account.userId, victim.user.id), eq(account.providerId, 'credential')))
    expect(credentials).toHaveLength(1)
    expect(credentials[0]?.password).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/)
    const ownerless = await firstRow(
      db
        .select({ n: count() })
        .from(organization)
        .where(
          notExists(
            db
              .select({ one: member.id })
              .from(member)
              .where(and(eq(member.organizationId, organization.id), eq(member.role, 'owner'))),
          ),
        ),
    )
    expect(ownerless?.n).toBe(0)
    const signIn = await new HttpClient(server.base).post('/sign-in/email', { email: row?.email, password: victim.password })
    expect(signIn.status).toBe(200)
    expect((await rawRequest(`${server.base}/ok`, {})).status).toBe(200)
  }, 300_000)

  it('survives path tricks, oversized and duplicated headers', async () => {
    // Paths are matched as sent (no dot-segment or slash normalisation): none of these is a route.
    const paths = [
      '/api/auth/../api/auth/ok',
      '/api/auth//ok',
      '/api/auth/%2e%2e/%2e%2e/etc/passwd',
      '/api/auth/ok%00',
      `/api/auth/${'a/'.repeat(3000)}`,
      '/api/auth/\u00e9',
    ]
    for (const path of paths) {
      const res = await rawRequest(`${server.origin}${encodeURI(path).replace(/%25/g, '%')}`, {})
      expect([res.status, res.text], path).toEqual([404, '{"code":"NOT_FOUND","message":"Not Found"}'])
    }
    const malformed = await rawRequest(`${server.origin}/%`, {})
    expect(malformed.status).toBe(400)
    expect(malformed.text).not.toMatch(FORBIDDEN_IN_BODY)
    const huge = await rawRequest(`${server.base}/get-session`, { headers: { 'x-filler': 'a'.repeat(20_000) } })
    expect(huge.status).toBe(431)
    const duplicated = await rawRequest(`${server.base}/get-session`, {
      headers: {
        cookie: ['better-auth.session_token=a', 'better-auth.session_token=b'].join('; '),
        'x-forwarded-for': '1.1.1.1, , ,,not-ip',
      },
    })
    expect([duplicated.status, duplicated.text]).toEqual([200, 'null'])
    expect((await rawRequest(`${server.base}/ok`, {})).status).toBe(200)
  })
})
