/** The one group-name rule (server/features/groups/names.ts) every face reads. */
import { describe, expect, it } from 'vitest'
import { configSchema } from '../../../server/config-schema.js'
import {
  canonicalGroupName,
  groupNames,
  groupsRule,
  inAllowedGroups,
  teamGroupName,
  teamSlug,
} from '../../../server/features/groups/names.js'

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
  it('default: roles, then each organization with its member roles (by slug), then teams (by group name)', () => {
    expect(groupNames(sources, groupsRule(configSchema.parse({})))).toEqual([
      'user',
      'ldap-reader',
      'acme',
      'acme:admin',
      'acme:owner',
      'zeta',
      'zeta:member',
      'acme/admins',
      'acme/developers',
      'zeta/ops',
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
  it('a team goes out by the slug of its name: no separator (`,` `;` space), no case, no accent', () => {
    expect(teamSlug('Release  Ops')).toBe('release-ops')
    expect(teamSlug('a;admin')).toBe('a-admin')
    expect(teamSlug('x,admin')).toBe('x-admin')
    expect(teamSlug('  -Équipe Été- ')).toBe('equipe-ete')
    expect(teamSlug('!!!')).toBeNull()
    expect(teamSlug('運用')).toBeNull()
    expect(teamGroupName('acme', 'Release Ops')).toBe('acme/release-ops')
    expect(teamGroupName('acme', '???')).toBeNull()
    const names = groupNames(
      {
        role: 'user',
        memberships: [],
        teams: [
          { slug: 'a', teamName: 'x, y; z' },
          { slug: 'a', teamName: '$$' },
        ],
      },
      all,
    )
    expect(names).toEqual(['user', 'a/x-y-z'])
    for (const name of names) expect(name).toMatch(/^[a-z0-9:/-]+$/)
  })
  it('a rule may still name a team by its display name: it matches the slugged group', () => {
    expect(canonicalGroupName('acme/Release Ops')).toBe('acme/release-ops')
    expect(canonicalGroupName('acme/release-ops')).toBe('acme/release-ops')
    expect(canonicalGroupName('acme:owner')).toBe('acme:owner')
    expect(canonicalGroupName('admin')).toBe('admin')
    expect(inAllowedGroups(['acme/Release Ops'], ['user', 'acme/release-ops'])).toBe(true)
    expect(inAllowedGroups(['acme/Release Ops'], ['user', 'acme'])).toBe(false)
    expect(inAllowedGroups([], [])).toBe(true)
  })
})
