import type { GatehouseConfig } from '../../config/schema.js'
import { isAdministrator } from '../../core/access-control.js'
import type { AuthContext } from '../../core/context.js'
import type { NamedGroup } from '../../feature.js'
import { featuresWith } from '../../features-of.js'
import type { Logger } from '../../log.js'
import { orgError } from './errors.js'
import type { OrgActor } from './shared.js'
import { findOrganizationsBySlugs, listOrganizationSlugs } from './store.js'

/**
 * The one rule for organization slugs (issue 37 §0). A slug is a group name: forward auth sends it
 * in `Remote-Groups` beside the user's roles, the OIDC provider in the `groups` claim. So it is
 * lower-case letters, digits and hyphens only (no `,` `:` `/` or space that a group list or a
 * prefixed group could be forged with, no case that an app comparing case-insensitively would fold),
 * and never the name of a role: otherwise anyone allowed to create an organization could create
 * `admin` and be sent to every app as a member of the group `admin`. Create, update and check-slug
 * (HTTP and panel alike) ask here; a role declared with an organization's slug is a configuration
 * error (configProblems), and slugs stored before this rule are reported (warnInvalidSlugs).
 */
export const SLUG_PATTERN = /^[a-z0-9-]+$/

const BUILT_IN_ROLES = ['admin', 'user']

/** Every role name: the built-in `admin` and `user`, the declared `admin.roles`, and those the config names. */
export function roleNames(config: GatehouseConfig): string[] {
  const admin = config.admin
  return [...new Set([...BUILT_IN_ROLES, ...Object.keys(admin.roles), ...admin.adminRoles, admin.defaultRole])]
}

/** Why `slug` is not allowed (the error code), or null. Roles compare case-insensitively. */
export function slugProblem(
  config: GatehouseConfig,
  slug: string,
): 'INVALID_ORGANIZATION_SLUG' | 'ORGANIZATION_SLUG_IS_A_ROLE_NAME' | null {
  if (!SLUG_PATTERN.test(slug)) return 'INVALID_ORGANIZATION_SLUG'
  if (roleNames(config).some((role) => role.toLowerCase() === slug)) return 'ORGANIZATION_SLUG_IS_A_ROLE_NAME'
  return null
}

/**
 * Refuses a slug the rule does not allow (400, on the `slug` field), and a reserved one (403) unless
 * an administrator (or the panel, the operator) asks: a slug the configuration names as a group is
 * kept for the administrator to create, since whoever creates it passes the rules naming it.
 */
export async function assertSlugAllowed(ctx: AuthContext, slug: string, actor: OrgActor): Promise<void> {
  const problem = slugProblem(ctx.config(), slug)
  if (problem) throw orgError(400, problem)
  if (
    actor.kind === 'user' &&
    !isAdministrator(ctx.config(), { userId: actor.user.id, role: actor.user.role }) &&
    (await reservedSlugs(ctx)).has(slug)
  )
    throw orgError(403, 'ORGANIZATION_SLUG_RESERVED')
}

/**
 * The organization a group name names: `acme`, `acme:owner` and `acme/ops` name `acme`; a role's
 * name (`admin`, `support`) names none. Roles compare case-insensitively, as slugProblem does.
 */
export function organizationSlugOf(name: string, config: GatehouseConfig): string | null {
  const end = name.search(/[:/]/)
  if (end >= 0) return name.slice(0, end)
  const lower = name.toLowerCase()
  return roleNames(config).some((role) => role.toLowerCase() === lower) ? null : name
}

/** Every group name the features' rules require (forward-auth rules, SAML apps' allowed groups), with where. */
export async function namedGroups(ctx: AuthContext): Promise<NamedGroup[]> {
  const named: NamedGroup[] = []
  for (const feature of featuresWith(ctx, 'namedGroups')) named.push(...(await feature.namedGroups(ctx)))
  return named
}

/** The organization slugs the configuration names as groups: only an administrator creates these. */
export async function reservedSlugs(ctx: AuthContext): Promise<Set<string>> {
  const config = ctx.config()
  const slugs = new Set<string>()
  for (const { name } of await namedGroups(ctx)) {
    const slug = organizationSlugOf(name, config)
    if (slug) slugs.add(slug)
  }
  return slugs
}

/** One line for an organization whose stored slug breaks the rule, with the way to rename it; null when it does not. */
export function invalidSlugNotice(config: GatehouseConfig, org: { id: string; name: string; slug: string }): string | null {
  const problem = slugProblem(config, org.slug)
  if (!problem) return null
  const why =
    problem === 'INVALID_ORGANIZATION_SLUG'
      ? 'may contain only lower-case letters, digits and hyphens'
      : 'is the name of a role, so its members would be sent as members of that group'
  return `organization "${org.name}" (${org.id}) has the slug "${org.slug}", which ${why}: rename it in the panel (Organizations → ${org.name} → Slug) or with POST /organization/update {"organizationId":"${org.id}","data":{"slug":"…"}}`
}

/** At start-up: one warning line per stored slug that breaks the rule. */
export async function warnInvalidSlugs(ctx: AuthContext, logger: Logger): Promise<number> {
  const config = ctx.config()
  let found = 0
  for (const org of await listOrganizationSlugs(ctx)) {
    const notice = invalidSlugNotice(config, org)
    if (!notice) continue
    logger.warn(notice)
    found++
  }
  return found
}

/**
 * The configuration's problems with the stored organizations: a role declared in `admin.roles`
 * whose name an organization holds as its slug, naming both. The built-in `admin` and `user` are
 * left to warnInvalidSlugs: an organization holding one of them predates this rule, and refusing to
 * start would leave no panel to rename it in.
 */
export async function roleSlugClashes(ctx: AuthContext, config: GatehouseConfig): Promise<Array<{ path: string; message: string }>> {
  const fields = new Map<string, string>()
  for (const role of Object.keys(config.admin.roles)) {
    if (!BUILT_IN_ROLES.includes(role.toLowerCase())) fields.set(role.toLowerCase(), `admin.roles.${role}`)
  }
  if (fields.size === 0) return []
  const clashes = await findOrganizationsBySlugs(ctx, [...fields.keys()])
  return clashes.map((org) => {
    const role = org.slug.toLowerCase()
    return {
      path: fields.get(role) ?? 'admin.roles',
      message: `the role "${role}" is the slug of the organization "${org.name}" (${org.id}): rename the organization's slug (Organizations → ${org.name} → Slug) or choose another role name`,
    }
  })
}
