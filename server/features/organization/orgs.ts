import type { AuthContext } from '../../core/context.js'
import { objectChanges, refuseStale } from '../../core/object-revisions.js'
import type { SessionRow } from '../../core/sessions.js'
import { generateId } from '../../crypto/random.js'
import { orgError } from './errors.js'
import { assertSlugAllowed } from './slugs.js'
import type { InvitationRow, MemberRow, OrganizationRow, TeamRow } from './schema.js'
import {
  auditOrg,
  joinTeam,
  moveSession,
  type OrgActor,
  type OrganizationJSON,
  requireMember,
  requirePermission,
  type SessionChange,
  type SignedInOrgActor,
  targetOrganizationId,
  toOrganizationJSON,
} from './shared.js'
import { clearActiveOrganization } from '../../core/sessions.js'
import {
  countMembershipsOfUser,
  deleteOrganizationRow,
  findMembership,
  findOrganizationById,
  findOrganizationBySlug,
  insertMember,
  insertOrganization,
  insertTeam,
  listInvitationsOf,
  listMembershipsOfUser,
  listMembersWithUsers,
  listOrganizationsOfUser,
  listTeamsWithCounts,
  type MemberWithUser,
  searchOrganizationRows,
  type TeamWithCount,
  updateOrganizationRow,
  userExists,
} from './store.js'

export interface CreateOrganizationInput {
  name: string
  slug: string
  logo?: string | null
  metadata?: Record<string, unknown>
  /** The creator when the system acts; ignored for a signed-in user (who is the creator). */
  userId?: string
  keepCurrentActiveOrganization?: boolean
}

export type CreatedOrganization = OrganizationJSON & { members: MemberRow[] }

/**
 * Creates an organization with its creator as `creatorRole` member (and, with teams, a default
 * team named after it that the creator joins). It becomes the creator's active organization
 * unless keepCurrentActiveOrganization.
 */
