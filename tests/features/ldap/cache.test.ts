import { and, eq } from 'drizzle-orm'
import { Client, InvalidCredentialsError } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent } from '../../../server/db/schema.js'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import type { SignedUp } from '../../helpers/http.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { BASE, client, type LdapServer, PASSWORD, startLdapServer } from './helpers.js'

/**
 * The directory's read cache and the bind memo (server/features/ldap/reads.ts, bind.ts): once an
 * answer is cached, a change made through the HTTP API is what the very next LDAP request on the
 * same bound connection sees; repeated app-password binds are audited once a minute and the next
 * bind after a revocation or a ban is refused. (Two instances on PostgreSQL: postgres.test.ts.)
 */

let server: LdapServer
let admin: SignedUp
beforeAll(async () => {
  server = await startLdapServer()
  admin = await verifiedSignUp(server, { username: 'cacheadmin', name: 'Cache Admin', email: 'cacheadmin@example.com' })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
  // A fresh sign-in: the role is read at sign-in for the admin routes' checks.
  await admin.client.post('/sign-in/username', { username: 'cacheadmin', password: PASSWORD })
})
afterAll(() => server?.close())

const dnOf = (uid: string) => `uid=${uid},ou=people,${BASE}`

describe('the read cache', () => {
  it('a rename and a ban through the HTTP API are seen by the very next search on a warm bound connection', async () => {
    const member = await verifiedSignUp(server, { username: 'warm', name: 'Warm Before', email: 'warm@example.com' })
    const c = await client(server, dnOf('cacheadmin'))
    const byUid = async (uid: string) =>
      (await c.search(`ou=people,${BASE}`, { scope: 'one', filter: `(uid=${uid})`, attributes: ['uid', 'cn'] })).searchEntries
    const everyone = async () =>
      (await c.search(`ou=people,${BASE}`, { scope: 'one', attributes: ['uid'] })).searchEntries.map((e) => e.uid).sort()
    // Warm: the same searches twice, answered the second time from the cache.
    for (let i = 0; i < 2; i++) {
      expect(await byUid('warm')).toMatchObject([{ uid: 'warm', cn: 'Warm Before' }])
      expect(await everyone()).toEqual(['cacheadmin', 'warm'])
    }

    const update = await member.client.post('/update-user', { username: 'warm2', name: 'Warm After' })
    expect(update.status).toBe(200)
    expect(await byUid('warm2')).toMatchObject([{ uid: 'warm2', cn: 'Warm After' }])
    expect(await byUid('warm')).toEqual([])
    expect(await everyone()).toEqual(['cacheadmin', 'warm2'])

    const ban = await admin.client.post('/admin/ban-user', { userId: member.user.id })
    expect(ban.status).toBe(200)
    expect(await byUid('warm2')).toEqual([])
    expect(await everyone()).toEqual(['cacheadmin'])
    await c.unbind()
  })
})

describe('app-password binds', () => {
  /** A verified person, an app password made on their account page (200), and an unbound LDAP client. */
  const withAppPassword = async (username: string, name: string, options: { expiresIn?: number } = {}) => {
    const member = await verifiedSignUp(server, { username, name, email: `${username}@example.com` })
    const made = await member.client.post<{ id: string; password: string }>('/app-password/create', { name: username, ...options })
    expect(made.status).toBe(200)
    return { member, made, c: new Client({ url: server.url, timeout: 5_000 }) }
  }
  const successes = async (userId: string) =>
    (
      await server.gatehouse.ctx.db
        .select()
        .from(auditEvent)
        .where(and(eq(auditEvent.actorUserId, userId), eq(auditEvent.type, 'user.sign-in'), eq(auditEvent.outcome, 'success')))
    ).filter((e) => (e.detail as { credential?: string } | null)?.credential === 'app-password')

  it('repeated binds are audited once a minute; a revocation through the HTTP API refuses the very next bind', async () => {
    const { member, made, c } = await withAppPassword('nas', 'Nas User')
    for (let i = 0; i < 5; i++) await c.bind(dnOf('nas'), made.body.password)
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${dnOf('nas')}` })
    expect(await successes(member.user.id)).toHaveLength(1)
    server.clock.advanceSeconds(61)
    await c.bind(dnOf('nas'), made.body.password)
    await c.bind(dnOf('nas'), made.body.password)
    expect(await successes(member.user.id)).toHaveLength(2)

    const revoke = await member.client.post('/app-password/revoke', { id: made.body.id })
    expect(revoke.status).toBe(200)
    await expect(c.bind(dnOf('nas'), made.body.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await c.unbind()
  })

  it('a remembered app-password bind, and each operation on its connection, read no app password (a revocation still ends it)', async () => {
    const { member, made, c } = await withAppPassword('apache', 'Apache Service')
    // The first bind is audited (a write: nothing read before it is remembered), the second remembered.
    for (let i = 0; i < 2; i++) await c.bind(dnOf('apache'), made.body.password)
    // Every statement the server prepares while the memo stands (drizzle prepares each query it runs).
    const sqlite = server.gatehouse.ctx.sqlite
    if (!sqlite) throw new Error('the bind memo is SQLite’s')
    const prepare = sqlite.prepare
    const read: string[] = []
    sqlite.prepare = ((source: string) => {
      if (/appPassword/i.test(source)) read.push(source)
      return prepare.call(sqlite, source)
    }) as typeof prepare
    try {
      for (let i = 0; i < 3; i++) {
        await c.bind(dnOf('apache'), made.body.password)
        const { searchEntries } = await c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=apache)', attributes: ['uid'] })
        expect(searchEntries.map((e) => e.uid)).toEqual(['apache'])
      }
    } finally {
      sqlite.prepare = prepare
    }
    expect(read).toEqual([])

    expect((await member.client.post('/app-password/revoke', { id: made.body.id })).status).toBe(200)
    await expect(c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=apache)' })).rejects.toBeInstanceOf(InvalidCredentialsError)
    await c.unbind()
  })

  it('a ban through the HTTP API refuses the very next bind of a remembered app password', async () => {
    const { member, made, c } = await withAppPassword('printer', 'Printer User')
    for (let i = 0; i < 3; i++) await c.bind(dnOf('printer'), made.body.password)
    const ban = await admin.client.post('/admin/ban-user', { userId: member.user.id })
    expect(ban.status).toBe(200)
    await expect(c.bind(dnOf('printer'), made.body.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await c.unbind()
  })

  it('an app password that expires is refused at its expiry, remembered or not', async () => {
    const { made, c } = await withAppPassword('brief', 'Brief User', { expiresIn: 90 })
    server.clock.advanceSeconds(61)
    for (let i = 0; i < 3; i++) await c.bind(dnOf('brief'), made.body.password)
    server.clock.advanceSeconds(30)
    await expect(c.bind(dnOf('brief'), made.body.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await c.unbind()
  })
})
