import { and, asc, eq, inArray } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, session, user } from '../../../server/db/schema.js'
import { HttpClient, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { verifySignedCookie } from '../../helpers/signatures.js'
import { administrator, type Member, member, officialClient } from '../../helpers/members.js'

const SECRET = 'test-secret-0123456789-abcdefghijkl'
/** The admin plugin's messages (better-auth's error codes), written out. */
const messages: Record<string, string> = {
  YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS: 'You are not allowed to create users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS: 'You are not allowed to list users',
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: 'You are not allowed to change users role',
  YOU_ARE_NOT_ALLOWED_TO_BAN_USERS: 'You are not allowed to ban users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS: 'You are not allowed to list users sessions',
  YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS: 'You are not allowed to impersonate users',
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS: 'You are not allowed to revoke users sessions',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS: 'You are not allowed to delete users',
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD: 'You are not allowed to set users password',
  YOU_ARE_NOT_ALLOWED_TO_GET_USER: 'You are not allowed to get user',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS: 'You are not allowed to update users',
  YOU_CANNOT_REMOVE_YOURSELF: 'You cannot remove yourself',
  YOU_CANNOT_IMPERSONATE_ADMINS: 'You cannot impersonate admins',
  NO_DATA_TO_UPDATE: 'No data to update',
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER: 'Password cannot be updated through update-user. Use the set-user-password endpoint instead',
  USER_NOT_FOUND: 'User not found',
  PASSWORD_TOO_SHORT: 'Password too short',
  INVALID_EMAIL_OR_PASSWORD: 'Invalid email or password',
}
/** `{status, code, message}` of an admin refusal, for toMatchObject / toEqual. */
const refusal = (status: number, code: string) => ({ status, code, message: messages[code] })

const BANNED = {
  code: 'BANNED_USER',
  message: 'You have been banned from this application. Please contact support if you believe this is an error.',
}

let server: TestServer
let admin: Member
beforeAll(async () => {
  server = await startTestServer()
  admin = await administrator(server)
})
afterAll(() => server.close())

const row = async (id: string) => (await server.gatehouse.ctx.db.select().from(user).where(eq(user.id, id)))[0]
const sessionsOf = async (id: string) => await server.gatehouse.ctx.db.select().from(session).where(eq(session.userId, id))
const auditOf = async (targetUserId: string, types: string[]) =>
  await server.gatehouse.ctx.db
    .select()
    .from(auditEvent)
    .where(and(eq(auditEvent.targetUserId, targetUserId), inArray(auditEvent.type, types)))
    .orderBy(asc(auditEvent.id))

describe('create-user', () => {
  it('creates a user with a credential account and the default or given role(s)', async () => {
    const email = uniqueEmail('created')
    const res = await admin.client.admin.createUser({ email: email.toUpperCase(), password: 'password1234', name: 'Created' })
    expect(res.error).toBeNull()
    expect(res.data?.user).toMatchObject({ email, name: 'Created', role: 'user', banned: false, emailVerified: false })
    const signIn = await officialClient(server).client.signIn.email({ email, password: 'password1234' })
    expect(signIn.error).toBeNull()

    const multi = await admin.client.admin.createUser({
      email: uniqueEmail('multi'),
      password: 'password1234',
      name: 'Multi',
      role: ['admin', 'user'],
      data: { emailVerified: true, username: 'Multi.Role' },
    })
    expect(multi.data?.user).toMatchObject({
      role: 'admin,user',
      emailVerified: true,
      username: 'multi.role',
      displayUsername: 'Multi.Role',
    })
    const created = await auditOf(multi.data?.user.id as string, ['admin.create-user'])
    expect(created).toHaveLength(1)
    expect(created[0]).toMatchObject({ actorUserId: admin.id, outcome: 'success' })
  })

  it('refuses an existing email, an unknown role and a bad email', async () => {
    const existing = await member(server)
    const dup = await admin.client.admin.createUser({ email: existing.email, password: 'password1234', name: 'Dup' })
    expect(dup.error).toMatchObject({ status: 400, code: 'USER_ALREADY_EXISTS', message: 'User already exists' })
    const role = await admin.client.admin.createUser({
      email: uniqueEmail(),
      password: 'password1234',
      name: 'X',
      role: 'superuser' as 'admin',
    })
    expect(role.error).toMatchObject({
      status: 400,
      code: 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE',
      message: 'You are not allowed to set a non-existent role value',
    })
    const bad = await admin.client.admin.createUser({ email: 'not-an-email', password: 'password1234', name: 'X' })
    expect(bad.error).toMatchObject({ status: 400, code: 'INVALID_EMAIL', message: 'Invalid email' })
  })
})

describe('refusals', () => {
  it('answers 401 without a session', async () => {
    const anon = new HttpClient(server.base)
    const res = await anon.post('/admin/ban-user', { userId: admin.id })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ code: 'UNAUTHORIZED', message: 'Unauthorized' })
    const list = await anon.get('/admin/list-users')
    expect(list.status).toBe(401)
    expect(list.body).toEqual({ code: 'UNAUTHORIZED', message: 'Unauthorized' })
  })

  it('refuses every admin action to a plain user with 403 and the spec message, changing nothing', async () => {
    const plain = await member(server)
    const victim = await member(server)
    const [victimSession] = await sessionsOf(victim.id)
    const a = plain.client.admin
    const cases: Array<[string, () => Promise<{ error: unknown }>]> = [
      ['YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS', () => a.createUser({ email: uniqueEmail(), password: 'password1234', name: 'X' })],
      ['YOU_ARE_NOT_ALLOWED_TO_LIST_USERS', () => a.listUsers({ query: {} })],
      ['YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE', () => a.setRole({ userId: victim.id, role: 'admin' })],
      ['YOU_ARE_NOT_ALLOWED_TO_BAN_USERS', () => a.banUser({ userId: victim.id })],
      ['YOU_ARE_NOT_ALLOWED_TO_BAN_USERS', () => a.unbanUser({ userId: victim.id })],
      ['YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS', () => a.listUserSessions({ userId: victim.id })],
      ['YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS', () => a.impersonateUser({ userId: victim.id })],
      ['YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS', () => a.revokeUserSession({ sessionToken: victimSession?.token as string })],
      ['YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS', () => a.revokeUserSessions({ userId: victim.id })],
      ['YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS', () => a.removeUser({ userId: victim.id })],
      ['YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD', () => a.setUserPassword({ userId: victim.id, newPassword: 'password5678' })],
      ['YOU_ARE_NOT_ALLOWED_TO_GET_USER', () => a.getUser({ query: { id: victim.id } })],
      ['YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS', () => a.updateUser({ userId: victim.id, data: { name: 'Hacked' } })],
    ]
    for (const [code, call] of cases) {
      const res = await call()
      expect(res.error, code).toMatchObject({ status: 403, code, message: messages[code] })
    }
    const after = await row(victim.id)
    expect(after).toMatchObject({ role: 'user', banned: false, name: victim.name })
    expect((await sessionsOf(victim.id)).map((s) => s.token)).toEqual([victimSession?.token])
    expect(plain.jar.get('better-auth.admin_session')).toBeUndefined()
    // Refusals are audited too.
    const refused = await auditOf(victim.id, ['admin.ban-user', 'admin.unban-user', 'admin.remove-user'])
    expect(refused.map((e) => e.outcome)).toEqual(['failure', 'failure', 'failure'])
    expect(refused.map((e) => e.actorUserId)).toEqual([plain.id, plain.id, plain.id])
  })
})

