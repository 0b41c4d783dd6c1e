/** The one group-name rule (server/features/groups/names.ts) every face reads. */
import { describe, expect, it } from 'vitest'
import { configSchema } from '../../../server/config-schema.js'
import { groupNames, groupsRule } from '../../../server/features/groups/names.js'

const sources = {
  role: 'user,ldap-reader',
  memberships: [
    { slug: 'zeta', role: 'member' },
    { slug: 'acme', role: 'admin, owner' },
  ],
  teams: [
    { slug: 'zeta', teamName: 'Ops' },
    { slug: 'acme', teamName: 'Developers' },
    { slug: 'acme', teamName: 'Admins' },
  ],
}
const all = { roles: true, organizations: true, memberRoles: true, teams: true }

describe('group names', () => {
  it('default: roles, then each organization with its member roles (by slug), then teams (by slug, name)', () => {
    expect(groupNames(sources, groupsRule(configSchema.parse({})))).toEqual([
      'user',
      'ldap-reader',
      'acme',
      'acme:admin',
      'acme:owner',
      'zeta',
      'zeta:member',
      'acme/Admins',
      'acme/Developers',
      'zeta/Ops',
    ])
  })
  it('each part can be left out', () => {
    expect(groupNames(sources, { ...all, roles: false, memberRoles: false, teams: false })).toEqual(['acme', 'zeta'])
    expect(groupNames(sources, { ...all, organizations: false, teams: false })).toEqual([
      'user',
      'ldap-reader',
      'acme:admin',
      'acme:owner',
      'zeta:member',
    ])
    expect(groupNames({ role: null, memberships: [], teams: [] }, all)).toEqual([])
  })
  it('never lists a name twice', () => {
    expect(groupNames({ role: 'user,user', memberships: [{ slug: 'a', role: 'member,member' }], teams: [] }, all)).toEqual([
      'user',
      'a',
      'a:member',
    ])
  })
  it('the deprecated oidcProvider.groups applies as groups.* (userRole → roles, roles → memberRoles)', () => {
    const config = configSchema.parse({ oidcProvider: { groups: { userRole: false, roles: false } } })
    expect(groupsRule(config)).toEqual({ roles: false, organizations: true, memberRoles: false, teams: true })
    expect(groupsRule(configSchema.parse({ groups: { teams: false } }))).toEqual({ ...all, teams: false })
  })
})
