import { Agent } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allRoutes } from '../../server/http/routes/index.js'
import { rawRequest, signUp } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

/**
 * Hostile input never hurts: thousands of malformed requests across every declared endpoint.
 * Bodies are malformed by construction (wrong types, missing or oversized fields, broken
 * encodings), so no request reaches a password hash and the run stays fast and bounded.
 */
let server: TestServer
let cookie = ''
beforeAll(async () => {
  server = await startTestServer({ config: { user: { changeEmail: { enabled: true }, deleteUser: { enabled: true } } } })
  const { client } = await signUp(server.base)
  cookie = client.jar.header()
})
afterAll(() => server.close())

// Deterministic pseudo-random generator, so a failure can be replayed.
let seed = 0x9e3779b9
const rand = () => {
  seed ^= seed << 13
  seed ^= seed >>> 17
  seed ^= seed << 5
  return (seed >>> 0) / 0x100000000
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T

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

function fieldsOf(schema: unknown): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape
  return shape ? Object.keys(shape) : ['email', 'password', 'token', 'name', 'userId']
}

function malformedBody(fields: string[]): { body: string | Buffer; type: string | null } {
  switch (Math.floor(rand() * 10)) {
    case 0:
      return { body: pick(['', 'null', '[]', '"str"', '42', '{', '{"a":}', 'undefined']), type: 'application/json' }
    case 1:
      return { body: `${'['.repeat(20_000)}${']'.repeat(20_000)}`, type: 'application/json' }
    case 2:
      return { body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), type: 'application/json' }
    case 3:
      return { body: pick(['a=%zz&b', '%%%', `${fields[0] ?? 'x'}[]=1&${fields[0] ?? 'x'}[]=2`, `email=${'%'.repeat(100)}`]), type: 'application/x-www-form-urlencoded' }
    case 4:
      return { body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n', type: 'multipart/form-data; boundary=y' }
    case 5:
      return { body: '<a/>', type: pick(['application/xml', 'text/plain', 'image/png', 'application/octet-stream']) }
    case 6:
      return { body: JSON.stringify({ [pick(fields)]: MEGABYTE.slice(0, 200_000) }), type: 'application/json' }
    default: {
      // A JSON object whose every known field holds a wrong-typed or hostile value: no email is
      // valid in it, so sign-in and sign-up stop at validation, before any hash.
      const entries = fields.map((f) => `${JSON.stringify(f)}:${f === 'email' || f === 'newEmail' ? pick(badValues.filter((v) => !v.includes('@'))) : pick(badValues)}`)
      return { body: `{${entries.join(',')}}`, type: pick(['application/json', 'application/json; charset=utf-8', null]) }
    }
  }
}

const FORBIDDEN_IN_BODY = /\bat [\w.<>]+ \(|node_modules|SQLITE_|sqlite3|\bSELECT\b|\bINSERT INTO\b|TypeError|RangeError|ReferenceError/

describe('hostile input', () => {
  it('answers 10 000 malformed requests across every endpoint without a 5xx or a leak', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 16 })
    const origin = server.origin
    const routes = allRoutes
    expect(routes.length).toBeGreaterThan(8)
    const failures: string[] = []
    let sent = 0
    const TOTAL = 10_000
    const worker = async () => {
      while (sent < TOTAL && failures.length < 5) {
        sent++
        const route = pick(routes)
        const path = route.path.replace(/:[A-Za-z]+/g, () => encodeURIComponent(pick(['..', '%00', 'x'.repeat(3000), '\u00e9\u202e', '<>"\'', '1'])))
        const query = rand() < 0.5 ? `?${pick(['a=1&a=2', 'token=', 'callbackURL=javascript:alert(1)', 'limit=-1&offset=1e309', `x=${'y'.repeat(4000)}`, '%zz', 'disableCookieCache=maybe'])}` : ''
        const { body, type } = route.method === 'POST' ? malformedBody(fieldsOf(route.body)) : { body: undefined, type: null }
        const headers: Record<string, string> = { origin }
        if (type) headers['content-type'] = type
        if (rand() < 0.5) headers.cookie = cookie
        if (rand() < 0.1) headers.cookie = `better-auth.session_token=${pick(['', '%', 'a.b', 'x'.repeat(500), '%E0%A4%A'])}`
        if (rand() < 0.1) headers.authorization = pick(['Bearer', 'Bearer %', 'Bearer a.b.c', 'Basic xx', `Bearer ${'z'.repeat(2000)}`])
        const method = rand() < 0.05 ? pick(['PUT', 'DELETE', 'PATCH', 'OPTIONS']) : route.method
        const res = await rawRequest(`${server.base}${path}${query}`, { method, headers, body, agent }).catch((e: Error) => ({ status: 0, text: e.message, headers: {} }))
        if (res.status >= 500 || res.status === 0 || FORBIDDEN_IN_BODY.test(res.text)) {
          failures.push(`${method} ${path.slice(0, 100)}${query.slice(0, 80)} [${type}] → ${res.status} ${res.text.slice(0, 300)}`)
        }
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    agent.destroy()
    expect(failures).toEqual([])
    expect(sent).toBeGreaterThanOrEqual(TOTAL)
    expect((await rawRequest(`${server.base}/ok`, {})).status).toBe(200)
  }, 180_000)

  it('survives path tricks, oversized and duplicated headers', async () => {
    // Paths are matched as sent (no dot-segment or slash normalisation): none of these is a route.
    const paths = ['/api/auth/../api/auth/ok', '/api/auth//ok', '/api/auth/%2e%2e/%2e%2e/etc/passwd', '/api/auth/ok%00', `/api/auth/${'a/'.repeat(3000)}`, '/api/auth/\u00e9']
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
      headers: { cookie: ['better-auth.session_token=a', 'better-auth.session_token=b'].join('; '), 'x-forwarded-for': '1.1.1.1, , ,,not-ip' },
    })
    expect(duplicated.status).toBe(200)
    expect((await rawRequest(`${server.base}/ok`, {})).status).toBe(200)
  })
})