describe('set-role and has-permission', () => {
  it('stores one or several roles comma-separated and applies them at once', async () => {
    const target = await member(server)
    const one = await admin.client.admin.setRole({ userId: target.id, role: 'admin' })
    expect(one.data?.user).toMatchObject({ id: target.id, role: 'admin' })
    // The new role works on the target's existing session immediately.
    const listed = await target.client.admin.listUsers({ query: { limit: 1 } })
    expect(listed.error).toBeNull()
    const many = await admin.client.admin.setRole({ userId: target.id, role: ['user', 'admin'] })
    expect(many.data?.user.role).toBe('user,admin')
    expect((await row(target.id))?.role).toBe('user,admin')
    const events = await auditOf(target.id, ['admin.set-role'])
    expect(events.map((e) => e.detail)).toEqual([
      { before: { role: 'user' }, after: { role: 'admin' } },
      { before: { role: 'admin' }, after: { role: 'user,admin' } },
    ])
    const missing = await admin.client.admin.setRole({ userId: 'no-such-user', role: 'user' })
    expect(missing.error).toMatchObject({ status: 404, code: 'USER_NOT_FOUND', message: 'User not found' })
  })

  it('answers has-permission for the session user, with permissions or the deprecated permission', async () => {
    const plain = await member(server)
    const yes = await admin.client.admin.hasPermission({ permissions: { user: ['ban', 'list'], session: ['revoke'] } })
    expect(yes.data).toEqual({ error: null, success: true })
    const no = await plain.client.admin.hasPermission({ permissions: { user: ['list'] } })
    expect(no.data).toEqual({ error: null, success: false })
    const raw = new HttpClient(server.base)
    raw.jar.cookies.set('better-auth.session_token', admin.jar.get('better-auth.session_token') as string)
    const legacy = await raw.post('/admin/has-permission', { permission: { user: ['set-password'] } })
    expect(legacy.body).toEqual({ error: null, success: true })
    const unknownAction = await raw.post('/admin/has-permission', { permissions: { user: ['fly'] } })
    expect(unknownAction.body).toEqual({ error: null, success: false })
    const none = await raw.post('/admin/has-permission', {})
    expect(none.status).toBe(400)
    expect(none.body).toEqual({
      code: 'INVALID_PERMISSION_CHECK_NO_PERMISSIONS_WERE_PASSED',
      message: 'invalid permission check. no permission(s) were passed.',
    })
  })
})

