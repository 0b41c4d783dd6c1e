import { organizationClient } from 'better-auth/client/plugins'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { session as sessionTable, teamMember } from '../../../server/db/schema.js'
import { type CookieJar, type HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 11: teams as the official 1.7 organization client uses them, with values asserted (the
 * differential test compares shapes with better-auth; this one checks what the answers say).
 */
let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ config: { session: { cookieCache: { enabled: true } } } })
})
afterAll(() => server.close())

function officialClient(jar: CookieJar) {
  return official(server, { jar, plugins: [organizationClient({ teams: { enabled: true } })] }).client
}

interface Person {
  id: string
  email: string
  http: HttpClient
  client: ReturnType<typeof officialClient>
}

async function person(): Promise<Person> {
  const signed = await signUp(server.base, { email: uniqueEmail('team') })
  return { id: signed.user.id, email: signed.email, http: signed.client, client: officialClient(signed.client.jar) }
}

let n = 0
async function createOrg(owner: Person) {
  n += 1
  const res = await owner.client.organization.create({ name: `Org ${n}`, slug: `teams-${Date.now().toString(36)}-${n}` })
  if (!res.data) throw new Error(JSON.stringify(res.error))
  return res.data
}

async function join(owner: Person, invitee: Person, organizationId: string) {
  const inv = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member', organizationId })
  const accepted = await invitee.client.organization.acceptInvitation({ invitationId: inv.data?.id as string })
  expect(accepted.error).toBeNull()
}

const activeTeam = async (p: Person, fresh = false) => {
  const res = await p.http.get<{ session: { activeTeamId: string | null } }>(`/get-session${fresh ? '?disableCookieCache=true' : ''}`)
  return res.body.session.activeTeamId
}

