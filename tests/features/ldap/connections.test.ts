import { afterAll, beforeAll, expect, it } from 'vitest'
import { ok, RawConnection, verifiedPerson } from './edge-helpers.js'
import { type LdapServer, PASSWORD, type Person, startLdapServer } from './helpers.js'

/**
 * `ldap.maxConnectionsPerAddress` (per IPv4 address, per IPv6 /64) and `ldap.maxConnections` (in
 * all): a connection over either cap gets a Notice of Disconnection (unavailable, 52), then is
 * closed; it is not reset bare. The connections held go on, and HTTP answers. With every place
 * taken, an address holding more than a newcomer's would gives up its oldest connection to it.
 */

let server: LdapServer
let alice: Person
beforeAll(async () => {
  server = await startLdapServer()
  alice = await verifiedPerson(server, 'alice', 'Alice Liddell', 'admin')
})
afterAll(() => server?.close())

const notice = { id: 0, tag: 0x78, code: 52, name: '1.3.6.1.4.1.1466.20036' }

it('over maxConnectionsPerAddress: a Notice of Disconnection (unavailable), then closed; another address still connects', async () => {
  await server.gatehouse.config.update({ ldap: { maxConnectionsPerAddress: 2 } })
  const held = [await RawConnection.open(server.port), await RawConnection.open(server.port)]
  try {
    const over = await RawConnection.open(server.port)
    await over.until(() => over.closed)
    expect(over.answers).toEqual([{ ...notice, diagnostic: 'too many connections from your address' }])
    const other = await RawConnection.open(server.port, '127.0.0.2')
    expect(await other.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    expect(await held[0]?.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    other.destroy()
    expect(await ok(server)).toBe(200)
  } finally {
    for (const c of held) c.destroy()
    await server.gatehouse.config.update({ ldap: { maxConnectionsPerAddress: 64 } })
  }
})

it('over maxConnections (every address together): a Notice of Disconnection (unavailable), then closed', async () => {
  await server.gatehouse.config.update({ ldap: { maxConnections: 3 } })
  const held: RawConnection[] = []
  try {
    for (const from of ['127.0.0.3', '127.0.0.4', '127.0.0.5']) held.push(await RawConnection.open(server.port, from))
    // Each counted as soon as it is accepted: wait until the server holds all three.
    const over = await RawConnection.open(server.port, '127.0.0.6')
    await over.until(() => over.closed)
    expect(over.answers).toEqual([{ ...notice, diagnostic: 'too many connections' }])
    expect(await ok(server)).toBe(200)
    held.pop()?.destroy()
    // A place freed: the next one is served (once the server has seen the close).
    let answered = false
    for (let tries = 0; tries < 50 && !answered; tries++) {
      const next = await RawConnection.open(server.port, '127.0.0.6')
      await new Promise((resolve) => setTimeout(resolve, 100))
      if (!next.closed) {
        answered = (await next.bind(1, alice.dn, PASSWORD)).code === 0
        next.destroy()
      }
    }
    expect(answered).toBe(true)
  } finally {
    for (const c of held) c.destroy()
    await server.gatehouse.config.update({ ldap: { maxConnections: 1024 } })
  }
})

it('over maxConnections, held mostly by one address: that address’s oldest connection makes room for another address', async () => {
  await server.gatehouse.config.update({ ldap: { maxConnections: 4 } })
  const flood: RawConnection[] = []
  const held: RawConnection[] = []
  try {
    // Idle connections from one address fill most places; another address holds one.
    for (let i = 0; i < 3; i++) flood.push(await RawConnection.open(server.port, '127.0.0.7'))
    held.push(await RawConnection.open(server.port, '127.0.0.8'))
    expect(await held[0]?.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    // A newcomer from a third address: served, and the flooding address's oldest connection is closed.
    const newcomer = await RawConnection.open(server.port, '127.0.0.9')
    held.push(newcomer)
    expect(await newcomer.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    await flood[0]?.until(() => flood[0]?.closed === true)
    expect(flood.map((c) => c.closed)).toEqual([true, false, false])
    // The flooding address itself gets no place from the others: refused with the notice.
    const more = await RawConnection.open(server.port, '127.0.0.7')
    await more.until(() => more.closed)
    expect(more.answers).toEqual([{ ...notice, diagnostic: 'too many connections' }])
    // Another newcomer: the flooding address still holds the most (2), its next oldest makes room.
    const fourth = await RawConnection.open(server.port, '127.0.0.10')
    held.push(fourth)
    expect(await fourth.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    await flood[1]?.until(() => flood[1]?.closed === true)
    expect(flood.map((c) => c.closed)).toEqual([true, true, false])
    // Four addresses with one each: nobody holds more than a newcomer would, so the next one is refused.
    const fifth = await RawConnection.open(server.port, '127.0.0.11')
    await fifth.until(() => fifth.closed)
    expect(fifth.answers).toEqual([{ ...notice, diagnostic: 'too many connections' }])
    expect(await held[0]?.bind(2, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    expect(await ok(server)).toBe(200)
  } finally {
    for (const c of [...flood, ...held]) c.destroy()
    await server.gatehouse.config.update({ ldap: { maxConnections: 1024 } })
  }
})