describe('bans', () => {
  it('bans with the default reason, deletes every session and refuses sign-in by email and username', async () => {
    const victim = await member(server, { username: `ban_${Date.now().toString(36)}` })
    const second = officialClient(server)
    await second.client.signIn.email({ email: victim.email, password: victim.password })
    expect(await sessionsOf(victim.id)).toHaveLength(2)

    const res = await admin.client.admin.banUser({ userId: victim.id })
    expect(res.error).toBeNull()
    expect(res.data?.user).toMatchObject({ id: victim.id, banned: true, banReason: 'No reason', banExpires: null })
    expect(await sessionsOf(victim.id)).toHaveLength(0)
    expect((await victim.client.getSession()).data).toBeNull()

    const byEmail = await officialClient(server).client.signIn.email({ email: victim.email, password: victim.password })
    expect(byEmail.error).toMatchObject({ status: 403, ...BANNED })
    const username = (await row(victim.id))?.username as string
    const byUsername = await officialClient(server).client.signIn.username({ username, password: victim.password })
    expect(byUsername.error).toMatchObject({ status: 403, ...BANNED })

    const [event] = await auditOf(victim.id, ['admin.ban-user'])
    expect(event?.detail).toEqual({
      before: { banned: false, banReason: null, banExpires: null },
      after: { banned: true, banReason: 'No reason', banExpires: null },
      sessionsRevoked: 2,
    })

    const unban = await admin.client.admin.unbanUser({ userId: victim.id })
    expect(unban.data?.user).toMatchObject({ banned: false, banReason: null, banExpires: null })
    const again = await officialClient(server).client.signIn.username({ username, password: victim.password })
    expect(again.error).toBeNull()
  })

  it('lifts a ban by itself once banExpiresIn has passed (cleared at the next session creation)', async () => {
    const victim = await member(server)
    const res = await admin.client.admin.banUser({ userId: victim.id, banReason: 'spam', banExpiresIn: 60 })
    expect(res.data?.user.banReason).toBe('spam')
    expect(new Date(res.data?.user.banExpires as Date).getTime()).toBe(server.clock.now() + 60_000)
    const early = await officialClient(server).client.signIn.email({ email: victim.email, password: victim.password })
    expect(early.error).toMatchObject({ status: 403, ...BANNED })
    server.clock.advanceSeconds(61)
    const late = await officialClient(server).client.signIn.email({ email: victim.email, password: victim.password })
    expect(late.error).toBeNull()
    expect(await row(victim.id)).toMatchObject({ banned: false, banReason: null, banExpires: null })
  })

  it('refuses to ban yourself', async () => {
    const res = await admin.client.admin.banUser({ userId: admin.id })
    expect(res.error).toMatchObject({ status: 400, code: 'YOU_CANNOT_BAN_YOURSELF', message: 'You cannot ban yourself' })
    expect((await row(admin.id))?.banned).toBe(false)
    // The refusal is audited (not rolled back with the ban it refused).
    expect((await auditOf(admin.id, ['admin.ban-user'])).at(-1)).toMatchObject({
      outcome: 'failure',
      detail: { reason: 'YOU_CANNOT_BAN_YOURSELF' },
    })
    expect((await admin.client.getSession()).data?.user.id).toBe(admin.id)
  })
})

