import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findUserById } from '../../../server/core/user-store.js'
import { banUser, setRole, systemActor } from '../../../server/features/admin/index.js'
import { personOf } from '../../../server/features/groups/person.js'
import { HttpClient } from '../../helpers/http.js'
import { joinTeamsNamed, verifiedSignUp } from '../../helpers/members.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'

/**
 * groups/person.ts `personOf`: the one record of who a person is that every face formats from
 * (OIDC claims, SAML attributes, forward auth's headers and rules). Its memberships are kept until
 * the database changes, so a team joined or left is seen at the very next question. Both engines.
 */

const clock = new TestClock()
let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ clock })
}, 60_000)
afterAll(() => server?.close())

async function row(id: string) {
  const found = await findUserById(server.gatehouse.ctx, id)
  if (!found) throw new Error(`no user ${id}`)
  return found
}

describe('personOf', () => {
  it('tells one story: login name, address, verification, roles, organizations, teams and groups', async () => {
    const up = await verifiedSignUp(server, { name: 'Ada Lovelace', username: 'Ada_L' })
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: up.user.id, role: 'admin' }, null)
    const client = new HttpClient(server.base)
    expect((await client.post('/sign-in/email', { email: up.email, password: 'correct horse battery' })).status).toBe(200)
    await joinTeamsNamed(client, up.user.id, { name: 'Acme', slug: 'acme-person' }, ['Release Ops'])

    const person = await personOf(server.gatehouse.ctx, await row(up.user.id))
    expect(person).toMatchObject({
      id: up.user.id,
      // The username in lower case (username/rules.ts loginNameOf), as LDAP's uid and Remote-User.
      loginName: 'ada_l',
      email: up.email,
      name: 'Ada Lovelace',
      verified: true,
      bannedNow: false,
      roles: ['admin'],
      organizations: ['acme-person'],
    })
    // The organization's default team (named as the organization) and the one joined, as slugs.
    expect(person.teams.sort()).toEqual(['acme-person/acme', 'acme-person/release-ops'])
    // groups.* defaults: roles, organizations, member roles and teams.
    expect(person.groups).toEqual(['admin', 'acme-person', 'acme-person:owner', 'acme-person/acme', 'acme-person/release-ops'])
  })

  it('sees a team left, a role changed and a ban at the next question (nothing kept past a write)', async () => {
    const up = await verifiedSignUp(server, { name: 'Bea', username: 'bea_p' })
    const client = new HttpClient(server.base)
    expect((await client.post('/sign-in/email', { email: up.email, password: 'correct horse battery' })).status).toBe(200)
    await joinTeamsNamed(client, up.user.id, { name: 'Beta', slug: 'beta-person' }, ['Ops'])
    const ctx = server.gatehouse.ctx
    expect((await personOf(ctx, await row(up.user.id))).teams.sort()).toEqual(['beta-person/beta', 'beta-person/ops'])
    // Asked again with nothing written: the same answer (kept).
    expect((await personOf(ctx, await row(up.user.id))).teams.sort()).toEqual(['beta-person/beta', 'beta-person/ops'])

    const teams = await client.get<Array<{ id: string; name: string }>>('/organization/list-teams')
    const ops = teams.body.find((t) => t.name === 'Ops')
    if (!ops) throw new Error('no team Ops')
    expect((await client.post('/organization/remove-team-member', { teamId: ops.id, userId: up.user.id })).status).toBe(200)
    expect((await personOf(ctx, await row(up.user.id))).teams).toEqual(['beta-person/beta'])

    await setRole(ctx, systemActor('cli'), { userId: up.user.id, role: 'admin' }, null)
    expect((await personOf(ctx, await row(up.user.id))).roles).toEqual(['admin'])

    await banUser(ctx, systemActor('cli'), { userId: up.user.id, banExpiresIn: 60 }, null)
    expect((await personOf(ctx, await row(up.user.id))).bannedNow).toBe(true)
    clock.advance(61_000)
    expect((await personOf(ctx, await row(up.user.id))).bannedNow).toBe(false)
  })
})
