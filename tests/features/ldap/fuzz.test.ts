import { createConnection } from 'node:net'
import { AddRequest, BindRequest, CompareRequest, ExtensionRequest, SearchRequest } from '@ldapjs/messages'
import { parseString } from '@ldapjs/filter'
import { BerReader } from '@ldapjs/asn1'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { metricsListening } from '../../../server/features/metrics/index.js'
import { scrape } from '../../helpers/metrics.js'
import { frameLength } from '../../../server/features/ldap/wire.js'
import { serverLog } from '../../helpers/server.js'
import { BusyError, Client } from 'ldapts'
import { RawConnection } from './edge-helpers.js'
import { BASE, type LdapServer, PASSWORD, type Person, client, person, startLdapServer } from './helpers.js'

/**
 * The BER parser faces the LAN: random bytes and mutations of valid messages, each on its own raw
 * socket, must close (or answer) that connection only; the server neither crashes nor logs an
 * error, and a bind on a fresh connection works afterwards.
 */

let server: LdapServer
let alice: Person
let metricsURL: string
beforeAll(async () => {
  server = await startLdapServer({
    config: { metrics: { enabled: true, address: '127.0.0.1:0' } },
    ldap: { maxConnectionsPerAddress: 512 },
  })
  const at = await metricsListening(server.gatehouse.ctx)
  if (!at) throw new Error('the metrics listener did not start')
  metricsURL = `http://127.0.0.1:${at.port}/metrics`
  alice = await person(server, 'alice', 'Alice Liddell', 'admin')
})
afterAll(() => server?.close())

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

const valid = (): Buffer[] =>
  [
    new BindRequest({ messageId: 1, name: `uid=fuzzer,ou=people,${BASE}`, credentials: 'not the password' }),
    new SearchRequest({
      messageId: 2,
      baseObject: `ou=people,${BASE}`,
      scope: 'sub',
      filter: parseString('(&(uid=a*)(|(mail=*)(!(cn=x)))(createTimestamp>=20200101000000Z))'),
      attributes: ['uid', '+'],
      sizeLimit: 3,
    }),
    new CompareRequest({ messageId: 3, entry: `cn=user,ou=groups,${BASE}`, attribute: 'member', value: `uid=alice,ou=people,${BASE}` }),
    new ExtensionRequest({ messageId: 4, requestName: '1.3.6.1.4.1.4203.1.11.3' }),
    new AddRequest({ messageId: 5, entry: `uid=x,ou=people,${BASE}`, attributes: [{ type: 'cn', values: ['x'] }] }),
  ].map((m) => m.toBer().buffer as Buffer)

/** Sends `bytes` on a fresh connection, half-closes, and waits for the server to answer or close (bounded). */
function exchange(bytes: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: server.port })
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve()
    }
    const timer = setTimeout(done, 300)
    socket.on('error', done)
    socket.on('close', done)
    socket.on('data', () => {})
    socket.on('connect', () => socket.end(bytes))
  })
}

/**
 * A bind as a client does after the fuzz: the mutated binds queued password hashes from this one
 * address, and its share of the hash queue is bounded (busy, 51, while the backlog drains), so it
 * tries again, a bounded number of times.
 */
async function bindWhenFree(c: Client, dn: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await c.bind(dn, PASSWORD)
    } catch (error) {
      if (!(error instanceof BusyError) || attempt >= 300) throw error
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}

it('survives random bytes, mutated messages, truncations and absurd lengths; a fresh bind works after', async () => {
  serverLog.allowWarning(/^ldap: closed a connection/)
  const next = random(36)
  const seeds = valid()
  const cases: Buffer[] = [
    Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x02, 0x01, 0x01]),
    Buffer.from([0x30, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00]),
    Buffer.from([0x30, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00]),
    Buffer.concat([Buffer.from([0x30, 0x83, 0x10, 0x00, 0x01]), Buffer.alloc(64)]),
    Buffer.from([0x04, 0x00]),
  ]
  for (const seed of seeds) for (let cut = 1; cut < seed.length; cut += 3) cases.push(seed.subarray(0, cut))
  for (let i = 0; i < 150; i++) {
    const bytes = Buffer.alloc(1 + Math.floor(next() * 80))
    for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(next() * 256)
    if (i % 2 === 0) bytes[0] = 0x30
    cases.push(bytes)
  }
  for (let i = 0; i < 300; i++) {
    const seed = Buffer.from(seeds[i % seeds.length] as Buffer)
    const flips = 1 + Math.floor(next() * 4)
    for (let k = 0; k < flips; k++) seed[Math.floor(next() * seed.length)] = Math.floor(next() * 256)
    cases.push(seed)
  }
  for (const bytes of cases) await exchange(bytes)
  expect(cases.length).toBeGreaterThan(500)

  // Mutated binds still cost a password hash each (an unknown uid costs one too): a backlog may remain.
  const c = new Client({ url: server.url, timeout: 60_000 })
  await bindWhenFree(c, alice.dn)
  const { searchEntries } = await c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=alice)', attributes: ['uid'] })
  expect(searchEntries.map((e) => e.uid)).toEqual(['alice'])
  await c.unbind()
}, 120_000)

