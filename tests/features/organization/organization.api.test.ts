import { organizationClient } from 'better-auth/client/plugins'
import { and, count, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addMember } from '../../../server/features/organization/members.js'
import { systemActor } from '../../../server/features/organization/shared.js'
import { auditEvent, member, organization } from '../../../server/db/schema.js'
import { CookieJar, HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

/** The official client with the organization plugin, its credentials in a cookie jar. */
function officialClient(srv: TestServer, jar = new CookieJar()) {
  return official(srv, { jar, plugins: [organizationClient({ teams: { enabled: true } })] }).client
}

type Client = ReturnType<typeof officialClient>

interface Person {
  id: string
  email: string
  http: HttpClient
  client: Client
}

async function person(srv: TestServer = server, prefix = 'org'): Promise<Person> {
  const signed = await signUp(srv.base, { email: uniqueEmail(prefix) })
  return { id: signed.user.id, email: signed.email, http: signed.client, client: officialClient(srv, signed.client.jar) }
}

interface ClientError {
  status: number
  code?: string
  message?: string
}

/**
 * The organization plugin's messages are its codes written as a sentence (reference §1.5: "all
 * wire codes equal the key, messages are clean"); the exceptions are passed explicitly.
 */
const sentence = (code: string) => code.charAt(0) + code.slice(1).toLowerCase().replaceAll('_', ' ')

function expectError(result: { data: unknown; error: ClientError | null }, status: number, code: string, message = sentence(code)) {
  expect(result.data).toBeNull()
  expect({ status: result.error?.status, code: result.error?.code, message: result.error?.message }).toEqual({ status, code, message })
}

let slugCounter = 0
const slug = (prefix = 'acme') => `${prefix}-${Date.now().toString(36)}-${slugCounter++}`

async function createOrg(owner: Person, extra: Record<string, unknown> = {}) {
  const res = await owner.client.organization.create({ name: 'Acme', slug: slug(), ...extra })
  expect(res.error).toBeNull()
  if (!res.data) throw new Error('create failed')
  return res.data
}

/** Invites `invitee` into `orgId` and has them accept; returns the new member id. */
async function join(inviter: Person, invitee: Person, orgId: string, role: 'member' | 'admin' | 'owner' = 'member', teamId?: string) {
  const inv = await inviter.client.organization.inviteMember({ email: invitee.email, role, organizationId: orgId, teamId })
  expect(inv.error).toBeNull()
  const accepted = await invitee.client.organization.acceptInvitation({ invitationId: inv.data?.id as string })
  expect(accepted.error).toBeNull()
  return accepted.data?.member.id as string
}

async function activeOrgOf(p: Person): Promise<string | null | undefined> {
  const res = await p.client.getSession({ query: { disableCookieCache: true } })
  return (res.data?.session as { activeOrganizationId?: string | null } | undefined)?.activeOrganizationId
}

async function auditTypes(orgId: string): Promise<string[]> {
  return (await server.gatehouse.ctx.db.select({ type: auditEvent.type }).from(auditEvent).where(eq(auditEvent.target, orgId))).map(
    (r) => r.type,
  )
}

describe('organization create, list, check-slug, full organization, set-active', () => {
  it('creates with the creator as owner in a default team and makes it active', async () => {
    const alice = await person()
    const s = slug()
    const res = await alice.client.organization.create({
      name: 'Acme Inc',
      slug: s,
      metadata: { plan: 'pro' },
      logo: 'https://x.test/l.png',
    })
    expect(res.error).toBeNull()
    const org = res.data
    expect(org).toMatchObject({ name: 'Acme Inc', slug: s, logo: 'https://x.test/l.png', metadata: { plan: 'pro' } })
    expect(org?.id).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(org?.members).toHaveLength(1)
    expect(org?.members[0]).toMatchObject({ userId: alice.id, role: 'owner', organizationId: org?.id })
    expect(await activeOrgOf(alice)).toBe(org?.id)

    const full = await alice.client.organization.getFullOrganization()
    expect(full.error).toBeNull()
    expect(full.data?.id).toBe(org?.id)
    expect(full.data?.members[0]?.user).toMatchObject({ id: alice.id, email: alice.email, name: 'Test User' })
    expect(full.data?.invitations).toEqual([])
    expect(full.data?.teams).toHaveLength(1)
    const defaultTeam = full.data?.teams?.[0]
    expect(defaultTeam).toMatchObject({ name: 'Acme Inc', organizationId: org?.id })
    expect((org?.members[0] as { teamId?: string } | undefined)?.teamId).toBe(defaultTeam?.id)
    expect(await auditTypes(org?.id as string)).toContain('organization.created')
  })

  it('refuses a taken slug, answers check-slug, and lists the caller organizations', async () => {
    const alice = await person()
    const first = await createOrg(alice)
    const dup = await alice.client.organization.create({ name: 'Other', slug: first.slug })
    expectError(dup, 400, 'ORGANIZATION_ALREADY_EXISTS', 'Organization already exists')
    const taken = await alice.client.organization.checkSlug({ slug: first.slug })
    expectError(taken, 400, 'ORGANIZATION_SLUG_ALREADY_TAKEN')
    const free = await alice.client.organization.checkSlug({ slug: slug('free') })
    expect(free.data).toEqual({ status: true })

    // Lists come in creation order; a new millisecond makes that order one both engines agree on
    // (PostgreSQL has no insertion order to break a tie within one).
    server.clock.advance(1)
    const second = await createOrg(alice, { keepCurrentActiveOrganization: true })
    expect(await activeOrgOf(alice)).toBe(first.id)
    const list = await alice.client.organization.list()
    expect(list.data?.map((o) => o.id)).toEqual([first.id, second.id])
    const bob = await person()
    expect((await bob.client.organization.list()).data).toEqual([])
  })

  it('organizationLimit counts the memberships of the creator; allowUserToCreateOrganization=false refuses everyone', async () => {
    const alice = await person()
    server.gatehouse.config.update({ organization: { organizationLimit: 2 } })
    try {
      await createOrg(alice)
      await createOrg(alice)
      expectError(
        await alice.client.organization.create({ name: 'Third', slug: slug('third') }),
        403,
        'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS',
      )
      expect((await alice.client.organization.list()).data).toHaveLength(2)
      // A membership by invitation counts as well.
      const bob = await person()
      const bobs = await createOrg(bob)
      await join(bob, alice, bobs.id)
      server.gatehouse.config.update({ organization: { organizationLimit: 3 } })
      expectError(
        await alice.client.organization.create({ name: 'Fourth', slug: slug('fourth') }),
        403,
        'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS',
      )
    } finally {
      server.gatehouse.config.update({ organization: { organizationLimit: null } })
    }
    expect((await alice.client.organization.create({ name: 'Fine', slug: slug('fine') })).error).toBeNull()

    server.gatehouse.config.update({ organization: { allowUserToCreateOrganization: false } })
    try {
      const carol = await person()
      const refused = slug('refused')
      expectError(
        await carol.client.organization.create({ name: 'No', slug: refused }),
        403,
        'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION',
      )
      expect(await server.gatehouse.ctx.db.select({ n: count() }).from(organization).where(eq(organization.slug, refused))).toEqual([
        { n: 0 },
      ])
    } finally {
      server.gatehouse.config.update({ organization: { allowUserToCreateOrganization: null } })
    }
  })

  it('requires a session and validates name and slug', async () => {
    const anonymous = new HttpClient(server.base)
    const res = await anonymous.post('/organization/create', { name: 'X', slug: slug() })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ code: 'UNAUTHORIZED', message: 'Unauthorized' })
    const alice = await person()
    const empty = await alice.http.post<{ code: string }>('/organization/create', { name: '', slug: slug() })
    expect(empty.status).toBe(400)
    expect(empty.body).toEqual({ code: 'VALIDATION_ERROR', message: '[body.name] Too small: expected string to have >=1 characters' })
  })

  it('set-active switches, unsets with null, refuses a non-member and re-issues the session cookie', async () => {
    const alice = await person()
    const a = await createOrg(alice)
    const b = await createOrg(alice, { keepCurrentActiveOrganization: true })
    const switched = await alice.http.post<{ id: string; members: unknown[] }>('/organization/set-active', { organizationId: b.id })
    expect(switched.status).toBe(200)
    expect(switched.body.id).toBe(b.id)
    expect(switched.body.members).toHaveLength(1)
    expect(switched.cookies.some((c) => c.startsWith('better-auth.session_token='))).toBe(true)
    expect(await activeOrgOf(alice)).toBe(b.id)
    const bySlug = await alice.client.organization.setActive({ organizationSlug: a.slug })
    expect(bySlug.data?.id).toBe(a.id)
    expect(await activeOrgOf(alice)).toBe(a.id)
    const unset = await alice.client.organization.setActive({ organizationId: null })
    expect(unset.error).toBeNull()
    expect(unset.data).toBeNull()
    expect(await activeOrgOf(alice)).toBeNull()
    expect((await alice.client.organization.getFullOrganization()).data).toBeNull()

    const mallory = await person()
    expectError(await mallory.client.organization.setActive({ organizationId: a.id }), 403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
    expectError(await mallory.client.organization.setActive({ organizationSlug: 'no-such-slug' }), 400, 'ORGANIZATION_NOT_FOUND')
    expect(await activeOrgOf(mallory)).toBeNull()
  })
})