describe('impersonation', () => {
  it('round trip: impersonate with a signed admin_session cookie, act as the user, stop and get the admin back', async () => {
    const target = await member(server)
    const adminToken = (await admin.client.getSession()).data?.session.token as string
    const imp = officialClient(server, admin.jar)
    const started = await imp.client.admin.impersonateUser({ userId: target.id })
    expect(started.error).toBeNull()
    const impSession = started.data?.session as unknown as { token: string; impersonatedBy: string; expiresAt: Date; userId: string }
    expect(impSession).toMatchObject({ userId: target.id, impersonatedBy: admin.id })
    expect(new Date(impSession.expiresAt).getTime()).toBe(server.clock.now() + 3600_000)
    expect(started.data?.user.id).toBe(target.id)

    const cookies = imp.last.setCookies
    expect(cookies.slice(0, 3)).toEqual([
      'better-auth.session_token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
      'better-auth.session_data=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
      'better-auth.dont_remember=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
    ])
    expect(cookies[3]).toMatch(/^better-auth\.admin_session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/)
    expect(cookies[4]).toMatch(new RegExp(`^better-auth\\.session_token=${impSession.token}\\.[^;]+; Path=/; HttpOnly; SameSite=Lax$`))
    expect(cookies[5]).toMatch(/^better-auth\.dont_remember=true\.[^;]+; Path=\/; HttpOnly; SameSite=Lax$/)
    // Verified with node:crypto's HMAC and the test secret, not the server's unsign code.
    expect(verifySignedCookie(SECRET, admin.jar.get('better-auth.admin_session') as string)).toBe(`${adminToken}:`)

    const current = await imp.client.getSession()
    expect(current.data?.user.id).toBe(target.id)
    expect(current.data?.session.impersonatedBy).toBe(admin.id)
    // The impersonated user does not see the impersonation session; an admin does.
    const own = await target.client.listSessions()
    expect(own.data?.map((s) => s.token)).not.toContain(impSession.token)
    expect(own.data).toHaveLength(1)
    const asAdmin = await officialClient(server).client.signIn.email({ email: admin.email, password: admin.password })
    expect(asAdmin.error).toBeNull()

    const stopped = await imp.client.admin.stopImpersonating()
    expect(stopped.error).toBeNull()
    expect(stopped.data?.user.id).toBe(admin.id)
    expect(stopped.data?.session.token).toBe(adminToken)
    expect(admin.jar.get('better-auth.admin_session')).toBeUndefined()
    expect(admin.jar.get('better-auth.dont_remember')).toBeUndefined()
    expect(imp.last.setCookies.find((c) => c.startsWith('better-auth.session_token='))).toMatch(
      new RegExp(`^better-auth\\.session_token=${adminToken}\\.[^;]+; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax$`),
    )
    expect((await admin.client.getSession()).data?.user.id).toBe(admin.id)
    expect((await server.gatehouse.ctx.db.select().from(session).where(eq(session.token, impSession.token)))[0]).toBeUndefined()
    const events = await auditOf(target.id, ['admin.impersonate-user', 'admin.stop-impersonating'])
    expect(events.map((e) => [e.type, e.actorUserId])).toEqual([
      ['admin.impersonate-user', admin.id],
      ['admin.stop-impersonating', admin.id],
    ])
  })

  it('ends the impersonation session after 3600 s without extending it', async () => {
    const target = await member(server)
    const imp = officialClient(server)
    await imp.client.signIn.email({ email: admin.email, password: admin.password })
    await imp.client.admin.impersonateUser({ userId: target.id })
    server.clock.advanceSeconds(3599)
    expect((await imp.client.getSession()).data?.user.id).toBe(target.id)
    server.clock.advanceSeconds(2)
    expect((await imp.client.getSession()).data).toBeNull()
  })

  it('refuses stop-impersonating when not impersonating, and impersonating an admin or an unknown user', async () => {
    const stop = await admin.client.admin.stopImpersonating()
    expect(stop.error).toMatchObject({ status: 400, code: 'YOU_ARE_NOT_IMPERSONATING_ANYONE', message: 'You are not impersonating anyone' })
    const other = await administrator(server)
    const adminTarget = await admin.client.admin.impersonateUser({ userId: other.id })
    expect(adminTarget.error).toMatchObject(refusal(403, 'YOU_CANNOT_IMPERSONATE_ADMINS'))
    const unknown = await admin.client.admin.impersonateUser({ userId: 'nobody' })
    expect(unknown.error).toMatchObject({ status: 404, code: 'USER_NOT_FOUND', message: 'User not found' })
    expect((await admin.client.getSession()).data?.user.id).toBe(admin.id)
  })
})