it('closes a connection whose message is over 1 MiB, and only that one', async () => {
  serverLog.allowWarning(/^ldap: closed a connection/)
  const c = await client(server)
  await bindWhenFree(c, alice.dn)
  const big = Buffer.concat([Buffer.from([0x30, 0x83, 0x10, 0x00, 0x10]), Buffer.alloc(1024)])
  // The server says why before it closes (a Notice of Disconnection, then its FIN): the client reads
  // it, as a client does (an unread socket never sees the FIN, so never closes).
  const received: Buffer[] = []
  const closed = await new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: server.port }, () => socket.write(big))
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    socket.on('close', () => resolve(true))
    socket.on('error', () => {})
    setTimeout(() => resolve(false), 5_000)
  })
  expect(closed).toBe(true)
  // An extendedResponse with message ID 0 (unsolicited) and resultCode adminLimitExceeded (11).
  const notice = Buffer.concat(received)
  expect(notice.subarray(2, 7).toString('hex')).toBe('020100784f')
  expect(notice.subarray(7, 10).toString('hex')).toBe('0a010b')
  expect(serverLog.entries.some((e) => /over the limit/.test(e.message))).toBe(true)
  // The other connection is undisturbed.
  expect((await c.search(`ou=people,${BASE}`, { scope: 'one', attributes: ['uid'] })).searchEntries).toHaveLength(1)
  await c.unbind()
})

it('stops reading from a client that does not read its answers, and answers every request once it does', async () => {
  // Before, every request a client sent was answered into memory at once: one connection that sent
  // searches and never read the answers grew the server's memory without bound.
  for (let i = 0; i < 30; i++) await person(server, `reader${i}x`, `Reader Number ${i}`)
  const search = (id: number) =>
    new SearchRequest({
      messageId: id,
      baseObject: BASE,
      scope: 'sub',
      filter: parseString('(objectClass=*)'),
      attributes: ['*', '+'],
    }).toBer().buffer as Buffer
  const total = 3000
  const requests = Buffer.concat([
    new BindRequest({ messageId: 1, name: alice.dn, credentials: PASSWORD }).toBer().buffer as Buffer,
    ...Array.from({ length: total }, (_, i) => search(i + 2)),
  ])
  expect(search(2).length).toBeLessThan(100) // ~30 people and their groups: each answer is over 10 KiB
  const searches = async () => (await scrape(metricsURL)).value('gatehouse_ldap_searches_total')
  const before = await searches()
  const socket = createConnection({ host: '127.0.0.1', port: server.port })
  socket.pause()
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(requests)
  try {
    // Wait until the server stops answering (the count holds still for 3 s), or has answered everything.
    let answered = 0
    for (let still = 0, polls = 0; still < 30 && polls < 1200 && answered < total; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const now = (await searches()) - before
      still = now === answered ? still + 1 : 0
      answered = now
    }
    expect(answered).toBeLessThan(total / 2)
    // Reading again, the client gets every answer, in order.
    const done: number[] = []
    let buffer = Buffer.alloc(0)
    await new Promise<void>((resolve, reject) => {
      socket.on('close', () => reject(new Error(`closed after ${done.length} answers`)))
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk])
        for (let length = frameLength(buffer); length > 0; length = frameLength(buffer)) {
          const message = new BerReader(buffer.subarray(0, length))
          message.readSequence()
          const id = message.readInt() as number
          if (message.peek() === 0x65) done.push(id)
          buffer = buffer.subarray(length)
        }
        if (done.length === total) resolve()
      })
      socket.resume()
    })
    expect(done).toEqual(Array.from({ length: total }, (_, i) => i + 2))
    expect((await searches()) - before).toBe(total)
  } finally {
    socket.destroy()
  }
}, 180_000)

it('copies a message arriving in small pieces a bounded number of times, not once per piece', async () => {
  // Before, each piece was appended by copying everything received so far: a message of 1 MiB
  // sent 64 bytes at a time cost ~8 GiB of copying (seconds of the event loop, which HTTP shares).
  serverLog.allowWarning(/^ldap: closed a connection/)
  const size = 256 * 1024
  const piece = 256
  const message = Buffer.concat([Buffer.from([0x30, 0x83, (size >> 16) & 255, (size >> 8) & 255, size & 255]), Buffer.alloc(size)])
  // Bound first: before a bind, a message over 64 KiB is refused at its header (limits.test.ts).
  const raw = await RawConnection.open(server.port)
  expect(await raw.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
  const { socket } = raw
  socket.setNoDelay(true)
  const closed = raw.until(() => raw.closed, 60_000)
  const copied = { bytes: 0 }
  const concat = Buffer.concat
  Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
    const out = concat(list, total)
    copied.bytes += out.length
    return out
  }) as typeof Buffer.concat
  try {
    for (let at = 0; at < message.length; at += piece) {
      // One piece per write, each waiting for the last to leave, so that they arrive apart.
      await new Promise<void>((resolve) => socket.write(message.subarray(at, at + piece), () => resolve()))
      await new Promise((resolve) => setImmediate(resolve))
    }
    await closed // the server answers the malformed message (zeros) by closing
  } finally {
    Buffer.concat = concat
    socket.destroy()
  }
  expect(copied.bytes).toBeLessThan(8 * message.length)
}, 120_000)