describe('active organization with the cookie cache', () => {
  it('get-session reflects create, set-active, leave and delete at once', async () => {
    const cached = await startTestServer({ config: { session: { cookieCache: { enabled: true } } } })
    try {
      const alice = await person(cached)
      const bob = await person(cached)
      const primeCache = async (p: Person) => (await p.client.getSession()).data
      await primeCache(alice)
      const activeFromCache = async (p: Person) =>
        ((await p.client.getSession()).data?.session as { activeOrganizationId?: string | null } | undefined)?.activeOrganizationId
      const created = await alice.client.organization.create({ name: 'Cached', slug: slug('cached') })
      const orgId = created.data?.id as string
      expect(await activeFromCache(alice)).toBe(orgId)

      await primeCache(bob)
      const inv = await alice.client.organization.inviteMember({ email: bob.email, role: 'member' })
      await bob.client.organization.acceptInvitation({ invitationId: inv.data?.id as string })
      expect(await activeFromCache(bob)).toBe(orgId)
      await bob.client.organization.setActive({ organizationId: null })
      expect(await activeFromCache(bob)).toBeNull()
      await bob.client.organization.setActive({ organizationId: orgId })
      expect(await activeFromCache(bob)).toBe(orgId)
      await bob.client.organization.leave({ organizationId: orgId })
      expect(await activeFromCache(bob)).toBeNull()

      await alice.client.organization.delete({ organizationId: orgId })
      expect(await activeFromCache(alice)).toBeNull()
    } finally {
      await cached.close()
    }
  })
})

