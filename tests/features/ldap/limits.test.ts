import { Client } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serverLog } from '../../helpers/server.js'
import { type Answer, ok, RawConnection, verifiedPerson } from './edge-helpers.js'
import { BASE, type LdapServer, PASSWORD, type Person, startLdapServer } from './helpers.js'

/**
 * `ldap.limits`: a message is measured while it is read, before it is decoded whole. A length
 * prefix over `maxMessageBytes` (64 KiB before a bind, 1 MiB after) gets a Notice of Disconnection
 * and the connection closes before the bytes are read; a filter over `maxFilterClauses` or
 * `maxFilterDepth`, or a value over `maxValueBytes`, is answered `adminLimitExceeded` (11) and the
 * connection goes on. HTTP answers throughout.
 */

let server: LdapServer
let alice: Person
beforeAll(async () => {
  server = await startLdapServer()
  alice = await verifiedPerson(server, 'alice', 'Alice Liddell', 'admin')
})
afterAll(() => server?.close())

const codeOf = async (work: Promise<unknown>): Promise<number | 'ok'> => {
  try {
    await work
    return 'ok'
  } catch (error) {
    return (error as { code?: number }).code ?? -1
  }
}

/** A message header claiming `length` bytes of content, and `fill` bytes of it. */
const header = (length: number, fill: number) =>
  Buffer.concat([
    Buffer.from([0x30, 0x84, (length >>> 24) & 255, (length >>> 16) & 255, (length >>> 8) & 255, length & 255]),
    Buffer.alloc(fill),
  ])

const orOf = (count: number) => `(|${Array.from({ length: count }, (_, i) => `(uid=u${i})`).join('')})`
const nested = (depth: number) => `${'(&'.repeat(depth)}(uid=alice)${')'.repeat(depth)}`

describe('message size', () => {
  it('before a bind, a length prefix over 64 KiB gets a Notice of Disconnection (adminLimitExceeded) and the connection closes', async () => {
    serverLog.allowWarning(/^ldap: closed a connection from .*over the limit of 65536/)
    const raw = await RawConnection.open(server.port)
    raw.send(header(64 * 1024 + 1, 16))
    await raw.until(() => raw.closed)
    expect(raw.answers).toEqual([
      { id: 0, tag: 0x78, code: 11, diagnostic: 'message of 65537 bytes over the limit of 65536', name: '1.3.6.1.4.1.1466.20036' },
    ])
    expect(await ok(server)).toBe(200)
  })

  it('after a bind, the same message is read (up to 1 MiB), and one over 1 MiB closes the connection', async () => {
    serverLog.allowWarning(/^ldap: closed a connection from .*over the limit of 1048576/)
    const raw = await RawConnection.open(server.port)
    expect(await raw.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    // 70 000 bytes of zeros: read whole (not refused for its size), then malformed: closed without a notice.
    serverLog.allowWarning(/^ldap: closed a connection from .*: /)
    raw.send(header(70_000, 70_000))
    await raw.until(() => raw.closed)
    expect(raw.answers.map((a) => a.id)).toEqual([1])

    const big = await RawConnection.open(server.port)
    expect(await big.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    big.send(header(1024 * 1024, 16))
    await big.until(() => big.closed)
    expect(big.answers.at(-1)).toMatchObject({ id: 0, code: 11, name: '1.3.6.1.4.1.1466.20036' })
  })

  it('a refused bind keeps the smaller limit: a 1 MiB filter sent after a wrong password is not read', async () => {
    serverLog.allowWarning(/^ldap: closed a connection from .*over the limit of 65536/)
    const raw = await RawConnection.open(server.port)
    expect(await raw.bind(1, alice.dn, 'not the password')).toMatchObject({ code: 49 })
    raw.send(header(1000 * 1024, 1024))
    await raw.until(() => raw.closed)
    expect(raw.answers.at(-1)).toMatchObject({ id: 0, code: 11 })
  })
})

describe('filters and values', () => {
  it('refuses a filter of more than 512 items, nested deeper than 32, or with a value over 16 KiB, with adminLimitExceeded; the connection goes on', async () => {
    serverLog.allowWarning(/^ldap: refused a message from .*\(ldap\.limits\)$/)
    const c = new Client({ url: server.url, timeout: 10_000 })
    await c.bind(alice.dn, PASSWORD)
    const people = `ou=people,${BASE}`
    // At the limit: answered.
    expect(await codeOf(c.search(people, { scope: 'one', filter: orOf(511) }))).toBe('ok')
    expect(await codeOf(c.search(people, { scope: 'one', filter: nested(32) }))).toBe('ok')
    // Over it: refused, and never parsed (35 000 clauses, the filter that froze the server for seconds).
    expect(await codeOf(c.search(people, { scope: 'one', filter: orOf(512) }))).toBe(11)
    expect(await codeOf(c.search(people, { scope: 'one', filter: orOf(35_000) }))).toBe(11)
    expect(await codeOf(c.search(people, { scope: 'one', filter: nested(33) }))).toBe(11)
    expect(await codeOf(c.search(people, { scope: 'one', filter: `(cn=${'x'.repeat(16 * 1024 + 1)})` }))).toBe(11)
    expect(await codeOf(c.search(people, { scope: 'one', filter: `(cn=*${'x'.repeat(16 * 1024 + 1)}*)` }))).toBe(11)
    expect(await codeOf(c.compare(alice.dn, 'cn', 'x'.repeat(16 * 1024 + 1)))).toBe(11)
    expect(await ok(server)).toBe(200)
    // The connection still answers.
    const { searchEntries } = await c.search(people, { scope: 'one', filter: '(uid=alice)', attributes: ['uid'] })
    expect(searchEntries.map((e) => e.uid)).toEqual(['alice'])
    await c.unbind()
    // Logged once for the connection, not once per message.
    expect(serverLog.entries.filter((e) => /^ldap: refused a message/.test(e.message))).toHaveLength(1)
  }, 60_000)

  it('a bind whose DN is over maxValueBytes is refused with adminLimitExceeded, its password never checked', async () => {
    serverLog.allowWarning(/^ldap: refused a message from .*\(ldap\.limits\)$/)
    const raw = await RawConnection.open(server.port)
    const answer: Answer = await raw.bind(7, `uid=${'a'.repeat(20_000)},ou=people,${BASE}`, 'whatever')
    expect(answer).toMatchObject({ id: 7, tag: 0x61, code: 11 })
    expect(await raw.bind(8, alice.dn, PASSWORD)).toMatchObject({ id: 8, code: 0 })
    raw.destroy()
  })

  it('the limits follow the live config', async () => {
    serverLog.allowWarning(/^ldap: refused a message from .*\(ldap\.limits\)$/)
    await server.gatehouse.config.update({ ldap: { limits: { maxFilterClauses: 4, maxFilterDepth: 2 } } })
    try {
      const c = new Client({ url: server.url, timeout: 10_000 })
      await c.bind(alice.dn, PASSWORD)
      const people = `ou=people,${BASE}`
      expect(await codeOf(c.search(people, { scope: 'one', filter: orOf(3) }))).toBe('ok')
      expect(await codeOf(c.search(people, { scope: 'one', filter: orOf(4) }))).toBe(11)
      expect(await codeOf(c.search(people, { scope: 'one', filter: '(&(|(uid=a)))' }))).toBe('ok')
      expect(await codeOf(c.search(people, { scope: 'one', filter: '(&(|(!(uid=a))))' }))).toBe(11)
      await c.unbind()
    } finally {
      await server.gatehouse.config.update({ ldap: { limits: { maxFilterClauses: 512, maxFilterDepth: 32 } } })
    }
  })
})
