import { and, eq } from 'drizzle-orm'
import { BerWriter } from '@ldapjs/asn1'
import { Client, InvalidCredentialsError, UnwillingToPerformError } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { passwordHashQueue } from '../../../server/crypto/hash-queue.js'
import { auditEvent, user } from '../../../server/db/schema.js'
import { banUser, setRole, systemActor, unbanUser } from '../../../server/features/admin/index.js'
import { removeUser } from '../../../server/features/admin/users.js'
import { createAppPassword, revokeAppPassword } from '../../../server/features/app-passwords/rules.js'
import { BASE, type LdapServer, PASSWORD, type Person, client, person, startLdapServer } from './helpers.js'

/** The rules a bind and every later operation follow: the sign-in's password check, bans, roles, lockout, second factor. */

let server: LdapServer
let admin: Person
beforeAll(async () => {
  server = await startLdapServer({
    config: {
      twoFactor: { enabled: true },
      security: { accountLockout: { enabled: true, maxFailures: 3, window: 900, lockDuration: 600 } },
    },
  })
  admin = await person(server, 'root', 'Root Admin', 'admin')
})
afterAll(() => server?.close())

const uids = async (c: Client) =>
  (await c.search(`ou=people,${BASE}`, { scope: 'one', attributes: ['uid'] })).searchEntries.map((e) => e.uid).sort()

