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
 * A team's part of a group name: its name in the slug alphabet (lower-case letters, digits, `-`),
 * so `Release Ops` is `release-ops` and a team called `a;admin` or `x,admin` is `a-admin` / `x-admin`:
 * no separator a consumer splits a group list on (`,` `;` space) can ever go out. Accents are
 * dropped (`Équipe` → `equipe`); null when nothing is left (a name of only punctuation or script
 * outside a–z), and such a team is then no group.
 */
export function teamSlug(name: string): string | null {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return slug || null
}

/**
 * The one spelling of a team's group name, the same on every face: `acme/release-ops`; null: no
 * group (teamSlug). tests/unit/one-copy.test.ts fails on a second copy in server/.
 */
export function teamGroupName(organizationSlug: string, teamName: string): string | null {
  const team = teamSlug(teamName)
  return team ? `${organizationSlug}/${team}` : null
}

/**
 * A group name as a rule or an SP's allowed groups write it, in the form the faces send: the team
 * part slugged, so a rule written with a team's display name before team groups were slugs
 * (`acme/Release Ops`) keeps matching `acme/release-ops` (the start-up check names it once).
 */
export function canonicalGroupName(name: string): string {
  const slash = name.indexOf('/')
  if (slash < 0) return name
  return teamGroupName(name.slice(0, slash), name.slice(slash + 1)) ?? name
}

/** Whether a person holding `held` group names is in one of `allowed` (as an SP or a rule writes them); none listed: everyone. */
export function inAllowedGroups(allowed: readonly string[], held: readonly string[]): boolean {
  return allowed.length === 0 || allowed.some((name) => held.includes(canonicalGroupName(name)))
}

/** The organization slug a group name names (`acme`, `acme:owner`, `acme/ops` → `acme`); null for a role (`admin`). */
export function organizationSlugOf(name: string, roles: readonly string[]): string | null {
  const end = name.search(/[:/]/)
  if (end >= 0) return name.slice(0, end)
  return roles.some((role) => role.toLowerCase() === name.toLowerCase()) ? null : name
}

/**
 * A person's group names, in a stable order: roles (as stored), then per organization (by slug)
 * the slug and its member roles, then teams (by group name). No duplicates.
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
    const teams = sources.teams.flatMap((t) => teamGroupName(t.slug, t.teamName) ?? []).sort()
    names.push(...teams)
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