describe('update and delete', () => {
  it('lets owner and admin update, refuses a member, a slug clash and a non-member', async () => {
    const alice = await person()
    const bob = await person()
    const carol = await person()
    const org = await createOrg(alice)
    const other = await createOrg(alice, { keepCurrentActiveOrganization: true })
    await join(alice, bob, org.id, 'admin')
    await join(alice, carol, org.id, 'member')

    const renamed = await alice.client.organization.update({ data: { name: 'Renamed', metadata: { tier: 2 } } })
    expect(renamed.data).toMatchObject({ id: org.id, name: 'Renamed', metadata: { tier: 2 } })
    const byAdmin = await bob.client.organization.update({ organizationId: org.id, data: { logo: 'https://x.test/a.png' } })
    expect(byAdmin.data).toMatchObject({ name: 'Renamed', logo: 'https://x.test/a.png' })
    expectError(
      await carol.client.organization.update({ organizationId: org.id, data: { name: 'Nope' } }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION',
    )
    expectError(
      await alice.client.organization.update({ organizationId: org.id, data: { slug: other.slug } }),
      400,
      'ORGANIZATION_SLUG_ALREADY_TAKEN',
    )
    const outsider = await person()
    expectError(
      await outsider.client.organization.update({ organizationId: org.id, data: { name: 'Hijack' } }),
      403,
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    )
    expectError(await outsider.client.organization.update({ data: { name: 'x' } }), 400, 'ORGANIZATION_NOT_FOUND')
    expect((await auditTypes(org.id)).filter((t) => t === 'organization.updated')).toHaveLength(2)
  })

  it('only the owner deletes; members and sessions lose the organization', async () => {
    const alice = await person()
    const bob = await person()
    const org = await createOrg(alice)
    await join(alice, bob, org.id, 'admin')
    expect(await activeOrgOf(bob)).toBe(org.id)
    expectError(await bob.client.organization.delete({ organizationId: org.id }), 403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION')
    const outsider = await person()
    expectError(await outsider.client.organization.delete({ organizationId: org.id }), 403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
    const deleted = await alice.client.organization.delete({ organizationId: org.id })
    expect(deleted.data).toMatchObject({ id: org.id, slug: org.slug })
    expect(await activeOrgOf(alice)).toBeNull()
    expect(await activeOrgOf(bob)).toBeNull()
    expect((await bob.client.organization.list()).data).toEqual([])
    expectError(
      await alice.client.organization.getFullOrganization({ query: { organizationId: org.id } }),
      403,
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    )
    expect(await auditTypes(org.id)).toContain('organization.deleted')
  })
})

describe('members', () => {
  it('reads the active member, its role, the member list and permissions', async () => {
    const alice = await person()
    const bob = await person()
    const org = await createOrg(alice)
    // Lists come in creation order; a new millisecond makes that order one both engines agree on
    // (PostgreSQL has no insertion order to break a tie within one).
    server.clock.advance(1)
    await join(alice, bob, org.id, 'member')

    const active = await bob.client.organization.getActiveMember()
    expect(active.data).toMatchObject({ userId: bob.id, organizationId: org.id, role: 'member', user: { email: bob.email } })
    expect((await bob.client.organization.getActiveMemberRole()).data).toEqual({ role: 'member' })
    expect((await bob.client.organization.getActiveMemberRole({ query: { userId: alice.id } })).data).toEqual({ role: 'owner' })

    const listed = await bob.client.organization.listMembers({ query: { organizationId: org.id } })
    expect(listed.data?.total).toBe(2)
    expect(listed.data?.members.map((m) => m.userId)).toEqual([alice.id, bob.id])
    const page = await bob.client.organization.listMembers({ query: { limit: 1, offset: 1 } })
    expect(page.data?.members.map((m) => m.userId)).toEqual([bob.id])
    expect(page.data?.total).toBe(2)
    const owners = await bob.client.organization.listMembers({ query: { filterField: 'role', filterValue: 'owner', filterOperator: 'eq' } })
    expect(owners.data?.members.map((m) => m.userId)).toEqual([alice.id])

    const can = await alice.client.organization.hasPermission({ permissions: { organization: ['delete'], member: ['delete'] } })
    expect(can.data).toEqual({ error: null, success: true })
    const cannot = await bob.client.organization.hasPermission({ permissions: { invitation: ['create'] } })
    expect(cannot.data).toEqual({ error: null, success: false })

    const loner = await person()
    expectError(await loner.client.organization.getActiveMember(), 400, 'NO_ACTIVE_ORGANIZATION')
    expectError(await loner.client.organization.getActiveMemberRole(), 400, 'NO_ACTIVE_ORGANIZATION')
    expectError(await loner.client.organization.hasPermission({ permissions: { team: ['create'] } }), 400, 'NO_ACTIVE_ORGANIZATION')
  })

  it('updates roles (several at once) within the owner rules', async () => {
    const alice = await person()
    const bob = await person()
    const carol = await person()
    const org = await createOrg(alice)
    const bobId = await join(alice, bob, org.id, 'admin')
    const carolId = await join(alice, carol, org.id, 'member')
    const aliceId = org.members[0]?.id as string

    const multi = await bob.client.organization.updateMemberRole({ memberId: carolId, role: ['admin', 'member'] })
    expect(multi.data).toMatchObject({ id: carolId, role: 'admin,member' })
    expect((await carol.client.organization.getActiveMemberRole()).data).toEqual({ role: 'admin,member' })
    // a comma-separated admin role grants admin permissions
    expect((await carol.client.organization.hasPermission({ permissions: { member: ['update'] } })).data?.success).toBe(true)

    expectError(
      await bob.client.organization.updateMemberRole({ memberId: carolId, role: 'owner' }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
    )
    expectError(
      await bob.client.organization.updateMemberRole({ memberId: aliceId, role: 'member' }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
    )
    expectError(
      await alice.client.organization.updateMemberRole({ memberId: carolId, role: 'wizard' as 'member' }),
      400,
      'ROLE_NOT_FOUND',
      'Role not found: wizard',
    )
    expectError(
      await alice.client.organization.updateMemberRole({ memberId: aliceId, role: 'admin' }),
      400,
      'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    )
    const promoted = await alice.client.organization.updateMemberRole({ memberId: bobId, role: 'owner' })
    expect(promoted.data?.role).toBe('owner')
    const demoted = await bob.client.organization.updateMemberRole({ memberId: aliceId, role: 'admin' })
    expect(demoted.data?.role).toBe('admin')
    expect((await auditTypes(org.id)).filter((t) => t === 'member.role-updated')).toHaveLength(3)

    await carol.client.organization.updateMemberRole({ memberId: carolId, role: 'member' }).then((r) => expect(r.error).toBeNull())
    expectError(
      await carol.client.organization.updateMemberRole({ memberId: bobId, role: 'member' }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
    )
  })

  it('removes members by id or email, keeps the last owner, and leave follows the same rule', async () => {
    const alice = await person()
    const bob = await person()
    const carol = await person()
    const dave = await person()
    const org = await createOrg(alice)
    await join(alice, bob, org.id, 'admin')
    const carolId = await join(alice, carol, org.id, 'member')
    await join(alice, dave, org.id, 'member')
    const aliceId = org.members[0]?.id as string

    expectError(
      await carol.client.organization.removeMember({ memberIdOrEmail: bob.email }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER',
    )
    expectError(await bob.client.organization.removeMember({ memberIdOrEmail: aliceId }), 403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
    expectError(
      await alice.client.organization.removeMember({ memberIdOrEmail: aliceId }),
      400,
      'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    )
    expectError(
      await alice.client.organization.leave({ organizationId: org.id }),
      400,
      'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
      'You cannot leave the organization as the only owner',
    )
    expectError(await alice.client.organization.removeMember({ memberIdOrEmail: 'nobody@example.com' }), 400, 'MEMBER_NOT_FOUND')

    const byId = await bob.client.organization.removeMember({ memberIdOrEmail: carolId })
    expect(byId.data?.member).toMatchObject({ id: carolId, userId: carol.id, user: { email: carol.email } })
    expect(await activeOrgOf(carol)).toBeNull()
    const byEmail = await alice.client.organization.removeMember({ memberIdOrEmail: dave.email.toUpperCase() })
    expect(byEmail.data?.member.userId).toBe(dave.id)
    expectError(
      await dave.client.organization.listMembers({ query: { organizationId: org.id } }),
      403,
      'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION',
    )

    const left = await bob.client.organization.leave({ organizationId: org.id })
    expect(left.data).toMatchObject({ userId: bob.id, role: 'admin' })
    expect(await activeOrgOf(bob)).toBeNull()
    expectError(await bob.client.organization.leave({ organizationId: org.id }), 400, 'MEMBER_NOT_FOUND')

    const types = await auditTypes(org.id)
    expect(types.filter((t) => t === 'member.removed')).toHaveLength(2)
    expect(types).toContain('member.left')
  })

  it('add-member is server-only: 404 over HTTP, a domain function with the membership limit', async () => {
    const limited = await startTestServer({ config: { organization: { membershipLimit: 2 } } })
    try {
      const alice = await person(limited)
      const bob = await person(limited)
      const carol = await person(limited)
      const org = await createOrg(alice)
      const http = await alice.http.post('/organization/add-member', { userId: bob.id, role: 'member', organizationId: org.id })
      expect([http.status, http.body]).toEqual([404, { code: 'NOT_FOUND', message: 'Not Found' }])

      const ctx = limited.gatehouse.ctx
      const added = await addMember(ctx, systemActor(), { organizationId: org.id, userId: bob.id, role: ['admin', 'member'] })
      expect(added).toMatchObject({ userId: bob.id, role: 'admin,member', organizationId: org.id })
      await expect(addMember(ctx, systemActor(), { organizationId: org.id, userId: bob.id, role: 'member' })).rejects.toThrow(
        'User is already a member of this organization',
      )
      await expect(addMember(ctx, systemActor(), { organizationId: org.id, userId: carol.id, role: 'member' })).rejects.toThrow(
        'Organization membership limit reached',
      )
      const inv = await alice.client.organization.inviteMember({ email: carol.email, role: 'member' })
      expectError(
        await carol.client.organization.acceptInvitation({ invitationId: inv.data?.id as string }),
        403,
        'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED',
        'Organization membership limit reached',
      )
    } finally {
      await limited.close()
    }
  })
})

describe('invitations', () => {
  it('invites with a 48 h expiry, and the recipient reads and accepts it', async () => {
    const alice = await person()
    const bob = await person()
    const org = await createOrg(alice)
    const inv = await alice.client.organization.inviteMember({ email: bob.email.toUpperCase(), role: 'admin' })
    expect(inv.error).toBeNull()
    expect(inv.data).toMatchObject({ email: bob.email, role: 'admin', status: 'pending', organizationId: org.id, inviterId: alice.id })
    expect(inv.data?.expiresAt.getTime()).toBe(server.clock.now() + 172_800_000)
    const invitationId = inv.data?.id as string

    expectError(
      await alice.client.organization.inviteMember({ email: bob.email, role: 'admin' }),
      400,
      'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION',
    )
    server.clock.advanceSeconds(3600)
    const resent = await alice.client.organization.inviteMember({ email: bob.email, role: 'admin', resend: true })
    expect(resent.data?.id).toBe(invitationId)
    expect(resent.data?.expiresAt.getTime()).toBe(server.clock.now() + 172_800_000)

    const carol = await person()
    expectError(
      await carol.client.organization.getInvitation({ query: { id: invitationId } }),
      403,
      'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION',
    )
    expectError(await carol.client.organization.acceptInvitation({ invitationId }), 403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION')
    expectError(await carol.client.organization.rejectInvitation({ invitationId }), 403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION')

    const seen = await bob.client.organization.getInvitation({ query: { id: invitationId } })
    expect(seen.data).toMatchObject({ id: invitationId, organizationName: 'Acme', organizationSlug: org.slug, inviterEmail: alice.email })

    const accepted = await bob.client.organization.acceptInvitation({ invitationId })
    expect(accepted.data?.invitation).toMatchObject({ id: invitationId, status: 'accepted' })
    expect(accepted.data?.member).toMatchObject({ userId: bob.id, role: 'admin', organizationId: org.id })
    expect(await activeOrgOf(bob)).toBe(org.id)
    expectError(await bob.client.organization.acceptInvitation({ invitationId }), 400, 'INVITATION_NOT_FOUND', 'Invitation not found')
    expectError(
      await alice.client.organization.inviteMember({ email: bob.email, role: 'member' }),
      400,
      'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION',
    )

    const listed = await bob.client.organization.listInvitations()
    expect(listed.data?.map((i) => [i.id, i.status])).toEqual([[invitationId, 'accepted']])
    const types = await auditTypes(org.id)
    for (const t of ['invitation.created', 'invitation.resent', 'invitation.accepted']) expect(types).toContain(t)
  })

  it('rejects, expires, cancels and checks roles, permissions and the inviter', async () => {
    const alice = await person()
    const bob = await person()
    const carol = await person()
    const dave = await person()
    const org = await createOrg(alice)
    await join(alice, bob, org.id, 'admin')
    await join(alice, carol, org.id, 'member')

    const toDave = await bob.client.organization.inviteMember({ email: dave.email, role: 'member' })
    const rejected = await dave.client.organization.rejectInvitation({ invitationId: toDave.data?.id as string })
    expect(rejected.data).toMatchObject({ invitation: { status: 'rejected' }, member: null })
    expectError(await dave.client.organization.acceptInvitation({ invitationId: toDave.data?.id as string }), 400, 'INVITATION_NOT_FOUND')

    // An expired invitation: readable one second before its 48 h expiry, refused after it.
    const again = await bob.client.organization.inviteMember({ email: dave.email, role: 'member' })
    const againId = again.data?.id as string
    server.clock.advanceSeconds(172_800 - 1)
    expect((await dave.client.organization.getInvitation({ query: { id: againId } })).data).toMatchObject({
      id: againId,
      status: 'pending',
    })
    server.clock.advanceSeconds(2)
    expectError(await dave.client.organization.getInvitation({ query: { id: againId } }), 400, 'INVITATION_NOT_FOUND')
    expectError(await dave.client.organization.acceptInvitation({ invitationId: againId }), 400, 'INVITATION_NOT_FOUND')
    expectError(await dave.client.organization.rejectInvitation({ invitationId: againId }), 400, 'INVITATION_NOT_FOUND')
    expect(await server.gatehouse.ctx.db.select({ n: count() }).from(member).where(eq(member.userId, dave.id))).toEqual([{ n: 0 }])

    expectError(
      await carol.client.organization.inviteMember({ email: dave.email, role: 'member' }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION',
    )
    expectError(
      await bob.client.organization.inviteMember({ email: dave.email, role: 'owner' }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE',
      'You are not allowed to invite a user with this role',
    )
    expectError(
      await bob.client.organization.inviteMember({ email: dave.email, role: 'wizard' as 'member' }),
      400,
      'ROLE_NOT_FOUND',
      'Role not found: wizard',
    )
    expectError(await bob.client.organization.inviteMember({ email: 'not-an-email', role: 'member' }), 400, 'INVALID_EMAIL')

    const third = await bob.client.organization.inviteMember({ email: dave.email, role: 'member' })
    const thirdId = third.data?.id as string
    expectError(
      await carol.client.organization.cancelInvitation({ invitationId: thirdId }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION',
    )
    const canceled = await alice.client.organization.cancelInvitation({ invitationId: thirdId })
    expect(canceled.data).toMatchObject({ id: thirdId, status: 'canceled' })
    expectError(await dave.client.organization.acceptInvitation({ invitationId: thirdId }), 400, 'INVITATION_NOT_FOUND')

    // The inviter leaves: the invitation can no longer be read or accepted.
    const fourth = await bob.client.organization.inviteMember({ email: dave.email, role: 'member' })
    await bob.client.organization.leave({ organizationId: org.id })
    const fourthId = fourth.data?.id as string
    expectError(
      await dave.client.organization.getInvitation({ query: { id: fourthId } }),
      400,
      'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION',
      'Inviter is no longer a member of the organization',
    )
    expectError(
      await dave.client.organization.acceptInvitation({ invitationId: fourthId }),
      400,
      'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION',
    )

    const all = await alice.client.organization.listInvitations({ query: { organizationId: org.id } })
    expect(all.data?.map((i) => i.status).sort()).toEqual(['accepted', 'accepted', 'canceled', 'pending', 'pending', 'rejected'])
    const types = await auditTypes(org.id)
    expect(types).toContain('invitation.rejected')
    expect(types).toContain('invitation.canceled')
    const loner = await person()
    expectError(await loner.client.organization.listInvitations(), 400, 'ORGANIZATION_ID_IS_REQUIRED', 'Organization ID is required')
  })

  it('limits pending invitations and can cancel the previous one on re-invite', async () => {
    const limited = await startTestServer({ config: { organization: { invitationLimit: 2, cancelPendingInvitationsOnReInvite: true } } })
    try {
      const alice = await person(limited)
      const org = await createOrg(alice)
      const first = await alice.client.organization.inviteMember({ email: 'one@example.com', role: 'member' })
      // Lists come in creation order; a new millisecond makes that order one both engines agree on
      // (PostgreSQL has no insertion order to break a tie within one).
      limited.clock.advance(1)
      const replaced = await alice.client.organization.inviteMember({ email: 'one@example.com', role: 'admin' })
      expect(replaced.data?.id).not.toBe(first.data?.id)
      limited.clock.advance(1)
      await alice.client.organization.inviteMember({ email: 'two@example.com', role: 'member' })
      expectError(
        await alice.client.organization.inviteMember({ email: 'three@example.com', role: 'member' }),
        403,
        'INVITATION_LIMIT_REACHED',
      )
      const all = await alice.client.organization.listInvitations({ query: { organizationId: org.id } })
      expect(all.data?.map((i) => [i.email, i.role, i.status])).toEqual([
        ['one@example.com', 'member', 'canceled'],
        ['one@example.com', 'admin', 'pending'],
        ['two@example.com', 'member', 'pending'],
      ])
    } finally {
      await limited.close()
    }
  })
})

describe('teams', () => {
  it('creates, lists, renames and removes teams; the last team stays', async () => {
    const alice = await person()
    const bob = await person()
    const carol = await person()
    const org = await createOrg(alice)
    await join(alice, bob, org.id, 'admin')
    await join(alice, carol, org.id, 'member')
    const defaultTeamId = (org.members[0] as { teamId?: string }).teamId as string

    // Lists come in creation order; a new millisecond makes that order one both engines agree on
    // (PostgreSQL has no insertion order to break a tie within one).
    server.clock.advance(1)
    const created = await bob.client.organization.createTeam({ name: 'Platform' })
    expect(created.data).toMatchObject({ name: 'Platform', organizationId: org.id })
    expectError(
      await carol.client.organization.createTeam({ name: 'Rogue' }),
      403,
      'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION',
    )
    const empty = await bob.http.post<{ code: string }>('/organization/create-team', { name: '' })
    expect([empty.status, empty.body]).toEqual([
      400,
      { code: 'VALIDATION_ERROR', message: '[body.name] Too small: expected string to have >=1 characters' },
    ])

    const teams = await carol.client.organization.listTeams()
    expect(teams.data?.map((t) => t.name)).toEqual(['Acme', 'Platform'])
    const teamId = created.data?.id as string
    const renamed = await bob.client.organization.updateTeam({ teamId, data: { name: 'Infra' } })
    expect(renamed.data).toMatchObject({ id: teamId, name: 'Infra' })
    expectError(await carol.client.organization.updateTeam({ teamId, data: { name: 'x' } }), 403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM')
    const blank = await bob.http.post<{ code: string }>('/organization/update-team', { teamId, data: { name: '' } })
    expect([blank.status, blank.body]).toEqual([
      400,
      { code: 'VALIDATION_ERROR', message: '[body.data.name] Too small: expected string to have >=1 characters' },
    ])

    // An invitation into a team puts the new member in it.
    const dave = await person()
    const inv = await bob.client.organization.inviteMember({ email: dave.email, role: 'member', teamId })
    expect(inv.data).toMatchObject({ teamId })
    const accepted = await dave.client.organization.acceptInvitation({ invitationId: inv.data?.id as string })
    expect((accepted.data?.member as { teamId?: string } | undefined)?.teamId).toBe(teamId)
    expectError(
      await bob.client.organization.inviteMember({ email: 'x@example.com', role: 'member', teamId: 'nope' }),
      400,
      'TEAM_NOT_FOUND',
    )

    expectError(await carol.client.organization.removeTeam({ teamId }), 403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION')
    expectError(await alice.client.organization.removeTeam({ teamId: defaultTeamId }), 403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM')
    const removed = await bob.client.organization.removeTeam({ teamId: defaultTeamId })
    expect(removed.data).toEqual({ message: 'Team removed successfully.' })
    expectError(await alice.client.organization.removeTeam({ teamId }), 400, 'UNABLE_TO_REMOVE_LAST_TEAM', 'Unable to remove last team')
    expectError(await alice.client.organization.removeTeam({ teamId: defaultTeamId }), 400, 'TEAM_NOT_FOUND')
    const members = await alice.client.organization.listMembers()
    expect(members.data?.members.find((m) => m.userId === dave.id)).toMatchObject({ teamId })
    expect(members.data?.members.find((m) => m.userId === alice.id)).toMatchObject({ teamId: null })
    const types = await auditTypes(org.id)
    for (const t of ['team.created', 'team.updated', 'team.removed']) expect(types).toContain(t)
  })

  it('honours maximumTeams and allowRemovingAllTeams', async () => {
    const custom = await startTestServer({ config: { organization: { teams: { maximumTeams: 2, allowRemovingAllTeams: true } } } })
    try {
      const alice = await person(custom)
      const bob = await person(custom)
      const org = await createOrg(alice)
      await join(alice, bob, org.id, 'admin')
      const second = await alice.client.organization.createTeam({ name: 'Two' })
      expect(second.error).toBeNull()
      expectError(await alice.client.organization.createTeam({ name: 'Three' }), 400, 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS')
      const teams = (await bob.client.organization.listTeams()).data
      expect(teams?.map((t) => t.name).sort()).toEqual(['Acme', 'Two'])
      for (const t of teams ?? []) {
        expect((await bob.client.organization.removeTeam({ teamId: t.id })).error).toBeNull()
      }
      expect((await bob.client.organization.listTeams()).data).toEqual([])
    } finally {
      await custom.close()
    }
  })

  it('team endpoints answer 404 when teams are disabled', async () => {
    const noTeams = await startTestServer({ config: { organization: { teams: { enabled: false } } } })
    try {
      const alice = await person(noTeams)
      const org = await createOrg(alice)
      expect((org.members[0] as { teamId?: string | null }).teamId).toBeNull()
      const createTeam = await alice.http.post('/organization/create-team', { name: 'T' })
      expect([createTeam.status, createTeam.body]).toEqual([404, { code: 'NOT_FOUND', message: 'Not Found' }])
      const listTeams = await alice.http.get('/organization/list-teams')
      expect([listTeams.status, listTeams.body]).toEqual([404, { code: 'NOT_FOUND', message: 'Not Found' }])
      const full = await alice.client.organization.getFullOrganization()
      expect(full.data?.teams).toBeNull()
      // As if the endpoints did not exist: no 401 for an anonymous caller, no 405 for another method.
      const anonymous = await new HttpClient(noTeams.base).post('/organization/add-team-member', { teamId: 't', userId: 'u' })
      expect([anonymous.status, anonymous.body]).toEqual([404, { code: 'NOT_FOUND', message: 'Not Found' }])
      const wrongMethod = await alice.http.get('/organization/create-team')
      expect([wrongMethod.status, wrongMethod.body]).toEqual([404, { code: 'NOT_FOUND', message: 'Not Found' }])
    } finally {
      await noTeams.close()
    }
  })
})

describe('custom roles', () => {
  it('grants the configured permissions to a custom role', async () => {
    const custom = await startTestServer({ config: { organization: { roles: { billing: { invitation: ['create'] } } } } })
    try {
      const alice = await person(custom)
      const bob = await person(custom)
      const org = await createOrg(alice)
      const inv = await alice.client.organization.inviteMember({ email: bob.email, role: 'billing' as 'member' })
      await bob.client.organization.acceptInvitation({ invitationId: inv.data?.id as string })
      expect((await bob.client.organization.hasPermission({ permissions: { invitation: ['create'] } })).data?.success).toBe(true)
      expect((await bob.client.organization.hasPermission({ permissions: { invitation: ['cancel'] } })).data?.success).toBe(false)
      const byBilling = await bob.client.organization.inviteMember({ email: 'new@example.com', role: 'member', organizationId: org.id })
      expect(byBilling.error).toBeNull()
      expectError(await bob.client.organization.createTeam({ name: 'T' }), 403, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION')
    } finally {
      await custom.close()
    }
  })
})

describe('cross-tenant isolation', () => {
  it('a member of organization A cannot read or change organization B', async () => {
    const alice = await person()
    const carol = await person()
    const erin = await person()
    const orgA = await createOrg(alice)
    const orgB = await createOrg(carol)
    // Lists come in creation order; a new millisecond makes that order one both engines agree on
    // (PostgreSQL has no insertion order to break a tie within one).
    server.clock.advance(1)
    const bTeam = await carol.client.organization.createTeam({ name: 'B team' })
    const bTeamId = bTeam.data?.id as string
    server.clock.advance(1)
    const erinInB = await join(carol, erin, orgB.id, 'member')
    const bInvite = await carol.client.organization.inviteMember({ email: 'someone@example.com', role: 'member' })
    const bInviteId = bInvite.data?.id as string
    expect(await activeOrgOf(alice)).toBe(orgA.id)
    const a = alice.client.organization

    expectError(await a.getFullOrganization({ query: { organizationId: orgB.id } }), 403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
    expectError(await a.getFullOrganization({ query: { organizationSlug: orgB.slug } }), 403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
    expectError(await a.listMembers({ query: { organizationId: orgB.id } }), 403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    expectError(await a.listInvitations({ query: { organizationId: orgB.id } }), 403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    expectError(await a.listTeams({ query: { organizationId: orgB.id } }), 403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    expectError(await a.getActiveMemberRole({ query: { organizationId: orgB.id } }), 403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION')
    expectError(
      await a.hasPermission({ organizationId: orgB.id, permissions: { member: ['delete'] } }),
      403,
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    )

    // changes addressed at B, explicitly or through B's object ids while A is active
    expectError(
      await a.inviteMember({ email: 'x@example.com', role: 'member', organizationId: orgB.id }),
      403,
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    )
    expectError(await a.cancelInvitation({ invitationId: bInviteId }), 403, 'YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION')
    expectError(await a.removeMember({ memberIdOrEmail: erinInB }), 403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER')
    expectError(
      await a.removeMember({ memberIdOrEmail: erinInB, organizationId: orgB.id }),
      403,
      'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    )
    expectError(await a.removeMember({ memberIdOrEmail: erin.email }), 400, 'MEMBER_NOT_FOUND')
    expectError(await a.updateMemberRole({ memberId: erinInB, role: 'admin' }), 403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER')
    expectError(await a.updateTeam({ teamId: bTeamId, data: { name: 'pwned' } }), 403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM')
    expectError(await a.removeTeam({ teamId: bTeamId }), 403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM')
    expectError(await a.createTeam({ name: 'intruder', organizationId: orgB.id }), 403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
    expectError(await a.getInvitation({ query: { id: bInviteId } }), 403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION')
    expectError(await a.leave({ organizationId: orgB.id }), 400, 'MEMBER_NOT_FOUND')

    // nothing in B changed
    const full = await carol.client.organization.getFullOrganization()
    expect(full.data?.members.map((m) => [m.userId, m.role])).toEqual([
      [carol.id, 'owner'],
      [erin.id, 'member'],
    ])
    expect(full.data?.teams?.map((t) => t.name)).toEqual(['Acme', 'B team'])
    expect(full.data?.invitations.find((i) => i.id === bInviteId)?.status).toBe('pending')
  })
})

describe('membership limit under concurrency', () => {
  it('20 parallel accepts one seat below the limit admit exactly one', async () => {
    const limited = await startTestServer({ config: { organization: { membershipLimit: 3 } } })
    try {
      const alice = await person(limited)
      const bob = await person(limited)
      const org = await createOrg(alice)
      await join(alice, bob, org.id)
      const invitees = await Promise.all(Array.from({ length: 20 }, () => person(limited, 'racer')))
      const invitations: string[] = []
      for (const p of invitees) {
        const inv = await alice.client.organization.inviteMember({ email: p.email, role: 'member' })
        expect(inv.error).toBeNull()
        invitations.push(inv.data?.id as string)
      }
      const results = await Promise.all(
        invitees.map((p, i) => p.http.post<{ code?: string }>('/organization/accept-invitation', { invitationId: invitations[i] })),
      )
      const ok = results.filter((r) => r.status === 200)
      const refused = results.filter((r) => r.status === 403)
      expect(ok).toHaveLength(1)
      expect(refused).toHaveLength(19)
      for (const r of refused) {
        expect(r.body).toEqual({ code: 'ORGANIZATION_MEMBERSHIP_LIMIT_REACHED', message: 'Organization membership limit reached' })
      }
      const rows = await limited.gatehouse.ctx.db.select().from(member).where(eq(member.organizationId, org.id))
      expect(rows).toHaveLength(3)
      const pending = await limited.gatehouse.ctx.db
        .select()
        .from(member)
        .where(and(eq(member.organizationId, org.id), eq(member.role, 'member')))
      expect(pending).toHaveLength(2)
    } finally {
      await limited.close()
    }
  })
})