describe('sessions, passwords, removal, get and update', () => {
  it('lists and revokes a user’s sessions', async () => {
    const target = await member(server)
    const other = officialClient(server)
    await other.client.signIn.email({ email: target.email, password: target.password })
    const listed = await admin.client.admin.listUserSessions({ userId: target.id })
    expect(listed.data?.sessions).toHaveLength(2)
    const [first] = listed.data?.sessions ?? []
    const one = await admin.client.admin.revokeUserSession({ sessionToken: first?.token as string })
    expect(one.data).toEqual({ success: true })
    expect(await sessionsOf(target.id)).toHaveLength(1)
    const all = await admin.client.admin.revokeUserSessions({ userId: target.id })
    expect(all.data).toEqual({ success: true })
    expect(await sessionsOf(target.id)).toHaveLength(0)
    expect((await other.client.getSession()).data).toBeNull()
  })

  it('sets a user’s password, enforcing the length rules', async () => {
    const target = await member(server)
    const short = await admin.client.admin.setUserPassword({ userId: target.id, newPassword: 'short' })
    expect(short.error).toMatchObject(refusal(400, 'PASSWORD_TOO_SHORT'))
    const res = await admin.client.admin.setUserPassword({ userId: target.id, newPassword: 'brand new password' })
    expect(res.data).toEqual({ status: true })
    const old = await officialClient(server).client.signIn.email({ email: target.email, password: target.password })
    expect(old.error).toMatchObject(refusal(401, 'INVALID_EMAIL_OR_PASSWORD'))
    const fresh = await officialClient(server).client.signIn.email({ email: target.email, password: 'brand new password' })
    expect(fresh.error).toBeNull()
  })

  it('removes a user with sessions and accounts, but not yourself', async () => {
    const target = await member(server)
    const res = await admin.client.admin.removeUser({ userId: target.id })
    expect(res.data).toEqual({ success: true })
    expect(await row(target.id)).toBeUndefined()
    expect(await sessionsOf(target.id)).toHaveLength(0)
    expect((await target.client.getSession()).data).toBeNull()
    const self = await admin.client.admin.removeUser({ userId: admin.id })
    expect(self.error).toMatchObject(refusal(400, 'YOU_CANNOT_REMOVE_YOURSELF'))
    const gone = await admin.client.admin.removeUser({ userId: target.id })
    expect(gone.error).toMatchObject(refusal(404, 'USER_NOT_FOUND'))
  })

  it('gets and updates a user', async () => {
    const target = await member(server)
    const got = await admin.client.admin.getUser({ query: { id: target.id } })
    expect(got.data).toMatchObject({ id: target.id, email: target.email, role: 'user' })
    const updated = await admin.client.admin.updateUser({
      userId: target.id,
      data: { name: 'Renamed', emailVerified: true, username: 'Renamed_User' },
    })
    expect(updated.error).toBeNull()
    expect(updated.data).toMatchObject({ name: 'Renamed', emailVerified: true, username: 'renamed_user', displayUsername: 'Renamed_User' })
    const empty = await admin.client.admin.updateUser({ userId: target.id, data: {} })
    expect(empty.error).toMatchObject(refusal(400, 'NO_DATA_TO_UPDATE'))
    const pw = await admin.client.admin.updateUser({ userId: target.id, data: { password: 'x' } })
    expect(pw.error).toMatchObject(refusal(400, 'PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER'))
    const ban = await admin.client.admin.updateUser({ userId: target.id, data: { banned: true, banReason: 'via update' } })
    expect(ban.data).toMatchObject({ banned: true, banReason: 'via update' })
    expect(await sessionsOf(target.id)).toHaveLength(0)
    const [event] = await auditOf(target.id, ['admin.update-user'])
    expect(event?.detail).toEqual({
      before: { name: target.name, emailVerified: false, username: null, displayUsername: null },
      after: { name: 'Renamed', emailVerified: true, username: 'renamed_user', displayUsername: 'Renamed_User' },
    })
    const missing = await admin.client.admin.getUser({ query: { id: 'nobody' } })
    expect(missing.error).toMatchObject(refusal(404, 'USER_NOT_FOUND'))
  })
})