/** A random filter and what the server's limits measure of it (tests/features/ldap/limits.test.ts: 512 items, depth 32, 16 KiB). */
interface RandomFilter {
  text: string
  /** Every and/or/not and every leaf counts one item. */
  items: number
  /** and/or/not on the deepest path. */
  depth: number
  /** The longest value (an equality's assertion value, a substring's part). */
  longest: number
}

function randomFilter(next: () => number, levels: number, width: number, longValue: boolean): RandomFilter {
  if (levels === 0) {
    const length = longValue && next() < 0.5 ? 16 * 1024 + (next() < 0.5 ? 0 : 1) : 1 + Math.floor(next() * 12)
    const value = 'v'.repeat(length)
    return next() < 0.5
      ? { text: `(cn=${value})`, items: 1, depth: 0, longest: length }
      : { text: `(cn=*${value}*)`, items: 1, depth: 0, longest: length }
  }
  if (next() < 0.2) {
    const inner = randomFilter(next, levels - 1, width, longValue)
    return { text: `(!${inner.text})`, items: inner.items + 1, depth: inner.depth + 1, longest: inner.longest }
  }
  const count = Math.ceil(width / 2) + Math.floor((next() * width) / 2)
  // The first part goes down every level asked for; the others stop at random.
  const parts = Array.from({ length: count }, (_, i) =>
    randomFilter(next, i === 0 ? levels - 1 : Math.floor(next() * levels), width, longValue),
  )
  return {
    text: `(${next() < 0.5 ? '&' : '|'}${parts.map((p) => p.text).join('')})`,
    items: 1 + parts.reduce((sum, p) => sum + p.items, 0),
    depth: 1 + Math.max(...parts.map((p) => p.depth)),
    longest: Math.max(...parts.map((p) => p.longest)),
  }
}

it('random filters around the limits: over any limit adminLimitExceeded (11), within them an answer; the connection goes on', async () => {
  serverLog.allowWarning(/^ldap: /)
  const next = random(51)
  const cases: RandomFilter[] = []
  // Deep and narrow (depth around 32), wide and shallow (items around 512), small with long values (around 16 KiB).
  // Width 1: the first part always descends, so the depth is exactly the levels asked for (32 and 33 included).
  for (const levels of [32, 33, 28 + Math.floor(next() * 8), 28 + Math.floor(next() * 8), 28 + Math.floor(next() * 8)])
    cases.push(randomFilter(next, levels, 1, false))
  for (let i = 0; i < 8; i++) cases.push(randomFilter(next, 2, 40 + Math.floor(next() * 8), false))
  for (let i = 0; i < 8; i++) cases.push(randomFilter(next, 1 + Math.floor(next() * 2), 2, true))
  const over = (f: RandomFilter) => f.items > 512 || f.depth > 32 || f.longest > 16 * 1024
  // The generator reaches both sides of every limit.
  expect(cases.some((f) => f.depth === 33) && cases.some((f) => f.depth === 32)).toBe(true)
  expect(cases.some((f) => f.items > 512) && cases.some((f) => f.items <= 512 && f.items > 100)).toBe(true)
  expect(cases.some((f) => f.longest > 16 * 1024) && cases.some((f) => f.longest === 16 * 1024)).toBe(true)

  const c = new Client({ url: server.url, timeout: 60_000 })
  await bindWhenFree(c, alice.dn)
  const answers: { items: number; depth: number; longest: number; code: number | 'ok'; expected: number | 'ok' }[] = []
  for (const f of cases) {
    let code: number | 'ok' = 'ok'
    try {
      await c.search(`ou=people,${BASE}`, { scope: 'one', filter: f.text, attributes: ['uid'] })
    } catch (error) {
      code = (error as { code?: number }).code ?? -1
    }
    answers.push({ items: f.items, depth: f.depth, longest: f.longest, code, expected: over(f) ? 11 : 'ok' })
  }
  expect(answers.filter((a) => a.code !== a.expected)).toEqual([])
  expect(answers.filter((a) => a.code === 11).length).toBeGreaterThan(3)
  expect(answers.filter((a) => a.code === 'ok').length).toBeGreaterThan(3)
  // The same connection still answers.
  const { searchEntries } = await c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=alice)', attributes: ['uid'] })
  expect(searchEntries.map((e) => e.uid)).toEqual(['alice'])
  await c.unbind()
}, 120_000)
