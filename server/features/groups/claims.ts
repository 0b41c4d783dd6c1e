import type { AuthContext } from '../../core/context.js'
import { featuresWith } from '../../features-of.js'
import { knownRoles } from '../admin/access.js'
import { orgRoles } from '../organization/access.js'
import { findOrganizationById, findOrganizationsBySlugs, findTeamById, listTeamsOf } from '../organization/store.js'
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

/** An administrator's change to an organization or one of its teams that may take group names away. */
export interface OrganizationChange {
  organizationId: string
  /** The team changed; without it, the organization itself. */
  teamId?: string
  /** Deleted (the organization with its teams, or the team). */
  remove?: boolean
  /** The organization's new slug. */
  slug?: string
  /** The team's new name. */
  teamName?: string
}

/**
 * What deleting or renaming an organization or a team would take away before it is done (issue 50
 * §5): every name a rule requires (forward-auth rules by membership, SAML apps' allowed groups by
 * group name) that names this organization (its members, roles and teams) or this team, and would
 * name nobody afterwards. A rename that keeps the slug (or the team's slug) takes nothing away.
 */
export async function organizationChangeImpact(ctx: AuthContext, change: OrganizationChange): Promise<GroupNameProblem[]> {
  const organization = await findOrganizationById(ctx, change.organizationId)
  if (!organization) return []
  const config = ctx.config()
  const named = await namedGroups(ctx)
  if (change.teamId) {
    const team = await findTeamById(ctx, change.teamId)
    const before = team && team.organizationId === organization.id ? teamSlug(team.name) : null
    if (!before) return []
    if (!change.remove && (change.teamName === undefined || teamSlug(change.teamName) === before)) return []
    const group = `${organization.slug}/${before}`
    const what = change.remove ? 'deleting the team' : 'renaming the team'
    return named
      .filter(({ name }) => canonicalGroupName(name) === group)
      .map(({ where, name }) => ({ where, name, problem: `${what} takes this name away: nobody will hold it, so it lets no one in` }))
  }
  if (!change.remove && (change.slug === undefined || change.slug === organization.slug)) return []
  const what = change.remove ? 'deleting the organization' : `changing its slug to "${change.slug}"`
  return named
    .filter(({ name }) => organizationSlugOf(name, config) === organization.slug)
    .map(({ where, name }) => ({ where, name, problem: `${what} takes this name away: nobody will hold it, so it lets no one in` }))
}

/** The roles an edit of `admin.roles` removes (a rename removes the old name): known before, unknown after. Built-in roles stay. */
export function removedRoles(before: readonly string[], after: readonly string[]): string[] {
  return before.filter((role) => !after.includes(role))
}

/** What a rule naming a removed role meets, unless the feature says more. */
const ROLE_GONE = 'nobody can be given it any more, so only those who hold it now meet this rule'

/** An edit of the roles, as they would be after it: admin's (`admin.roles`), organizations' member roles (`organization.roles`), or both. */
export interface RoleChange {
  roles?: Readonly<Record<string, unknown>>
  organizationRoles?: Readonly<Record<string, unknown>>
}

/**
 * What an edit of the roles takes away before it is saved (issue 50 §5): every rule that names a
 * role the edit removes (or renames away), by the role (forward-auth rules' `subject.roles`,
 * `ldap.searchRoles`, two-factor's enforcement roles, admin's `adminRoles` and `defaultRole`: each
 * feature's `namedRoles`) or by its group name (SAML apps' allowed groups: a role's group name is
 * the role, a member role's `<org slug>:<role>` in every organization). Nothing when the edit
 * removes no role. The edit's roles are only named here: their definitions are never read.
 */
export async function roleChangeImpact(ctx: AuthContext, change: RoleChange): Promise<GroupNameProblem[]> {
  const config = ctx.config()
  const after = {
    ...config,
    admin: { ...config.admin, roles: (change.roles ?? config.admin.roles) as typeof config.admin.roles },
    organization: {
      ...config.organization,
      roles: (change.organizationRoles ?? config.organization.roles) as typeof config.organization.roles,
    },
  }
  const removed = removedRoles(Object.keys(knownRoles(config)), Object.keys(knownRoles(after)))
  const removedMemberRoles = removedRoles(Object.keys(orgRoles(config)), Object.keys(orgRoles(after)))
  if (removed.length === 0 && removedMemberRoles.length === 0) return []
  const problem = (role: string, effect = ROLE_GONE) => `removing the role "${role}" takes this name away: ${effect}`
  const byRole = featuresWith(ctx, 'namedRoles').flatMap((feature) =>
    feature
      .namedRoles(ctx)
      .filter(({ name }) => removed.includes(name))
      .map(({ where, name, effect }) => ({ where, name, problem: problem(name, effect) })),
  )
  const memberRoleOf = (name: string) => (name.includes('/') ? null : name.slice(name.indexOf(':') + 1) || null)
  const byGroupName = (await namedGroups(ctx)).flatMap(({ where, name }) => {
    if (removed.includes(name)) return [{ where, name, problem: problem(name) }]
    const memberRole = name.includes(':') ? memberRoleOf(name) : null
    if (memberRole && removedMemberRoles.includes(memberRole))
      return [{ where, name, problem: `removing the organization role "${memberRole}" takes this name away: ${ROLE_GONE}` }]
    return []
  })
  return [...byRole, ...byGroupName]
}
