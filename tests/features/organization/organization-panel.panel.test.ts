import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiURLOf } from '../../../server/panel/index.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { signUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * The organization feature's panel operations (features/organization/panel.ts) through the panel
 * service, as the renderer calls them: answers checked against the contract, and failures that
 * name the form field they concern (PanelFailure.field) where the catalogue gives one.
 */

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer({ config: { organization: { teams: { maximumTeams: 2 } } } })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: apiURLOf(server.gatehouse),
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => server?.close())

async function data<T = Record<string, unknown>>(name: string, input: unknown = {}): Promise<T> {
  const result = await panel.dispatch(name, input)
  if (!result.ok) throw new Error(`${name}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

async function failure(name: string, input: unknown) {
  const result = await panel.dispatch(name, input)
  if (result.ok) throw new Error(`${name} succeeded`)
  return result.error
}

interface OrgDetail {
  organization: { id: string; slug: string; members: number }
  members: Array<{ id: string; userId: string; role: string; user: { email: string } | null }>
  teams: Array<{ id: string; name: string }>
  invitations: Array<{ id: string; email: string; role: string | null; status: string }>
}

describe('organization panel operations', () => {
  it('create, read, teams, roles, invitations and removal, with field-named failures', async () => {
    const owner = await signUp(server.base)
    const other = await signUp(server.base)
    const slug = `panel-${Date.now().toString(36)}`

    const created = await data<{ organization: { id: string; slug: string; members: number; metadata: null } }>('orgs.create', {
      name: 'Panel Org',
      slug,
      ownerUserId: owner.user.id,
    })
    expect(created.organization).toMatchObject({ slug, members: 1, metadata: null })
    const orgId = created.organization.id

    // A taken slug is the slug field's error; an unknown owner is no field of the form.
    expect(await failure('orgs.create', { name: 'Again', slug, ownerUserId: owner.user.id })).toEqual({
      code: 'ORGANIZATION_ALREADY_EXISTS',
      message: 'Organization already exists',
      status: 400,
      field: 'slug',
    })
    expect(await failure('orgs.create', { name: 'Nobody', slug: `${slug}-x`, ownerUserId: 'no-such-user' })).toEqual({
      code: 'MEMBER_NOT_FOUND',
      message: 'Member not found',
      status: 400,
    })

    const listed = await data<{ organizations: Array<{ id: string }>; total: number }>('orgs.list', { search: slug.toUpperCase() })
    expect(listed.organizations.map((o) => o.id)).toEqual([orgId])
    expect(listed.total).toBe(1)

    // The default team exists; one more reaches maximumTeams (2), a third is refused.
    const detail = await data<OrgDetail>('orgs.get', { organizationId: orgId })
    expect(detail.members).toMatchObject([{ userId: owner.user.id, role: 'owner', user: { email: owner.email } }])
    expect(detail.teams.map((t) => t.name)).toEqual(['Panel Org'])
    const { team } = await data<{ team: { id: string; name: string } }>('orgs.createTeam', { organizationId: orgId, name: 'Ops' })
    expect(await failure('orgs.createTeam', { organizationId: orgId, name: 'Third' })).toEqual({
      code: 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS',
      message: 'You have reached the maximum number of teams',
      status: 400,
      field: 'teamName',
    })
    expect(
      (await data<{ team: { name: string } }>('orgs.renameTeam', { organizationId: orgId, teamId: team.id, name: 'Operations' })).team.name,
    ).toBe('Operations')

    // Invitations: unknown role, bad address and an existing member name their fields.
    expect(await failure('orgs.invite', { organizationId: orgId, email: other.email, role: 'wizard' })).toEqual({
      code: 'ROLE_NOT_FOUND',
      message: 'Role not found: wizard',
      status: 400,
      field: 'role',
    })
    expect(await failure('orgs.invite', { organizationId: orgId, email: 'not-an-email', role: 'member' })).toEqual({
      code: 'INVALID_EMAIL',
      message: 'Invalid email',
      status: 400,
      field: 'email',
    })
    expect(await failure('orgs.invite', { organizationId: orgId, email: owner.email, role: 'member' })).toEqual({
      code: 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION',
      message: 'User is already a member of this organization',
      status: 400,
      field: 'email',
    })
    const invited = await data<{ invitation: { id: string; role: string; status: string; teamId: string } }>('orgs.invite', {
      organizationId: orgId,
      email: other.email,
      role: 'admin, member',
      teamId: team.id,
    })
    expect(invited.invitation).toMatchObject({ role: 'admin,member', status: 'pending', teamId: team.id })
    expect(await failure('orgs.invite', { organizationId: orgId, email: other.email, role: 'member' })).toMatchObject({
      code: 'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION',
      field: 'email',
    })
    await data('orgs.invite', { organizationId: orgId, email: other.email, role: 'member', resend: true })
    expect(await data('orgs.cancelInvitation', { organizationId: orgId, invitationId: invited.invitation.id })).toEqual({ success: true })
    expect((await data<OrgDetail>('orgs.get', { organizationId: orgId })).invitations).toMatchObject([
      { email: other.email, status: 'canceled' },
    ])

    // Roles: the last owner cannot be demoted or removed; the user view lists the membership.
    const ownerMember = detail.members[0]?.id as string
    expect(await failure('orgs.updateMemberRole', { organizationId: orgId, memberId: ownerMember, role: 'member' })).toEqual({
      code: 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
      message: 'You cannot leave the organization as the only owner',
      status: 400,
    })
    expect(await failure('orgs.removeMember', { organizationId: orgId, memberId: ownerMember })).toMatchObject({
      code: 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    })
    expect(await data('orgs.updateMemberRole', { organizationId: orgId, memberId: ownerMember, role: 'owner,admin' })).toEqual({
      success: true,
    })
    const user = await data<{ memberships: unknown[] }>('users.get', { userId: owner.user.id })
    expect(user.memberships).toEqual([{ organizationId: orgId, name: 'Panel Org', slug, role: 'owner,admin' }])

    expect(await data('orgs.removeTeam', { organizationId: orgId, teamId: team.id })).toEqual({ success: true })
    expect(await failure('orgs.removeTeam', { organizationId: orgId, teamId: detail.teams[0]?.id })).toMatchObject({
      code: 'UNABLE_TO_REMOVE_LAST_TEAM',
    })
    expect(await failure('orgs.get', { organizationId: 'nope' })).toEqual({
      code: 'ORGANIZATION_NOT_FOUND',
      message: 'Organization not found',
      status: 404,
    })
  })
})