describe('a bound connection re-checks the bound person at every operation', () => {
  it('a role change applies to the next operation; a ban hides the person and ends what the binding saw', async () => {
    const carol = await person(server, 'carol', 'Carol Ann')
    const dave = await person(server, 'dave', 'Dave')
    const c = await client(server, carol.dn)
    expect(await uids(c)).toEqual(['carol'])
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: carol.id, role: 'admin' }, null)
    expect(await uids(c)).toEqual(['carol', 'dave', 'root'])

    const seen = await client(server, admin.dn)
    await banUser(server.gatehouse.ctx, systemActor('cli'), { userId: dave.id }, null)
    expect(await uids(seen)).toEqual(['carol', 'root'])
    const groups = await seen.search(`cn=user,ou=groups,${BASE}`, { scope: 'base' }).catch((e: Error) => e)
    expect(groups).toBeInstanceOf(Error) // dave was the only plain user: the group is gone with him
    await expect(new Client({ url: server.url }).bind(dave.dn, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await unbanUser(server.gatehouse.ctx, systemActor('cli'), { userId: dave.id }, null)
    expect(await uids(seen)).toEqual(['carol', 'dave', 'root'])

    // The bound person banned: the next operation is refused with 49 (bind again), never a result.
    await banUser(server.gatehouse.ctx, systemActor('cli'), { userId: carol.id }, null)
    await expect(c.search(BASE, { scope: 'sub', attributes: ['1.1'] })).rejects.toBeInstanceOf(InvalidCredentialsError)
    // The refusal ended the binding: anonymous from then on.
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: '' })
    await unbanUser(server.gatehouse.ctx, systemActor('cli'), { userId: carol.id }, null)
    // The ban ended the binding, as it revoked the person's sessions: lifting it does not bring it back.
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: '' })
    expect((await c.search(BASE, { scope: 'sub', attributes: ['1.1'] })).searchEntries.map((e) => e.dn)).toEqual([BASE])
    await c.bind(carol.dn, PASSWORD)
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${carol.dn}` })
    await c.unbind()
    await seen.unbind()
  })

  it('a person deleted while bound: the next operation on either connection is refused with 49 (issue 48 §5: never a result), their app password with them', async () => {
    const mona = await person(server, 'mona', 'Mona')
    const made = await createAppPassword(server.gatehouse.ctx, mona.id, { name: 'NAS' }, null)
    const c = await client(server, mona.dn, made.password)
    const main = await client(server, mona.dn)
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${mona.dn}` })
    await removeUser(server.gatehouse.ctx, systemActor('cli'), mona.id, null)
    for (const bound of [c, main]) {
      await expect(bound.search(BASE, { scope: 'sub', attributes: ['1.1'] })).rejects.toBeInstanceOf(InvalidCredentialsError)
      await bound.unbind().catch(() => {})
    }
    await expect(new Client({ url: server.url }).bind(mona.dn, made.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
  })

  it('a rename through the HTTP API moves the DN at the next request; entryUUID stays', async () => {
    const erin = await person(server, 'erin', 'Erin Example')
    const c = await client(server, admin.dn)
    const before = await c.search(erin.dn, { scope: 'base', attributes: ['entryUUID', 'cn'] })
    expect(before.searchEntries[0]?.cn).toBe('Erin Example')
    const signIn = await fetch(`${server.base}/sign-in/username`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin },
      body: JSON.stringify({ username: 'erin', password: PASSWORD }),
    })
    const cookie = signIn.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ')
    const update = await fetch(`${server.base}/update-user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin, cookie },
      body: JSON.stringify({ username: 'erin2', name: 'Erin Renamed' }),
    })
    expect(update.status).toBe(200)
    const after = await c.search(`uid=erin2,ou=people,${BASE}`, { scope: 'base', attributes: ['entryUUID', 'cn'] })
    expect(after.searchEntries[0]).toMatchObject({ cn: 'Erin Renamed', entryUUID: before.searchEntries[0]?.entryUUID })
    await expect(c.search(erin.dn, { scope: 'base' })).rejects.toThrow()
    await c.unbind()
  })
})

describe('binds count and are audited as sign-ins', () => {
  it('wrong binds are audited with via ldap and lock the account like sign-ins; the lock refuses the right password with 49', async () => {
    const frank = await person(server, 'frank', 'Frank')
    const c = new Client({ url: server.url })
    for (let i = 0; i < 3; i++) await expect(c.bind(frank.dn, 'wrong password')).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(c.bind(frank.dn, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    // The same lock refuses the web sign-in.
    const web = await fetch(`${server.base}/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin },
      body: JSON.stringify({ email: frank.email, password: PASSWORD }),
    })
    expect(web.status).toBe(429)
    const failures = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.targetUserId, frank.id), eq(auditEvent.type, 'user.sign-in'), eq(auditEvent.outcome, 'failure')))
    expect(failures.length).toBeGreaterThanOrEqual(3)
    expect(failures[0]?.detail).toMatchObject({ method: 'ldap', via: 'ldap', reason: 'INVALID_PASSWORD' })
    expect(JSON.stringify(failures)).not.toContain('wrong password')
    await c.unbind()
  })

  it('a successful bind is audited, with no session made', async () => {
    const gina = await person(server, 'gina', 'Gina')
    const c = await client(server, gina.dn)
    const events = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.actorUserId, gina.id), eq(auditEvent.type, 'user.sign-in'), eq(auditEvent.outcome, 'success')))
    expect(events.map((e) => e.detail)).toContainEqual({ method: 'ldap', via: 'ldap' })
    await c.unbind()
  })

  it('a user with a second factor cannot bind with the main password unless ldap.allowMainPasswordWithSecondFactor', async () => {
    const hank = await person(server, 'hank', 'Hank')
    // Enrolment itself is the two-factor feature's (tested there): the flag it leaves is what a bind reads.
    await server.gatehouse.ctx.db.update(user).set({ twoFactorEnabled: true }).where(eq(user.id, hank.id))
    await expect(new Client({ url: server.url }).bind(hank.dn, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await server.gatehouse.config.update({ ldap: { allowMainPasswordWithSecondFactor: true } })
    const c = await client(server, hank.dn)
    await c.unbind()
    await server.gatehouse.config.update({ ldap: { allowMainPasswordWithSecondFactor: null } })
  })

  it('a refused main password of a user with a second factor costs a password hash, as an unknown uid and a wrong password do', async () => {
    // Without the hash, the refusal came back at once: a bind with any password told who has a second factor.
    const jade = await person(server, 'jade', 'Jade')
    await server.gatehouse.ctx.db.update(user).set({ twoFactorEnabled: true }).where(eq(user.id, jade.id))
    const kim = await person(server, 'kim', 'Kim')
    // The server runs in this process: every scrypt run passes through the hash queue.
    const spy = vi.spyOn(passwordHashQueue, 'run')
    try {
      const hashesFor = async (dn: string, password: string) => {
        spy.mockClear()
        const refused = await new Client({ url: server.url }).bind(dn, password).catch((error: Error) => error)
        return [refused instanceof InvalidCredentialsError, spy.mock.calls.length]
      }
      expect(await hashesFor(`uid=nobody,ou=people,${BASE}`, 'a guess')).toEqual([true, 1])
      expect(await hashesFor(kim.dn, 'a guess')).toEqual([true, 1])
      expect(await hashesFor(jade.dn, 'a guess')).toEqual([true, 1])
      expect(await hashesFor(jade.dn, PASSWORD)).toEqual([true, 1])
    } finally {
      spy.mockRestore()
    }
  })

  it('a user with a second factor cannot change the main password over LDAP (bound with an app password) unless allowed', async () => {
    // The web asks a session that passed the second factor; an app password opens LDAP only.
    // Before, an app password and the old main password changed the main password with no second factor.
    const lena = await person(server, 'lena', 'Lena')
    await server.gatehouse.ctx.db.update(user).set({ twoFactorEnabled: true }).where(eq(user.id, lena.id))
    const made = await createAppPassword(server.gatehouse.ctx, lena.id, { name: 'NAS' }, null)
    const modify = (oldPassword: string, newPassword: string) => {
      const w = new BerWriter()
      w.startSequence(0x30)
      w.writeString(oldPassword, 0x81)
      w.writeString(newPassword, 0x82)
      w.endSequence()
      return w.buffer as Buffer
    }
    const c = await client(server, lena.dn, made.password)
    const refused = c.exop('1.3.6.1.4.1.4203.1.11.1', modify(PASSWORD, 'a new and long password'))
    await expect(refused).rejects.toBeInstanceOf(UnwillingToPerformError)
    // The refusal names the page where the password is changed (issue 49).
    await expect(refused).rejects.toThrow(`change your password on your account page: ${server.gatehouse.ctx.baseURL}/ui/account/password`)
    await expect(new Client({ url: server.url }).bind(lena.dn, 'a new and long password')).rejects.toBeInstanceOf(InvalidCredentialsError)
    await server.gatehouse.config.update({ ldap: { allowMainPasswordWithSecondFactor: true } })
    try {
      await c.exop('1.3.6.1.4.1.4203.1.11.1', modify(PASSWORD, 'a new and long password'))
      await (await client(server, lena.dn, 'a new and long password')).unbind()
    } finally {
      await server.gatehouse.config.update({ ldap: { allowMainPasswordWithSecondFactor: null } })
    }
    await c.unbind()
  })

  it('a user with a second factor binds with an app password; a revoked or expired one, and the main password, are refused', async () => {
    const ivy = await person(server, 'ivy', 'Ivy')
    await server.gatehouse.ctx.db.update(user).set({ twoFactorEnabled: true }).where(eq(user.id, ivy.id))
    const ctx = server.gatehouse.ctx
    const made = await createAppPassword(ctx, ivy.id, { name: 'NAS' }, null)
    const brief = await createAppPassword(ctx, ivy.id, { name: 'Printer', expiresIn: 60 }, null)
    const c = await client(server, ivy.dn, made.password)
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${ivy.dn}` })
    await c.unbind()
    await expect(new Client({ url: server.url }).bind(ivy.dn, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    // The bind is audited as an app-password sign-in, the secret nowhere in it.
    const events = await ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.actorUserId, ivy.id), eq(auditEvent.type, 'user.sign-in'), eq(auditEvent.outcome, 'success')))
    expect(events.map((e) => e.detail)).toContainEqual({ method: 'ldap', via: 'ldap', credential: 'app-password' })
    expect(JSON.stringify(events)).not.toContain(made.password)
    server.clock.advanceSeconds(61)
    await expect(new Client({ url: server.url }).bind(ivy.dn, brief.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await revokeAppPassword(ctx, ivy.id, made.id, null)
    await expect(new Client({ url: server.url }).bind(ivy.dn, made.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
  })
})
