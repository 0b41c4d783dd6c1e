/**
 * Replays (server/http/app.ts, "Replays"): get-session on a session-cache hit marks its answer, and
 * the next request with the very same headers gets it again without the route running, while the
 * configuration is the same object and the session cache still holds that session (any write to
 * the database empties it), active and not due a refresh.
 *
 * The real get-session route is served here by its own direct handler (createAuthApp over the test
 * server's context, database and clock), wrapped so that each run of the route is counted: every
 * case checks both the answer and whether the route ran. On PostgreSQL the session cache waits for
 * its barrier before every hit (no synchronous hit), so no answer is ever replayed there: every
 * request runs the route, and every answer must still be right.
 */
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GatehouseConfig } from '../../server/config/schema.js'
import { createAuthApp } from '../../server/http/app.js'
import { allRoutes } from '../../server/routes.js'
import { signUp } from '../helpers/http.js'
import { startTestServer, type TestServer, testEngine } from '../helpers/server.js'

/** Whether this engine replays at all (see above). */
const replays = testEngine === 'sqlite'

let server: TestServer
let direct: Server
let base: string
let routeRuns = 0
let watched = false
/** Stands in for the configuration the app sees (a replaced object, as any change makes). */
let configSeen: GatehouseConfig | undefined

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** The answer's Set-Cookie lines. */
const setCookies = (answer: Answer | undefined): string[] => {
  const value = answer?.headers['set-cookie']
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

function get(headers: Record<string, string>, path = '/get-session'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Asks `times` times; returns the answers and how many of them ran the route. */
async function ask(headers: Record<string, string>, times = 1): Promise<{ answers: Answer[]; ran: number }> {
  const before = routeRuns
  const answers: Answer[] = []
  for (let i = 0; i < times; i++) answers.push(await get(headers))
  return { answers, ran: routeRuns - before }
}

/** The answer without what differs per request (its date and request id). */
const same = (answer: Answer) => ({ ...answer, headers: { ...answer.headers, date: undefined, 'x-request-id': undefined } })

beforeAll(async () => {
  server = await startTestServer()
  const serverCtx = server.gatehouse.ctx
  const ctx: typeof serverCtx = Object.create(serverCtx, { config: { value: () => configSeen ?? serverCtx.config() } })
  const routes = allRoutes.map((route) =>
    route.path === '/get-session' && route.method === 'GET'
      ? {
          ...route,
          handler: (rc: Parameters<typeof route.handler>[0]) => {
            routeRuns++
            return route.handler(rc)
          },
        }
      : route,
  )
  const app = createAuthApp({
    ctx,
    routes,
    rateLimitStore: () => {
      throw new Error('the rate limit is off in these tests')
    },
    requestLog: { enabled: () => watched, answered: () => {} },
  })
  direct = createServer((req, res) => {
    if (!app.direct(req, res)) {
      res.statusCode = 418
      res.end()
    }
  })
  await new Promise<void>((resolve) => direct.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(direct.address() as AddressInfo).port}/api/auth`
})
afterAll(async () => {
  await new Promise((resolve) => direct.close(resolve))
  await server.close()
})

describe('get-session replays', () => {
  it('gives the same answer again, with a new request id each time, without running the route', async () => {
    const { client, user } = await signUp(server.base)
    const cookie = client.jar.header() as string
    const { answers, ran } = await ask({ cookie }, 4)
    // The first reads the database (a cache miss, answered once it settles: not replayable), the
    // second is a cache hit, whose answer the last two get again.
    expect(ran).toBe(replays ? 2 : 4)
    const [first, ...rest] = answers as [Answer, ...Answer[]]
    expect(first.status).toBe(200)
    expect(JSON.parse(first.body).user.id).toBe(user.id)
    for (const answer of rest) expect(same(answer)).toEqual(same(first))
    const ids = answers.map((a) => a.headers['x-request-id'])
    expect(new Set(ids).size).toBe(4)
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+-[0-9a-z]+$/)
  })

  it('answers what changed after any write: a new name, then no session once signed out', async () => {
    const { client } = await signUp(server.base)
    const cookie = client.jar.header() as string
    await ask({ cookie }, 2)
    expect((await client.post('/update-user', { name: 'Renamed Person' })).status).toBe(200)
    const renamed = await ask({ cookie }, 3)
    // The write emptied the session cache: a miss, a hit, then a replay of the new answer.
    expect(renamed.ran).toBe(replays ? 2 : 3)
    for (const answer of renamed.answers) expect(JSON.parse(answer.body).user.name).toBe('Renamed Person')
    expect((await client.post('/sign-out', {})).status).toBe(200)
    const signedOut = await ask({ cookie }, 2)
    // No session: nothing to replay, the route answers every time.
    expect(signedOut.ran).toBe(2)
    for (const answer of signedOut.answers) expect(answer.body).toBe('null')
  })

  it('stops when the session expires or is due a refresh, though nothing was written', async () => {
    const due = await signUp(server.base)
    const expiring = await signUp(server.base)
    const dueCookie = due.client.jar.header() as string
    const expiringCookie = expiring.client.jar.header() as string
    await ask({ cookie: dueCookie }, 2)
    await ask({ cookie: expiringCookie }, 2)
    server.clock.advanceSeconds(2 * 86_400) // past updateAge (1 day): a refresh is due
    const refreshed = await ask({ cookie: dueCookie })
    expect(refreshed.ran).toBe(1)
    expect(setCookies(refreshed.answers[0]).some((c) => c.startsWith('better-auth.session_token='))).toBe(true)
    server.clock.advanceSeconds(8 * 86_400) // past expiresIn (7 days)
    const expired = await ask({ cookie: expiringCookie })
    expect(expired.ran).toBe(1)
    expect(expired.answers[0]?.body).toBe('null')
  })

  it('runs the route for other headers, a forwarded request id, a watched request and a new configuration', async () => {
    const { client } = await signUp(server.base)
    const cookie = client.jar.header() as string
    await ask({ cookie }, 2)
    // Any header line that differs is another request.
    expect((await ask({ cookie, 'x-extra': '1' }, 2)).ran).toBe(replays ? 1 : 2)
    // The same cookie beside another person's bearer token (which wins; its session not read yet:
    // a miss, then a hit that is kept) is looked up apart and compared line by line: the cookie
    // alone's answer is never given for it.
    const other = await signUp(server.base)
    const both = await ask({ cookie, authorization: `Bearer ${other.token}` }, 3)
    expect(both.ran).toBe(replays ? 2 : 3)
    for (const answer of both.answers) expect(JSON.parse(answer.body).user.id).toBe(other.user.id)
    // An id a trusted proxy forwards must be the answer's: never replayed.
    const forwarded = await ask({ cookie, 'x-request-id': 'proxy-id-1' }, 2)
    expect(forwarded.ran).toBe(2)
    expect(forwarded.answers.map((a) => a.headers['x-request-id'])).toEqual(['proxy-id-1', 'proxy-id-1'])
    // A request that is logged (or counted) runs the route, which the log describes.
    watched = true
    try {
      expect((await ask({ cookie }, 2)).ran).toBe(2)
    } finally {
      watched = false
    }
    // Another configuration object, the same values: the route runs once under it (any change,
    // even one whose audit row is not written yet).
    configSeen = { ...server.gatehouse.ctx.config() }
    try {
      expect((await ask({ cookie }, 3)).ran).toBe(replays ? 1 : 3)
    } finally {
      configSeen = undefined
    }
    // A configuration change: the cookie cache on, whose answer sets the session_data cookie.
    await server.gatehouse.config.update({ session: { cookieCache: { enabled: true, maxAge: 300 } } })
    try {
      // Each answer sets the cookie with its own expiry: none is replayed.
      const cached = await ask({ cookie }, 3)
      expect(cached.ran).toBe(3)
      for (const answer of cached.answers) {
        expect(setCookies(answer).some((c) => c.startsWith('better-auth.session_data='))).toBe(true)
      }
    } finally {
      await server.gatehouse.config.update({ session: { cookieCache: null } })
    }
  })
})