describe('teams with the 1.7 organization client', () => {
  it('a new session has activeTeamId null; a created organization makes its default team active, with the creator in it', async () => {
    const alice = await person()
    expect(await activeTeam(alice)).toBeNull()
    const org = await createOrg(alice)
    const teams = await alice.client.organization.listUserTeams()
    expect(teams.data).toHaveLength(1)
    const defaultTeam = teams.data?.[0]
    expect(defaultTeam).toMatchObject({ name: org.name, organizationId: org.id })
    // The cookie cache and the database agree.
    expect(await activeTeam(alice)).toBe(defaultTeam?.id)
    expect(await activeTeam(alice, true)).toBe(defaultTeam?.id)
    const sessions = await alice.http.get<Array<{ activeTeamId: string | null }>>('/list-sessions')
    expect(sessions.body.map((s) => s.activeTeamId)).toEqual([defaultTeam?.id])
    const members = await alice.client.organization.listTeamMembers()
    expect(members.data?.map((m) => m.userId)).toEqual([alice.id])
  })

  it('set-active-team needs membership of the team, re-issues the cookies, and null clears it', async () => {
    const alice = await person()
    await createOrg(alice)
    const second = await alice.client.organization.createTeam({ name: 'Second' })
    const teamId = second.data?.id as string
    expect(second.data).toMatchObject({ name: 'Second' })
    const refused = await alice.client.organization.setActiveTeam({ teamId })
    expect(refused.error).toMatchObject({
      status: 403,
      code: 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
      message: 'User is not a member of the team',
    })
    const added = await alice.client.organization.addTeamMember({ teamId, userId: alice.id })
    expect(added.data).toMatchObject({ teamId, userId: alice.id })
    const again = await alice.client.organization.addTeamMember({ teamId, userId: alice.id })
    expect(again.data?.id).toBe(added.data?.id)
    const set = await alice.http.post<{ id: string }>('/organization/set-active-team', { teamId })
    expect(set.status).toBe(200)
    expect(set.body.id).toBe(teamId)
    expect(set.cookies.some((c) => c.startsWith('better-auth.session_token='))).toBe(true)
    expect(set.cookies.some((c) => c.startsWith('better-auth.session_data='))).toBe(true)
    expect(await activeTeam(alice)).toBe(teamId)
    const cleared = await alice.http.post('/organization/set-active-team', { teamId: null })
    expect(cleared.status).toBe(200)
    expect(cleared.body).toBeNull()
    expect(await activeTeam(alice)).toBeNull()
    expect(await activeTeam(alice, true)).toBeNull()
  })

  it('add, list and remove team members; a plain member may not; the caller must be in the team to list it', async () => {
    const alice = await person()
    const bob = await person()
    const org = await createOrg(alice)
    await join(alice, bob, org.id)
    const team = (await alice.client.organization.createTeam({ name: 'Ops' })).data?.id as string
    expect((await bob.client.organization.addTeamMember({ teamId: team, userId: bob.id, organizationId: org.id })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER',
    })
    expect((await alice.client.organization.addTeamMember({ teamId: team, userId: bob.id })).error).toBeNull()
    expect((await alice.client.organization.listTeamMembers({ query: { teamId: team } })).error).toMatchObject({
      status: 400,
      code: 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
    })
    const listed = await bob.client.organization.listTeamMembers({ query: { teamId: team } })
    expect(listed.data?.map((m) => m.userId)).toEqual([bob.id])
    expect((await bob.client.organization.listUserTeams({ query: { organizationId: org.id } })).data?.map((t) => t.id)).toEqual([team])
    const removed = await alice.client.organization.removeTeamMember({ teamId: team, userId: bob.id })
    expect(removed.data).toEqual({ message: 'Team member removed successfully.' })
    expect((await alice.client.organization.removeTeamMember({ teamId: team, userId: bob.id })).error).toMatchObject({
      status: 400,
      code: 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
    })
    expect((await bob.client.organization.listUserTeams()).data).toEqual([])
  })

  it('a team id of another organization is refused everywhere it is accepted', async () => {
    const alice = await person()
    const mallory = await person()
    await createOrg(alice)
    const foreignOrg = await createOrg(mallory)
    const foreignTeam = (await mallory.client.organization.listUserTeams()).data?.find((t) => t.organizationId === foreignOrg.id)
      ?.id as string
    const notFound = { status: 400, code: 'TEAM_NOT_FOUND', message: 'Team not found' }
    expect((await alice.client.organization.addTeamMember({ teamId: foreignTeam, userId: alice.id })).error).toMatchObject(notFound)
    expect((await alice.client.organization.removeTeamMember({ teamId: foreignTeam, userId: alice.id })).error).toMatchObject(notFound)
    expect((await alice.client.organization.setActiveTeam({ teamId: foreignTeam })).error).toMatchObject(notFound)
    expect((await alice.client.organization.listTeamMembers({ query: { teamId: foreignTeam } })).error).toMatchObject({
      status: 400,
      code: 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
    })
    expect(
      (await alice.client.organization.addTeamMember({ teamId: foreignTeam, userId: mallory.id, organizationId: foreignOrg.id })).error,
    ).toMatchObject({
      status: 400,
      code: 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
    })
    const rows = await server.gatehouse.ctx.db.select().from(teamMember).where(eq(teamMember.teamId, foreignTeam))
    expect(rows.map((r) => r.userId)).toEqual([mallory.id])
  })

  it('removing a member removes their team memberships and clears their active team', async () => {
    const alice = await person()
    const bob = await person()
    const org = await createOrg(alice)
    await join(alice, bob, org.id)
    const team = (await alice.client.organization.createTeam({ name: 'Support' })).data?.id as string
    await alice.client.organization.addTeamMember({ teamId: team, userId: bob.id })
    expect((await bob.http.post('/organization/set-active-team', { teamId: team })).status).toBe(200)
    const removed = await alice.client.organization.removeMember({ memberIdOrEmail: bob.email, organizationId: org.id })
    expect(removed.error).toBeNull()
    expect(await server.gatehouse.ctx.db.select().from(teamMember).where(eq(teamMember.userId, bob.id))).toEqual([])
    const bobSessions = await server.gatehouse.ctx.db.select().from(sessionTable).where(eq(sessionTable.userId, bob.id))
    expect(bobSessions.map((s) => s.activeTeamId)).toEqual([null])
    expect(await activeTeam(bob, true)).toBeNull()
    expect((await bob.client.organization.listUserTeams()).data).toEqual([])
  })
})