export async function createOrganization(
  ctx: AuthContext,
  actor: OrgActor,
  input: CreateOrganizationInput,
): Promise<{ organization: CreatedOrganization } & SessionChange> {
  const conf = ctx.config().organization
  const creatorId = actor.kind === 'user' ? actor.user.id : input.userId
  if (!creatorId || !(await userExists(ctx, creatorId))) throw orgError(400, 'MEMBER_NOT_FOUND')
  if (actor.kind === 'user' && !conf.allowUserToCreateOrganization) {
    throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION')
  }
  await assertSlugAllowed(ctx, input.slug, actor)
  const now = new Date(ctx.clock.now())
  return ctx.storage.transaction(async () => {
    if (conf.organizationLimit !== undefined && (await countMembershipsOfUser(ctx, creatorId)) >= conf.organizationLimit) {
      throw orgError(403, 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS')
    }
    if (await findOrganizationBySlug(ctx, input.slug)) throw orgError(400, 'ORGANIZATION_ALREADY_EXISTS')
    const row: OrganizationRow = {
      id: generateId(),
      name: input.name,
      slug: input.slug,
      logo: input.logo ?? null,
      metadata: input.metadata ? JSON.stringify(input.metadata) : null,
      createdAt: now,
    }
    await insertOrganization(ctx, row)
    let defaultTeam: TeamRow | null = null
    if (conf.teams.enabled) {
      // As better-auth 1.7 creates it: never updated yet.
      defaultTeam = { id: generateId(), name: row.name, organizationId: row.id, createdAt: now, updatedAt: null }
      await insertTeam(ctx, defaultTeam)
    }
    const creator: MemberRow = {
      id: generateId(),
      organizationId: row.id,
      userId: creatorId,
      role: conf.creatorRole,
      teamId: defaultTeam?.id ?? null,
      createdAt: now,
    }
    await insertMember(ctx, creator)
    if (defaultTeam) await joinTeam(ctx, defaultTeam.id, creatorId)
    let changed: SessionRow | null = null
    if (actor.kind === 'user' && actor.session && !input.keepCurrentActiveOrganization) {
      // better-auth 1.7: the default team, which the creator joined, becomes the active team.
      changed = await moveSession(ctx, actor.session, {
        activeOrganizationId: row.id,
        ...(defaultTeam ? { activeTeamId: defaultTeam.id } : {}),
      })
    }
    await auditOrg(ctx, actor, {
      type: 'organization.created',
      target: row.id,
      targetUserId: creatorId,
      detail: { slug: row.slug, defaultTeamId: defaultTeam?.id ?? null },
    })
    return { organization: { ...toOrganizationJSON(row), members: [creator] }, session: changed }
  })
}

/** check-slug: `{status:true}` when free. */
export async function checkSlug(ctx: AuthContext, actor: OrgActor, slug: string): Promise<{ status: true }> {
  await assertSlugAllowed(ctx, slug, actor)
  if (await findOrganizationBySlug(ctx, slug)) throw orgError(400, 'ORGANIZATION_SLUG_ALREADY_TAKEN')
  return { status: true }
}

export interface UpdateOrganizationInput {
  organizationId?: string
  data: { name?: string; slug?: string; logo?: string | null; metadata?: Record<string, unknown> | null }
  /** The panel: each changed field (name, slug) as the view read it; one changed by someone else since is refused (StaleSave, 409 CONFLICT). */
  base?: Record<string, unknown>
}

export async function updateOrganization(ctx: AuthContext, actor: OrgActor, input: UpdateOrganizationInput): Promise<OrganizationJSON> {
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'ORGANIZATION_NOT_FOUND'))
  await requirePermission(
    ctx,
    actor,
    orgId,
    { organization: ['update'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION'),
    orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
  )
  const { data } = input
  return ctx.storage.transaction(async () => {
    const current = await findOrganizationById(ctx, orgId)
    if (!current) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
    const shown = { name: current.name, slug: current.slug, logo: current.logo ?? null }
    await refuseStale(ctx, { type: 'organization.updated', target: orgId }, shown, { ...data }, input.base)
    // An unchanged slug passes (a name edit of an organization whose slug predates the rule).
    if (data.slug !== undefined && data.slug !== current.slug) await assertSlugAllowed(ctx, data.slug, actor)
    if (data.slug !== undefined && data.slug !== current.slug && (await findOrganizationBySlug(ctx, data.slug))) {
      throw orgError(400, 'ORGANIZATION_SLUG_ALREADY_TAKEN')
    }
    const patch: Partial<OrganizationRow> = {}
    if (data.name !== undefined) patch.name = data.name
    if (data.slug !== undefined) patch.slug = data.slug
    if (data.logo !== undefined) patch.logo = data.logo
    if (data.metadata !== undefined) patch.metadata = data.metadata === null ? null : JSON.stringify(data.metadata)
    if (Object.keys(patch).length > 0) {
      await updateOrganizationRow(ctx, orgId, patch)
      // The old and new value of each field changed (metadata is named, its content left out).
      const changes = objectChanges(shown, {
        name: patch.name ?? current.name,
        slug: patch.slug ?? current.slug,
        logo: patch.logo ?? shown.logo,
      })
      await auditOrg(ctx, actor, { type: 'organization.updated', target: orgId, detail: { fields: Object.keys(patch), changes } })
    }
    return toOrganizationJSON({ ...current, ...patch })
  })
}

/**
 * Deletes an organization with its members, invitations and teams; every session that had it
 * active loses it.
 */
export async function deleteOrganization(
  ctx: AuthContext,
  actor: OrgActor,
  organizationId: string,
): Promise<{ organization: OrganizationJSON } & SessionChange> {
  await requirePermission(
    ctx,
    actor,
    organizationId,
    { organization: ['delete'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION'),
    orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
  )
  const current = await findOrganizationById(ctx, organizationId)
  if (!current) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  await ctx.storage.transaction(async () => {
    await clearActiveOrganization(ctx, organizationId)
    await deleteOrganizationRow(ctx, organizationId)
    await auditOrg(ctx, actor, { type: 'organization.deleted', target: organizationId, detail: { slug: current.slug } })
  })
  let changed: SessionRow | null = null
  if (actor.kind === 'user' && actor.session?.activeOrganizationId === organizationId) {
    changed = { ...actor.session, activeOrganizationId: null, activeTeamId: null }
  }
  return { organization: toOrganizationJSON(current), session: changed }
}

/** The organizations a user is a member of. */
export async function listUserOrganizations(ctx: AuthContext, userId: string): Promise<OrganizationJSON[]> {
  return (await listOrganizationsOfUser(ctx, userId)).map(toOrganizationJSON)
}

/** A user's memberships with each organization's name and slug (control panel). */
export async function listUserMemberships(
  ctx: AuthContext,
  userId: string,
): Promise<Array<{ organizationId: string; name: string; slug: string; role: string }>> {
  return listMembershipsOfUser(ctx, userId)
}

export type FullOrganization = OrganizationJSON & {
  members: MemberWithUser[]
  invitations: InvitationRow[]
  teams: TeamWithCount[] | null
}

/** An organization with its members (+ user), all its invitations and its teams (null without teams). */
export async function buildFullOrganization(ctx: AuthContext, row: OrganizationRow, membersLimit?: number): Promise<FullOrganization> {
  const conf = ctx.config().organization
  const limit = Math.min(membersLimit ?? conf.membershipLimit, conf.membershipLimit)
  return {
    ...toOrganizationJSON(row),
    members: await listMembersWithUsers(ctx, row.id, limit),
    invitations: await listInvitationsOf(ctx, row.id),
    teams: conf.teams.enabled ? await listTeamsWithCounts(ctx, row.id) : null,
  }
}

export interface OrganizationSelector {
  organizationId?: string | null
  organizationSlug?: string | null
}

/**
 * The organization a read addresses (slug wins, then id, then the active one); null when none.
 * An unknown slug is ORGANIZATION_NOT_FOUND; an id the caller is not a member of (or that does
 * not exist) is 403, so outsiders learn nothing.
 */
export async function resolveReadableOrganization(
  ctx: AuthContext,
  actor: OrgActor,
  selector: OrganizationSelector,
  notMember = orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
): Promise<{ org: OrganizationRow; member: MemberRow | null } | null> {
  let orgId: string | null | undefined = selector.organizationId
  if (selector.organizationSlug) {
    const bySlug = await findOrganizationBySlug(ctx, selector.organizationSlug)
    if (!bySlug) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
    orgId = bySlug.id
  }
  if (!orgId && actor.kind === 'user') orgId = actor.session?.activeOrganizationId
  if (!orgId) return null
  const caller = await requireMember(ctx, actor, orgId, notMember)
  const org = await findOrganizationById(ctx, orgId)
  if (!org) throw actor.kind === 'user' ? notMember : orgError(404, 'ORGANIZATION_NOT_FOUND')
  return { org, member: caller }
}

export async function getFullOrganization(
  ctx: AuthContext,
  actor: OrgActor,
  selector: OrganizationSelector & { membersLimit?: number },
): Promise<FullOrganization | null> {
  const found = await resolveReadableOrganization(ctx, actor, selector)
  return found ? buildFullOrganization(ctx, found.org, selector.membersLimit) : null
}

/**
 * set-active: `organizationId: null` unsets; neither id nor slug re-reads the current one.
 * Only a member may make an organization active.
 */
export async function setActiveOrganization(
  ctx: AuthContext,
  actor: SignedInOrgActor,
  selector: OrganizationSelector,
): Promise<{ organization: FullOrganization | null } & SessionChange> {
  const current = actor.session
  if (selector.organizationId === null && !selector.organizationSlug) {
    if (!current.activeOrganizationId) return { organization: null, session: null }
    const changed = await moveSession(ctx, current, { activeOrganizationId: null })
    await auditOrg(ctx, actor, {
      type: 'organization.active-set',
      target: current.id,
      detail: { organizationId: null, previous: current.activeOrganizationId },
    })
    return { organization: null, session: changed }
  }
  let orgId = selector.organizationId ?? null
  if (!orgId && selector.organizationSlug) {
    const bySlug = await findOrganizationBySlug(ctx, selector.organizationSlug)
    if (!bySlug) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
    orgId = bySlug.id
  }
  if (!orgId) orgId = current.activeOrganizationId
  if (!orgId) return { organization: null, session: null }
  if (!(await findMembership(ctx, orgId, actor.user.id))) throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
  const org = await findOrganizationById(ctx, orgId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  let changed: SessionRow | null = null
  if (current.activeOrganizationId !== orgId) {
    changed = await moveSession(ctx, current, { activeOrganizationId: orgId })
    await auditOrg(ctx, actor, {
      type: 'organization.active-set',
      target: current.id,
      detail: { organizationId: orgId, previous: current.activeOrganizationId },
    })
  }
  return { organization: { ...(await buildFullOrganization(ctx, org)), teams: null }, session: changed }
}

// ---- control panel ----------------------------------------------------------------------

export type OrganizationSummary = OrganizationJSON & { memberCount: number }

/** Organizations matching `search` (name or slug, case-insensitive substring), newest first. */
export async function searchOrganizations(
  ctx: AuthContext,
  query: { search?: string; limit?: number; offset?: number } = {},
): Promise<{ organizations: OrganizationSummary[]; total: number }> {
  const limit = Math.max(1, Math.min(query.limit ?? 100, 1000))
  const offset = Math.max(0, query.offset ?? 0)
  const { rows, total } = await searchOrganizationRows(ctx, { search: query.search, limit, offset })
  return { organizations: rows.map((r) => ({ ...toOrganizationJSON(r.organization), memberCount: r.memberCount })), total }
}

/** Everything the panel shows about one organization. */
export async function getOrganizationDetail(ctx: AuthContext, organizationId: string): Promise<FullOrganization> {
  const org = await findOrganizationById(ctx, organizationId)
  if (!org) throw orgError(404, 'ORGANIZATION_NOT_FOUND')
  return buildFullOrganization(ctx, org)
}