describe('concurrency', () => {
  it('20 parallel ban / unban / set-role calls leave a consistent user that matches the last audited change', async () => {
    const victim = await member(server)
    const calls = Array.from({ length: 20 }, (_, i) => {
      if (i % 3 === 0) return admin.client.admin.banUser({ userId: victim.id, banReason: `reason ${i}`, banExpiresIn: 1000 + i })
      if (i % 3 === 1) return admin.client.admin.unbanUser({ userId: victim.id })
      return admin.client.admin.setRole({ userId: victim.id, role: i % 2 === 0 ? 'admin' : 'user' })
    })
    const results = await Promise.all(calls)
    expect(results.map((r) => r.error)).toEqual(Array(20).fill(null))
    const final = await row(victim.id)
    if (!final) throw new Error('victim vanished')
    if (final.banned) {
      expect(final.banReason).toMatch(/^reason \d+$/)
      expect(final.banExpires).toBeInstanceOf(Date)
      expect(await sessionsOf(victim.id)).toHaveLength(0)
    } else {
      expect(final).toMatchObject({ banReason: null, banExpires: null })
    }
    const bans = await auditOf(victim.id, ['admin.ban-user', 'admin.unban-user'])
    expect(bans).toHaveLength(14)
    expect(bans.at(-1)?.detail).toMatchObject({
      after: { banned: Boolean(final.banned), banReason: final.banReason, banExpires: final.banExpires?.toISOString() ?? null },
    })
    // Each change saw the state the previous one left: the audit trail chains without gaps.
    for (let i = 1; i < bans.length; i++) {
      const prev = bans[i - 1]?.detail as { after: unknown }
      const cur = bans[i]?.detail as { before: unknown }
      expect(cur.before).toEqual(prev.after)
    }
    const roles = await auditOf(victim.id, ['admin.set-role'])
    expect(roles).toHaveLength(6)
    expect(roles.at(-1)?.detail).toMatchObject({ after: { role: final.role } })
  })
})

