import { parseRoleList } from '../../core/access-control.js'
import type { AuthContext } from '../../core/context.js'
import type { GatehouseConfig } from '../../config/schema.js'
import { listMembershipsOfUser, listTeamMembershipsOfUser } from '../organization/store.js'
import type { GroupsConfig } from './config.js'

/** What the group names of one person are made of: their roles, memberships and teams. */
export interface GroupSources {
  role: string | null
  memberships: ReadonlyArray<{ slug: string; role: string }>
  teams: ReadonlyArray<{ slug: string; teamName: string }>
}

/**
 * The effective rule: `groups.*`, or the deprecated alias `oidcProvider.groups` where it is still
 * set (its `roles` meant member roles and its `userRole` the Gatehouse role, without the old
 * `gatehouse:` prefix, which the slug rule makes unnecessary).
 */
export function groupsRule(config: GatehouseConfig): GroupsConfig {
  const alias = config.oidcProvider.groups
  if (!alias) return config.groups
  return {
    roles: alias.userRole ?? config.groups.roles,
    organizations: alias.organizations ?? config.groups.organizations,
    memberRoles: alias.roles ?? config.groups.memberRoles,
    teams: alias.teams ?? config.groups.teams,
  }
}

/**
 * A person's group names, in a stable order: roles (as stored), then per organization (by slug)
 * the slug and its member roles, then teams (by slug, then name). No duplicates.
 */
export function groupNames(sources: GroupSources, rule: GroupsConfig): string[] {
  const names: string[] = []
  if (rule.roles) names.push(...parseRoleList(sources.role))
  if (rule.organizations || rule.memberRoles) {
    const memberships = [...sources.memberships].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
    for (const m of memberships) {
      if (rule.organizations) names.push(m.slug)
      if (rule.memberRoles) for (const role of parseRoleList(m.role)) names.push(`${m.slug}:${role}`)
    }
  }
  if (rule.teams) {
    const teams = [...sources.teams].sort((a, b) => (a.slug === b.slug ? (a.teamName < b.teamName ? -1 : 1) : a.slug < b.slug ? -1 : 1))
    for (const t of teams) names.push(`${t.slug}/${t.teamName}`)
  }
  return [...new Set(names)]
}

/** Reads what a person's group names are made of (two queries; none when the rule needs neither). */
export async function groupSourcesOf(
  ctx: AuthContext,
  user: { id: string; role: string | null },
  rule: GroupsConfig,
): Promise<GroupSources> {
  const [memberships, teams] = await Promise.all([
    rule.organizations || rule.memberRoles ? listMembershipsOfUser(ctx, user.id) : [],
    rule.teams ? listTeamMembershipsOfUser(ctx, user.id) : [],
  ])
  return { role: user.role, memberships, teams }
}

/** The one answer to "which groups is this person in", for every face (OIDC, forward auth, LDAP, SAML). */
export async function groupNamesOf(ctx: AuthContext, user: { id: string; role: string | null }): Promise<string[]> {
  const rule = groupsRule(ctx.config())
  return groupNames(await groupSourcesOf(ctx, user, rule), rule)
}
