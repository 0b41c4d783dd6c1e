import type { AuthContext } from '../../core/context.js'
import { findOrganizationsBySlugs, listTeamsOf } from '../organization/store.js'
import { namedGroups, organizationSlugOf } from '../organization/slugs.js'
import type { GroupsConfig } from './config.js'
import { canonicalGroupName, groupsRule, teamSlug } from './names.js'

/** A group name a rule requires that the directory cannot satisfy as written, and why (for the start-up log and the panel). */
export interface GroupNameProblem {
  /** Where the name is written (`forwardAuth.rules[0].subject.teams`, `SAML app "Wiki"`). */
  where: string
  name: string
  problem: string
}

/**
 * The group names the features' rules require that name an organization or a team nobody has
 * created yet (the organization is reserved: only an administrator can create it), or a team by its
 * display name (`acme/Release Ops`, which still matches `acme/release-ops`). Roles are not checked
 * here (the config schema knows them).
 */
export async function groupNameProblems(ctx: AuthContext): Promise<GroupNameProblem[]> {
  const config = ctx.config()
  const named = (await namedGroups(ctx)).map((entry) => ({ ...entry, slug: organizationSlugOf(entry.name, config) }))
  const slugs = [...new Set(named.flatMap((entry) => entry.slug ?? []))]
  const organizations = new Map((await findOrganizationsBySlugs(ctx, slugs)).map((org) => [org.slug, org]))
  const teamsBySlug = new Map<string, Set<string>>()
  const teamsOf = async (slug: string, organizationId: string): Promise<Set<string>> => {
    let teams = teamsBySlug.get(slug)
    if (!teams) {
      teams = new Set((await listTeamsOf(ctx, organizationId)).flatMap((team) => teamSlug(team.name) ?? []))
      teamsBySlug.set(slug, teams)
    }
    return teams
  }
  const problems: GroupNameProblem[] = []
  for (const { where, name, slug } of named) {
    if (!slug) continue
    const canonical = canonicalGroupName(name)
    const organization = organizations.get(slug)
    if (!organization) {
      problems.push({
        where,
        name,
        problem: `no organization "${slug}" exists yet; the slug is reserved, so only an administrator can create it (Organizations → New)`,
      })
      continue
    }
    const slash = canonical.indexOf('/')
    if (slash >= 0 && !(await teamsOf(slug, organization.id)).has(canonical.slice(slash + 1))) {
      problems.push({ where, name, problem: `the organization "${slug}" has no team "${canonical.slice(slash + 1)}"` })
    } else if (canonical !== name) {
      problems.push({ where, name, problem: `names a team by its display name; team groups are now "${canonical}": write that` })
    }
  }
  return problems
}

/** One start-up line for a problem. */
export const groupNameProblemLine = (p: GroupNameProblem): string => `groups: ${p.where} requires "${p.name}": ${p.problem}`

/** Which switch of `groups.*` makes a name a group: `acme/ops` a team, `acme:owner` a member role, `admin` a role, `acme` an organization. */
function switchOf(name: string, slug: string | null): keyof GroupsConfig {
  if (name.includes('/')) return 'teams'
  if (name.includes(':')) return 'memberRoles'
  return slug === null ? 'roles' : 'organizations'
}

const KIND: Record<keyof GroupsConfig, string> = {
  roles: 'role',
  organizations: 'organization',
  memberRoles: 'member-role',
  teams: 'team',
}

/**
 * What a change of the `groups.*` switches would take away before it is made (issue 50 §5): every
 * name a rule matches against the person's group names (SAML apps' allowed groups) whose kind the
 * change switches off, so nobody would hold it any more and that rule would let no one in.
 */
export async function groupRuleImpact(ctx: AuthContext, patch: Partial<GroupsConfig>): Promise<GroupNameProblem[]> {
  const config = ctx.config()
  const now = groupsRule(config)
  const next = { ...now, ...patch }
  return (await namedGroups(ctx)).flatMap(({ where, name, byGroupName }) => {
    if (!byGroupName) return []
    const kind = switchOf(name, organizationSlugOf(name, config))
    if (!now[kind] || next[kind]) return []
    return [{ where, name, problem: `a ${KIND[kind]} group: with ${KIND[kind]} groups off nobody holds it, so it lets no one in` }]
  })
}