describe('access control from the config', () => {
  it('applies custom roles, adminUserIds and the ban options live', async () => {
    const config = server.gatehouse.config
    await config.update({
      admin: {
        roles: { support: { user: ['list', 'ban'] } },
        defaultBanReason: 'Policy',
        defaultBanExpiresIn: 120,
        bannedUserMessage: 'Account suspended.',
      },
    })
    try {
      const helper = await member(server)
      const victim = await member(server)
      expect((await admin.client.admin.setRole({ userId: helper.id, role: 'support' as 'admin' })).error).toBeNull()
      expect((await helper.client.admin.listUsers({ query: { limit: 1 } })).error).toBeNull()
      const ban = await helper.client.admin.banUser({ userId: victim.id })
      expect(ban.data?.user).toMatchObject({ banned: true, banReason: 'Policy' })
      expect(new Date(ban.data?.user.banExpires as Date).getTime()).toBe(server.clock.now() + 120_000)
      const refused = await officialClient(server).client.signIn.email({ email: victim.email, password: victim.password })
      expect(refused.error).toMatchObject({ status: 403, code: 'BANNED_USER', message: 'Account suspended.' })
      const setRole = await helper.client.admin.setRole({ userId: victim.id, role: 'admin' })
      expect(setRole.error).toMatchObject(refusal(403, 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE'))
      expect((await helper.client.admin.impersonateUser({ userId: victim.id })).error).toMatchObject(
        refusal(403, 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS'),
      )

      const listed = await member(server)
      expect((await listed.client.admin.removeUser({ userId: victim.id })).error).toMatchObject(
        refusal(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS'),
      )
      await config.update({ admin: { adminUserIds: [listed.id] } })
      const removed = await listed.client.admin.removeUser({ userId: victim.id })
      expect(removed.data).toEqual({ success: true })
      await config.update({ admin: { adminUserIds: [] } })
      expect((await listed.client.admin.listUsers({ query: {} })).error).toMatchObject(refusal(403, 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS'))
    } finally {
      // (A stored custom role stays: config patches merge; it is harmless here.)
      await config.update({ admin: { defaultBanReason: 'No reason', defaultBanExpiresIn: undefined, bannedUserMessage: BANNED.message } })
    }
  })

  it('refuses an invalid custom role definition in the config', () => {
    const config = server.gatehouse.config
    expect(() => config.update({ admin: { roles: { bad: { user: ['fly'] } } } })).toThrow(/admin\.roles\.bad\.user/)
    expect(() => config.update({ admin: { roles: { 'a,b': { user: ['list'] } } } })).toThrow(/admin\.roles/)
    expect(Object.keys(config.get().admin.roles)).not.toContain('bad')
  })
})

describe('audit trail', () => {
  it('holds a success event with actor and target for every kind of admin action performed above', async () => {
    const types = [
      'admin.create-user',
      'admin.set-role',
      'admin.ban-user',
      'admin.unban-user',
      'admin.impersonate-user',
      'admin.stop-impersonating',
      'admin.revoke-user-session',
      'admin.revoke-user-sessions',
      'admin.remove-user',
      'admin.set-user-password',
      'admin.update-user',
    ]
    const events = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(inArray(auditEvent.type, types), eq(auditEvent.outcome, 'success'), eq(auditEvent.actorUserId, admin.id)))
    for (const type of types) {
      const ofType = events.filter((e) => e.type === type)
      expect(ofType.length, type).toBeGreaterThan(0)
      expect(
        ofType.every((e) => typeof e.targetUserId === 'string' && e.ipAddress === '127.0.0.1'),
        type,
      ).toBe(true)
    }
    const password = events.find((e) => e.type === 'admin.set-user-password')
    expect(JSON.stringify(password?.detail)).not.toContain('brand new password')
  })
})
