import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recentAuditEvents } from '../../server/core/audit.js'
import { createPanelService, type PanelService } from '../../server/panel/service.js'
import { HttpClient, signUp, uniqueEmail } from '../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp.js'

/**
 * Issue 31 §3 (and issue 27's user drawer): the panel operations an administrator of users and
 * organizations needs, through the panel service as the renderer (HTTP, IPC, browser) calls
 * them. Runs on both engines (the `sqlite` and `postgres` projects).
 */

let server: TestServer
let panel: PanelService
let sink: SmtpSink

beforeAll(async () => {
  sink = await startSmtpSink()
  server = await startTestServer({
    config: {
      mail: { smtp: { url: sink.url } },
      security: { accountLockout: { maxFailures: 2 } },
      lastLoginMethod: { enabled: true, storeInDatabase: true },
      admin: { roles: { support: { user: ['list', 'get'] } } },
      organization: { roles: { auditor: { organization: ['update'] } } },
    },
  })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(async () => {
  await server?.close()
  await sink?.close()
})

async function ok<T = Record<string, unknown>>(op: string, input: unknown): Promise<T> {
  const result = await panel.dispatch(op, input)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

async function failure(op: string, input: unknown) {
  const result = await panel.dispatch(op, input)
  if (result.ok) throw new Error(`${op} succeeded`)
  return result.error
}

interface OrgDetail {
  organization: { id: string; name: string; slug: string; members: number }
  members: Array<{ id: string; userId: string; role: string }>
  teams: Array<{ id: string; name: string }>
  teamMembers: Array<{ teamId: string; userId: string }>
  roles: string[]
}

describe('organization panel: members, teams, rename, delete', () => {
  it('adds an existing user with a role, sets a team’s members, renames and deletes', async () => {
    const tag = `puo${Date.now().toString(36)}`
    const owner = await signUp(server.base)
    const ann = await signUp(server.base)
    const bob = await signUp(server.base)
    const { organization } = await ok<{ organization: { id: string } }>('orgs.create', {
      name: `${tag} Org`,
      slug: tag,
      ownerUserId: owner.user.id,
    })
    const orgId = organization.id

    const added = await ok<{ member: { userId: string; role: string } }>('orgs.addMember', {
      organizationId: orgId,
      userId: ann.user.id,
      role: 'auditor',
    })
    expect(added.member).toMatchObject({ userId: ann.user.id, role: 'auditor' })
    await ok('orgs.addMember', { organizationId: orgId, userId: bob.user.id, role: 'member' })
    expect(await failure('orgs.addMember', { organizationId: orgId, userId: bob.user.id, role: 'member' })).toMatchObject({
      code: 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION',
      status: 400,
    })
    expect(await failure('orgs.addMember', { organizationId: orgId, userId: 'no-such-user', role: 'member' })).toMatchObject({
      status: 400,
      code: 'USER_NOT_FOUND',
    })
    expect(await failure('orgs.addMember', { organizationId: orgId, userId: owner.user.id, role: 'wizard' })).toMatchObject({
      code: 'ROLE_NOT_FOUND',
      field: 'role',
    })

    let detail = await ok<OrgDetail>('orgs.get', { organizationId: orgId })
    expect(detail.roles).toEqual(expect.arrayContaining(['owner', 'admin', 'member', 'auditor']))
    expect(detail.organization.members).toBe(3)
    const team = detail.teams[0] as { id: string }
    expect(detail.teamMembers).toEqual([{ teamId: team.id, userId: owner.user.id }])

    // Set the team to exactly {ann, bob}: owner leaves it, both join; audited per change.
    expect(await ok('orgs.setTeamMembers', { organizationId: orgId, teamId: team.id, userIds: [ann.user.id, bob.user.id] })).toEqual({
      added: [ann.user.id, bob.user.id],
      removed: [owner.user.id],
    })
    detail = await ok<OrgDetail>('orgs.get', { organizationId: orgId })
    expect(detail.teamMembers.map((m) => m.userId).sort()).toEqual([ann.user.id, bob.user.id].sort())
    // Only members of the organization can be in its teams.
    const outsider = await signUp(server.base)
    expect(await failure('orgs.setTeamMembers', { organizationId: orgId, teamId: team.id, userIds: [outsider.user.id] })).toMatchObject({
      code: 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    })
    // ...and nothing changed (one transaction).
    detail = await ok<OrgDetail>('orgs.get', { organizationId: orgId })
    expect(detail.teamMembers).toHaveLength(2)
    const events = await recentAuditEvents(server.gatehouse.ctx, 20)
    expect(events.filter((e) => e.type === 'team.member-added' && e.target === orgId)).toHaveLength(2)
    expect(events.filter((e) => e.type === 'team.member-removed' && e.target === orgId)).toHaveLength(1)

    // Rename (name and slug); a taken slug is the slug field's error.
    const other = await ok<{ organization: { slug: string } }>('orgs.create', {
      name: 'Other',
      slug: `${tag}-other`,
      ownerUserId: owner.user.id,
    })
    expect(await failure('orgs.update', { organizationId: orgId, name: 'X', slug: other.organization.slug })).toMatchObject({
      code: 'ORGANIZATION_SLUG_ALREADY_TAKEN',
    })
    const renamed = await ok<{ organization: { name: string; slug: string; members: number } }>('orgs.update', {
      organizationId: orgId,
      name: `${tag} Renamed`,
      slug: `${tag}-renamed`,
    })
    expect(renamed.organization).toMatchObject({ name: `${tag} Renamed`, slug: `${tag}-renamed`, members: 3 })
    expect(await failure('orgs.update', { organizationId: orgId, name: '   ' })).toMatchObject({ code: 'VALIDATION_ERROR' })

    // Delete: gone from the list and the user's memberships.
    expect(await ok('orgs.remove', { organizationId: orgId })).toEqual({ success: true })
    expect(await failure('orgs.get', { organizationId: orgId })).toMatchObject({ code: 'ORGANIZATION_NOT_FOUND', status: 404 })
    expect((await ok<{ memberships: unknown[] }>('users.get', { userId: ann.user.id })).memberships).toEqual([])
  })
})

interface UserDetail {
  user: { id: string; name: string; email: string; emailVerified: boolean }
  sessions: Array<{ id: string; userAgent: string | null; ipAddress: string | null; updatedAt: number }>
  lastLoginMethod: { stored: boolean; method: string | null }
  locks: Array<{ key: string; kind: string; failures: number; lockedUntil: number }>
}

describe('users panel: edit, mails, lockout, search, roles, sessions, bulk', () => {
  it('edits name and email; a taken email is the email field’s error', async () => {
    const a = await signUp(server.base)
    const b = await signUp(server.base)
    const email = uniqueEmail('edited')
    const { user } = await ok<UserDetail>('users.update', { userId: a.user.id, name: 'Edited Name', email: email.toUpperCase() })
    expect(user).toMatchObject({ name: 'Edited Name', email })
    expect(await failure('users.update', { userId: a.user.id, email: b.email })).toEqual({
      code: 'USER_ALREADY_EXISTS',
      message: 'User already exists',
      status: 400,
      field: 'email',
    })
    expect(await failure('users.update', { userId: a.user.id, email: 'nope' })).toMatchObject({ code: 'INVALID_EMAIL', field: 'email' })
    const audit = await recentAuditEvents(server.gatehouse.ctx, 50, a.user.id)
    expect(audit.find((e) => e.type === 'admin.update-user')?.detail).toMatchObject({ after: { name: 'Edited Name', email } })
  })

  it('mails a password-reset link and a verification link through the outbox; the reset link works', async () => {
    const u = await signUp(server.base)
    expect(await ok('users.sendPasswordReset', { userId: u.user.id })).toEqual({ success: true })
    const reset = await sink.waitFor(u.email, (m) => /reset/i.test(m.subject))
    const token = /reset-password\/([A-Za-z0-9_-]+)/.exec(reset.text)?.[1]
    expect(token).toBeTruthy()
    const res = await new HttpClient(server.base).post('/reset-password', { token, newPassword: 'a brand new password' })
    expect(res.status).toBe(200)
    expect((await new HttpClient(server.base).post('/sign-in/email', { email: u.email, password: 'a brand new password' })).status).toBe(
      200,
    )

    expect(await ok('users.sendVerification', { userId: u.user.id })).toEqual({ success: true })
    const verify = await sink.waitFor(u.email, (m) => /verify-email\?token=/.test(m.text))
    expect(verify.text).toContain('/verify-email?token=')
    const types = (await recentAuditEvents(server.gatehouse.ctx, 50, u.user.id)).map((e) => e.type)
    expect(types).toEqual(expect.arrayContaining(['admin.send-password-reset', 'admin.send-verification-email']))
    expect(await failure('users.sendPasswordReset', { userId: 'no-such-user' })).toMatchObject({ code: 'USER_NOT_FOUND', status: 404 })
  })

  it('shows a lockout and lifts it; the user signs in again', async () => {
    const u = await signUp(server.base)
    const http = new HttpClient(server.base)
    for (let i = 0; i < 2; i++)
      expect((await http.post('/sign-in/email', { email: u.email, password: 'wrong password!' })).status).toBe(401)
    expect((await http.post('/sign-in/email', { email: u.email, password: u.password })).status).toBe(429)
    const locked = await ok<UserDetail>('users.get', { userId: u.user.id })
    expect(locked.locks).toEqual([{ key: `email:${u.email}`, kind: 'password', failures: 2, lockedUntil: server.clock.now() + 900_000 }])
    expect(await ok('users.unlock', { userId: u.user.id })).toEqual({ lifted: 1 })
    expect((await ok<UserDetail>('users.get', { userId: u.user.id })).locks).toEqual([])
    expect((await http.post('/sign-in/email', { email: u.email, password: u.password })).status).toBe(200)
    const unlocked = (await recentAuditEvents(server.gatehouse.ctx, 50, u.user.id)).find((e) => e.type === 'security.account-unlocked')
    expect(unlocked).toMatchObject({ targetUserId: u.user.id, target: `email:${u.email}` })
  })

  it('one search across name, email and username; filters still apply', async () => {
    const tag = `srch${Date.now().toString(36)}`
    const byName = await signUp(server.base, { name: `Ada ${tag}` })
    const byEmail = await signUp(server.base, { email: `${tag}@example.com` })
    const byUsername = await signUp(server.base)
    await ok('users.update', { userId: byUsername.user.id, name: 'Plain' })
    // The username column, set by its owner (the username feature's own route).
    expect((await byUsername.client.post('/update-user', { username: `${tag}_u` })).status).toBe(200)
    const list = await ok<{ users: Array<{ id: string }>; total: number }>('users.list', {
      searchValue: tag.toUpperCase(),
      searchField: 'any',
      sortBy: 'createdAt',
      sortDirection: 'asc',
    })
    const expected = [byName.user.id, byEmail.user.id, byUsername.user.id]
    // Sorted by creation (the same instant here: insertion order on SQLite, id on PostgreSQL), so compared as sets.
    expect(list.users.map((u) => u.id).sort()).toEqual([...expected].sort())
    expect(list.total).toBe(expected.length)
    await ok('users.ban', { userId: byEmail.user.id })
    const banned = await ok<{ users: Array<{ id: string }>; total: number }>('users.list', {
      searchValue: tag,
      searchField: 'any',
      filterField: 'banned',
      filterValue: true,
      filterOperator: 'eq',
    })
    expect(banned).toMatchObject({ users: [{ id: byEmail.user.id }], total: 1 })
  })

  it('offers the defined roles; the drawer shows device sessions and the last login method', async () => {
    expect((await ok<{ roles: string[] }>('users.roles', {})).roles).toEqual(['admin', 'user', 'support'])
    const u = await signUp(server.base)
    const http = new HttpClient(server.base)
    const signedIn = await http.post('/sign-in/email', { email: u.email, password: u.password }, { 'user-agent': 'KioskBrowser/1.0' })
    expect(signedIn.status).toBe(200)
    const detail = await ok<UserDetail>('users.get', { userId: u.user.id })
    expect(detail.lastLoginMethod).toEqual({ stored: true, method: 'email' })
    expect(detail.sessions.map((s) => s.userAgent)).toContain('KioskBrowser/1.0')
    const kiosk = detail.sessions.find((s) => s.userAgent === 'KioskBrowser/1.0')
    expect(kiosk?.updatedAt).toBe(server.clock.now())
    await ok('users.revokeSession', { userId: u.user.id, sessionId: kiosk?.id })
    expect((await ok<UserDetail>('users.get', { userId: u.user.id })).sessions.map((s) => s.userAgent)).not.toContain('KioskBrowser/1.0')
  })

  it('bulk: ban, revoke sessions and delete several users, each audited; failures reported per user', async () => {
    const [a, b, c] = [await signUp(server.base), await signUp(server.base), await signUp(server.base)]
    const ids = [a.user.id, b.user.id]
    expect(await ok('users.bulk', { action: 'revokeSessions', userIds: ids })).toEqual({ done: ids, failed: [] })
    expect((await ok<UserDetail>('users.get', { userId: a.user.id })).sessions).toEqual([])
    expect((await ok<UserDetail>('users.get', { userId: c.user.id })).sessions).toHaveLength(1)
    expect(await ok('users.bulk', { action: 'ban', userIds: ids, banReason: 'spam wave' })).toEqual({ done: ids, failed: [] })
    expect((await ok<{ user: { banned: boolean; banReason: string } }>('users.get', { userId: b.user.id })).user).toMatchObject({
      banned: true,
      banReason: 'spam wave',
    })
    expect(await ok('users.bulk', { action: 'remove', userIds: [...ids, 'no-such-user'] })).toEqual({
      done: ids,
      failed: [{ userId: 'no-such-user', code: 'USER_NOT_FOUND', message: 'User not found' }],
    })
    expect(await failure('users.get', { userId: a.user.id })).toMatchObject({ code: 'USER_NOT_FOUND' })
    const events = await recentAuditEvents(server.gatehouse.ctx, 200)
    for (const type of ['admin.ban-user', 'admin.revoke-user-sessions', 'admin.remove-user']) {
      for (const id of ids) expect(events.some((e) => e.type === type && e.targetUserId === id && e.outcome === 'success')).toBe(true)
    }
    expect(await failure('users.bulk', { action: 'remove', userIds: [] })).toMatchObject({ code: 'VALIDATION_ERROR' })
  })
})

describe('API keys panel: the owner', () => {
  it('takes an id or an email; an unknown owner is the owner field’s error, not UNAUTHORIZED_SESSION', async () => {
    const u = await signUp(server.base)
    const byEmail = await ok<{ apiKey: { referenceId: string; ownerEmail: string } }>('apiKey.create', {
      userId: u.email,
      name: 'by email',
    })
    expect(byEmail.apiKey).toMatchObject({ referenceId: u.user.id, ownerEmail: u.email })
    expect(await failure('apiKey.create', { userId: 'nobody@example.com', name: 'x' })).toEqual({
      code: 'USER_NOT_FOUND',
      message: 'User not found',
      status: 400,
      field: 'userId',
    })
    expect(await failure('apiKey.create', { userId: 'no-such-id', name: 'x' })).toMatchObject({ code: 'USER_NOT_FOUND', field: 'userId' })
  })
})
