import { SearchRequest } from '@ldapjs/messages'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RawConnection, seedPeople, verifiedPerson } from './edge-helpers.js'
import { BASE, type LdapServer, PASSWORD, startLdapServer } from './helpers.js'

/**
 * A long search does not hold the event loop (issue 48, docs/ARCHITECTURE.md "The LDAP directory
 * at scale"): its entries are written a slice at a time and the search yields between slices, so
 * an HTTP request that arrives while the entries are being written is answered before the search
 * is done. The server runs in this process: without the yield, the whole answer would be written
 * in one task and the HTTP request read only after it. (Timings are bench/ldap-attack.ts's; here
 * only the order.)
 */

const SEEDED = 4_000

const search = (id: number, filter: string) =>
  new SearchRequest({ messageId: id, baseObject: `ou=people,${BASE}`, scope: 'one', filter, attributes: ['uid', 'memberOf'] }).toBer()
    .buffer as Buffer

let server: LdapServer
beforeAll(async () => {
  server = await startLdapServer()
})
afterAll(() => server?.close())

describe('HTTP beside a long search', () => {
  it('answers an HTTP request that arrives while a search writes its entries, before the search is done', async () => {
    await seedPeople(server.gatehouse.ctx, SEEDED, 'slice')
    const reader = await verifiedPerson(server, 'slicereader', 'Slice Reader', 'admin')
    const raw = await RawConnection.open(server.port)
    expect(await raw.bind(1, reader.dn, PASSWORD)).toMatchObject({ code: 0 })
    const done = (id: number) => raw.answers.some((a) => a.id === id && a.tag === 0x65)
    // The directory loaded first (its load yields on its own): what follows is the writing of entries.
    raw.send(search(2, '(uid=slice0)'))
    await raw.until(() => done(2))

    raw.send(search(3, '(uid=slice*)'))
    await raw.until(() => raw.answers.some((a) => a.id === 3))
    // The first entries are here: HTTP asked now is answered while the rest is still being written.
    let doneWhenAnswered: boolean | null = null
    const status = await fetch(`${server.base}/ok`).then((res) => {
      doneWhenAnswered = done(3)
      return res.status
    })
    expect(status).toBe(200)
    expect(doneWhenAnswered).toBe(false)
    await raw.until(() => done(3), 60_000)
    expect(raw.answers.filter((a) => a.id === 3 && a.tag === 0x64)).toHaveLength(SEEDED + 1)
    expect(raw.answers.find((a) => a.id === 3 && a.tag === 0x65)).toMatchObject({ code: 0 })
    raw.destroy()
  }, 120_000)
})
