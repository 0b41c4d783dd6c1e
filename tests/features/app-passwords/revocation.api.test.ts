import { and, asc, eq } from 'drizzle-orm'
import { Client, InvalidCredentialsError } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appPassword, auditEvent, user } from '../../../server/db/schema.js'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { verifyAppPassword } from '../../../server/features/app-passwords/verify.js'
import { HttpClient, type SignedUp, signUp, uniqueEmail } from '../../helpers/http.js'
import { linkIn } from '../../helpers/mail-flow.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { BASE, type LdapServer, startLdapServer } from '../ldap/helpers.js'

/**
 * Credentials die with the password (issue 47 §4): every step that evicts an intruder revokes the
 * person's app passwords, each revocation audited with its reason; `appPasswords.keepOnPasswordChange`
 * keeps them across a change the person made themself only. Each path is checked by trying the app
 * password afterwards through verifyAppPassword, the check LDAP binds make, and over LDAP for a ban.
 */

let server: LdapServer
let sink: SmtpSink
let admin: SignedUp
const PASSWORD = 'correct horse battery'

beforeAll(async () => {
  sink = await startSmtpSink()
  server = await startLdapServer({ config: { mail: { smtp: { url: sink.url } }, user: { deleteUser: { enabled: true } } } })
  admin = await signUp(server.base, { name: 'Admin' })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
  // A fresh sign-in: the role is read at sign-in for the admin routes' checks.
  expect((await admin.client.post('/sign-in/email', { email: admin.email, password: PASSWORD })).status).toBe(200)
})
afterAll(async () => {
  await server?.close()
  await sink?.close()
})

interface Made {
  id: string
  password: string
}

/** A new person (email verified: LDAP vouches only for such) holding one app password. */
async function personWithAppPassword(username?: string): Promise<{ who: SignedUp; made: Made }> {
  const who = await signUp(server.base, username ? { username, email: `${username}@example.com` } : {})
  await server.gatehouse.ctx.db.update(user).set({ emailVerified: true }).where(eq(user.id, who.user.id))
  const made = await who.client.post<Made>('/app-password/create', { name: 'NAS' })
  expect(made.status, made.text).toBe(200)
  expect(await works(who, made.body)).toBe(true)
  return { who, made: made.body }
}

const works = (who: SignedUp, made: Made) => verifyAppPassword(server.gatehouse.ctx, who.user.id, made.password)
const rowsOf = (who: SignedUp) => server.gatehouse.ctx.db.select().from(appPassword).where(eq(appPassword.userId, who.user.id))

/** The app-password.revoked audit events of this app password: [actor, target, reason]. */
async function revocations(made: Made): Promise<Array<[string | null, string | null, unknown]>> {
  const rows = await server.gatehouse.ctx.db
    .select()
    .from(auditEvent)
    .where(and(eq(auditEvent.target, made.id), eq(auditEvent.type, 'app-password.revoked')))
    .orderBy(asc(auditEvent.id))
  return rows.map((e) => [e.actorUserId, e.targetUserId, (e.detail as { reason?: unknown } | null)?.reason])
}

