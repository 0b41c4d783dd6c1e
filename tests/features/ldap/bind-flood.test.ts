import { afterAll, beforeAll, expect, it } from 'vitest'
import { passwordHashQueue } from '../../../server/crypto/hash-queue.js'
import { loginThrottle } from '../../../server/db/schema.js'
import { HttpClient } from '../../helpers/http.js'
import { ok, RawConnection, verifiedPerson } from './edge-helpers.js'
import { BASE, type LdapServer, PASSWORD, type Person, startLdapServer } from './helpers.js'

/**
 * Issue 48 §2: the password-hash queue is shared fairly between sources. 64 LDAP connections from
 * 127.0.0.2 spray binds with wrong passwords (a new uid each time: no account lockout stops them,
 * each costs a hash), with the request limiter off as the test server has it (so only the queue's
 * fairness stands between the flood and the others), and a queue of 16 waiting so the flood alone
 * fills it. Meanwhile a person signs in over HTTP from 127.0.0.1: 200, not 503 SERVER_BUSY. The
 * flood itself is answered busy (51) past its share, before anything is written for it (no
 * attempt counted against an account). Timings belong to bench/, none is asserted.
 */

let server: LdapServer
let carol: Person
beforeAll(async () => {
  server = await startLdapServer({ config: { security: { passwordHashQueue: 16 } } })
  carol = await verifiedPerson(server, 'carol', 'Carol Danvers')
})
afterAll(() => server?.close())

it('64 connections flooding binds from 127.0.0.2 leave an HTTP sign-in from 127.0.0.1 answered 200', async () => {
  const connections = await Promise.all(Array.from({ length: 64 }, () => RawConnection.open(server.port, '127.0.0.2')))
  let stop = false
  const codes = new Map<number, number>()
  const deadline = Date.now() + 120_000
  const spray = async (c: RawConnection, n: number) => {
    for (let id = 1; id <= 2_000 && !stop && Date.now() < deadline; id++) {
      const answer = await c.bind(id, `uid=spray${n}x${id},ou=people,${BASE}`, 'Winter2026!')
      codes.set(answer.code, (codes.get(answer.code) ?? 0) + 1)
    }
  }
  const flood = connections.map((c, n) => spray(c, n))
  try {
    // The flood has reached its share of the queue: its binds past it are answered busy.
    while (!codes.has(51) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(codes.get(51)).toBeGreaterThan(0)
    const signIn = await new HttpClient(server.base).post('/sign-in/email', { email: carol.email, password: PASSWORD })
    expect(signIn.status).toBe(200)
    expect(await ok(server)).toBe(200)
  } finally {
    stop = true
    await Promise.all(flood)
    for (const c of connections) c.destroy()
  }
  // Every flood bind was refused, by the password check or by the queue: nothing else.
  expect([...codes.keys()].sort()).toEqual([49, 51])
}, 240_000)

it('a bind from a source holding its whole share of the queue is answered busy before anything is written: no attempt counted', async () => {
  const queue = passwordHashQueue
  const source = '127.0.0.9'
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  // The source's share, held open by hand (as many running as the queue runs at once, the rest waiting).
  const jobs = Array.from({ length: queue.perSource }, () => queue.run(() => held, source))
  const ctx = server.gatehouse.ctx
  const attempts = async () => (await ctx.db.select().from(loginThrottle)).length
  const before = await attempts()
  const raw = await RawConnection.open(server.port, source)
  try {
    expect(await raw.bind(1, `uid=nobody-here,ou=people,${BASE}`, 'Winter2026!')).toMatchObject({ code: 51, diagnostic: 'server busy' })
    // No reservation was written for a check that never ran (the account's lockout count is untouched).
    expect(await attempts()).toBe(before)
  } finally {
    release()
    await Promise.all(jobs)
    raw.destroy()
  }
  // Its share free again: the same bind is checked (and counted).
  const again = await RawConnection.open(server.port, source)
  expect(await again.bind(1, `uid=nobody-here,ou=people,${BASE}`, 'Winter2026!')).toMatchObject({ code: 49 })
  expect(await attempts()).toBe(before + 1)
  again.destroy()
})