describe('app passwords die with the password', () => {
  it("the person's change-password revokes them", async () => {
    const { who, made } = await personWithAppPassword()
    const changed = await who.client.post('/change-password', { currentPassword: PASSWORD, newPassword: 'a new password 1' })
    expect(changed.status, changed.text).toBe(200)
    expect(await works(who, made)).toBe(false)
    expect(await rowsOf(who)).toEqual([])
    expect(await revocations(made)).toEqual([[who.user.id, who.user.id, 'password-changed']])
  })

  it("with keepOnPasswordChange the person's own change keeps them, an admin's set-password does not", async () => {
    server.gatehouse.config.update({ appPasswords: { keepOnPasswordChange: true } })
    try {
      const kept = await personWithAppPassword()
      const again = await kept.who.client.post('/change-password', { currentPassword: PASSWORD, newPassword: 'a new password 2' })
      expect(again.status, again.text).toBe(200)
      expect(await works(kept.who, kept.made)).toBe(true)
      expect(await revocations(kept.made)).toEqual([])

      // Not across an admin's set-password, even so.
      const set = await admin.client.post('/admin/set-user-password', { userId: kept.who.user.id, newPassword: 'set by the admin' })
      expect(set.status, set.text).toBe(200)
      expect(await works(kept.who, kept.made)).toBe(false)
      expect(await revocations(kept.made)).toEqual([[admin.user.id, kept.who.user.id, 'password-set']])
    } finally {
      server.gatehouse.config.update({ appPasswords: { keepOnPasswordChange: false } })
    }
  })

  it('a reset through the mailed link revokes them, keepOnPasswordChange or not', async () => {
    server.gatehouse.config.update({ appPasswords: { keepOnPasswordChange: true } })
    try {
      const { who, made } = await personWithAppPassword()
      const asked = await new HttpClient(server.base).post('/request-password-reset', { email: who.email })
      expect(asked.status, asked.text).toBe(200)
      const mail = await sink.waitFor(who.email, (m) => /^Reset your/.test(m.subject))
      const token = new URL(linkIn(mail, `${server.base}/reset-password/`)).pathname.split('/').pop()
      const reset = await new HttpClient(server.base).post('/reset-password', { token, newPassword: 'a reset password' })
      expect(reset.status, reset.text).toBe(200)
      expect(reset.body).toEqual({ status: true })
      expect(await works(who, made)).toBe(false)
      expect(await revocations(made)).toEqual([[who.user.id, who.user.id, 'password-reset']])
    } finally {
      server.gatehouse.config.update({ appPasswords: { keepOnPasswordChange: false } })
    }
  })

  it("an admin's set-user-password revokes them", async () => {
    const { who, made } = await personWithAppPassword()
    const set = await admin.client.post('/admin/set-user-password', { userId: who.user.id, newPassword: 'set by the admin' })
    expect(set.status, set.text).toBe(200)
    expect(await works(who, made)).toBe(false)
    expect(await revocations(made)).toEqual([[admin.user.id, who.user.id, 'password-set']])
  })

  it('a ban revokes them: after the unban the app password binds no more over LDAP', async () => {
    const { who, made } = await personWithAppPassword(`banned${Date.now().toString(36)}`)
    const dn = `uid=${who.email.split('@')[0]},ou=people,${BASE}`
    const c = new Client({ url: server.url, timeout: 5_000 })
    try {
      await c.bind(dn, made.password)
      const ban = await admin.client.post('/admin/ban-user', { userId: who.user.id })
      expect(ban.status, ban.text).toBe(200)
      const unban = await admin.client.post('/admin/unban-user', { userId: who.user.id })
      expect(unban.status, unban.text).toBe(200)
      expect(await works(who, made)).toBe(false)
      await expect(c.bind(dn, made.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
      // The person is back (the password still signs in), the app password is not.
      const again = new HttpClient(server.base)
      expect((await again.post('/sign-in/email', { email: who.email, password: PASSWORD })).status).toBe(200)
      expect((await again.get<{ appPasswords: unknown[] }>('/app-password/list')).body).toEqual({ appPasswords: [] })
      expect(await revocations(made)).toEqual([[admin.user.id, who.user.id, 'banned']])
    } finally {
      await c.unbind()
    }
  })

  it('a ban through update-user revokes them too', async () => {
    const { who, made } = await personWithAppPassword()
    const banned = await admin.client.post('/admin/update-user', { userId: who.user.id, data: { banned: true } })
    expect(banned.status, banned.text).toBe(200)
    expect(await works(who, made)).toBe(false)
    expect(await revocations(made)).toEqual([[admin.user.id, who.user.id, 'banned']])
  })

  it("the person's revoke-sessions and an admin's revoke-user-sessions revoke them; revoke-other-sessions does not", async () => {
    const own = await personWithAppPassword()
    const others = await own.who.client.post('/revoke-other-sessions', {})
    expect(others.status, others.text).toBe(200)
    expect(await works(own.who, own.made)).toBe(true)
    const all = await own.who.client.post('/revoke-sessions', {})
    expect(all.status, all.text).toBe(200)
    expect(all.body).toEqual({ status: true })
    expect(await works(own.who, own.made)).toBe(false)
    expect(await revocations(own.made)).toEqual([[own.who.user.id, own.who.user.id, 'sessions-revoked']])

    const byAdmin = await personWithAppPassword()
    const revoked = await admin.client.post('/admin/revoke-user-sessions', { userId: byAdmin.who.user.id })
    expect(revoked.status, revoked.text).toBe(200)
    expect(await works(byAdmin.who, byAdmin.made)).toBe(false)
    expect(await revocations(byAdmin.made)).toEqual([[admin.user.id, byAdmin.who.user.id, 'sessions-revoked']])
  })

  it("deleting the person (an admin's remove-user, the person's delete-user) revokes them, audited", async () => {
    const removed = await personWithAppPassword()
    const remove = await admin.client.post('/admin/remove-user', { userId: removed.who.user.id })
    expect(remove.status, remove.text).toBe(200)
    expect(await works(removed.who, removed.made)).toBe(false)
    expect(await rowsOf(removed.who)).toEqual([])
    expect(await revocations(removed.made)).toEqual([[admin.user.id, removed.who.user.id, 'deleted']])

    const own = await personWithAppPassword()
    const deleted = await own.who.client.post('/delete-user', { password: PASSWORD })
    expect(deleted.status, deleted.text).toBe(200)
    expect(await works(own.who, own.made)).toBe(false)
    expect(await revocations(own.made)).toEqual([[own.who.user.id, own.who.user.id, 'deleted']])
  })

  it('a person without app passwords changes their password with no revocation event', async () => {
    const who = await signUp(server.base, { email: uniqueEmail('none') })
    const changed = await who.client.post('/change-password', { currentPassword: PASSWORD, newPassword: 'a new password 3' })
    expect(changed.status).toBe(200)
    const events = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.targetUserId, who.user.id), eq(auditEvent.type, 'app-password.revoked')))
    expect(events).toEqual([])
  })
})
