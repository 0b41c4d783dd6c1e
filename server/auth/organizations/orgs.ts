import { asc, count, desc, eq, or, sql } from 'drizzle-orm'
import { generateId } from '../../crypto/random.js'
import { invitation, member, organization, team, teamMember, user } from '../../db/schema.js'
import type { AuthContext } from '../context.js'
import type { SessionRow } from '../sessions.js'
import {
  auditOrg,
  insertionOrder,
  joinTeam,
  clearActiveOrganization,
  findMembership,
  type InvitationRow,
  type MemberRow,
  type MemberWithUser,
  memberUserColumns,
  type OrgActor,
  type OrganizationJSON,
  type OrganizationRow,
  orgError,
  requireMember,
  requirePermission,
  type SessionChange,
  setSessionActiveOrganization,
  setSessionActiveTeam,
  type TeamRow,
  targetOrganizationId,
  toOrganizationJSON,
} from './shared.js'

export function findOrganizationById(ctx: AuthContext, id: string): OrganizationRow | undefined {
  return ctx.db.select().from(organization).where(eq(organization.id, id)).get()
}

export function findOrganizationBySlug(ctx: AuthContext, slug: string): OrganizationRow | undefined {
  return ctx.db.select().from(organization).where(eq(organization.slug, slug)).get()
}

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
  if (!creatorId || !ctx.db.select({ id: user.id }).from(user).where(eq(user.id, creatorId)).get()) {
    throw orgError(400, 'MEMBER_NOT_FOUND')
  }
  if (actor.kind === 'user' && !conf.allowUserToCreateOrganization) {
    throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION')
  }
  const now = new Date(ctx.clock.now())
  const result = await ctx.storage.transaction(
    async () => {
      if (conf.organizationLimit !== undefined) {
        const owned = ctx.db.select({ n: count() }).from(member).where(eq(member.userId, creatorId)).get()?.n ?? 0
        if (owned >= conf.organizationLimit) throw orgError(403, 'YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS')
      }
      if (findOrganizationBySlug(ctx, input.slug)) throw orgError(400, 'ORGANIZATION_ALREADY_EXISTS')
      const row: OrganizationRow = {
        id: generateId(),
        name: input.name,
        slug: input.slug,
        logo: input.logo ?? null,
        metadata: input.metadata ? JSON.stringify(input.metadata) : null,
        createdAt: now,
      }
      ctx.db.insert(organization).values(row).run()
      let defaultTeam: TeamRow | null = null
      if (conf.teams.enabled) {
        // As better-auth 1.7 creates it: never updated yet.
        defaultTeam = { id: generateId(), name: row.name, organizationId: row.id, createdAt: now, updatedAt: null }
        ctx.db.insert(team).values(defaultTeam).run()
      }
      const creator: MemberRow = {
        id: generateId(),
        organizationId: row.id,
        userId: creatorId,
        role: conf.creatorRole,
        teamId: defaultTeam?.id ?? null,
        createdAt: now,
      }
      ctx.db.insert(member).values(creator).run()
      if (defaultTeam) joinTeam(ctx, defaultTeam.id, creatorId)
      let changed: SessionRow | null = null
      if (actor.kind === 'user' && actor.session && !input.keepCurrentActiveOrganization) {
        changed = setSessionActiveOrganization(ctx, actor.session, row.id)
        // better-auth 1.7: the default team, which the creator joined, becomes the active team.
        if (defaultTeam) changed = setSessionActiveTeam(ctx, changed, defaultTeam.id)
      }
      await auditOrg(ctx, actor, {
        type: 'organization.created',
        target: row.id,
        targetUserId: creatorId,
        detail: { slug: row.slug, defaultTeamId: defaultTeam?.id ?? null },
      })
      return { organization: { ...toOrganizationJSON(row), members: [creator] }, session: changed }
    },
  )
  return result
}

/** check-slug: `{status:true}` when free. */
export function checkSlug(ctx: AuthContext, slug: string): { status: true } {
  if (findOrganizationBySlug(ctx, slug)) throw orgError(400, 'ORGANIZATION_SLUG_ALREADY_TAKEN')
  return { status: true }
}

export interface UpdateOrganizationInput {
  organizationId?: string
  data: { name?: string; slug?: string; logo?: string | null; metadata?: Record<string, unknown> | null }
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
  const current = findOrganizationById(ctx, orgId)
  if (!current) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  const { data } = input
  if (data.slug !== undefined && data.slug !== current.slug) {
    const taken = findOrganizationBySlug(ctx, data.slug)
    if (taken) throw orgError(400, 'ORGANIZATION_SLUG_ALREADY_TAKEN')
  }
  const patch: Partial<OrganizationRow> = {}
  if (data.name !== undefined) patch.name = data.name
  if (data.slug !== undefined) patch.slug = data.slug
  if (data.logo !== undefined) patch.logo = data.logo
  if (data.metadata !== undefined) patch.metadata = data.metadata === null ? null : JSON.stringify(data.metadata)
  if (Object.keys(patch).length > 0) {
    ctx.db.update(organization).set(patch).where(eq(organization.id, orgId)).run()
    await auditOrg(ctx, actor, { type: 'organization.updated', target: orgId, detail: { fields: Object.keys(patch) } })
  }
  return toOrganizationJSON({ ...current, ...patch })
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
  const current = findOrganizationById(ctx, organizationId)
  if (!current) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  await ctx.storage.transaction(
    async () => {
      clearActiveOrganization(ctx, organizationId)
      ctx.db.delete(organization).where(eq(organization.id, organizationId)).run()
      await auditOrg(ctx, actor, { type: 'organization.deleted', target: organizationId, detail: { slug: current.slug } })
    },
  )
  let changed: SessionRow | null = null
  if (actor.kind === 'user' && actor.session?.activeOrganizationId === organizationId) {
    changed = { ...actor.session, activeOrganizationId: null, activeTeamId: null }
  }
  return { organization: toOrganizationJSON(current), session: changed }
}

/** The organizations a user is a member of. */
export function listUserOrganizations(ctx: AuthContext, userId: string): OrganizationJSON[] {
  return ctx.db
    .select({ organization })
    .from(member)
    .innerJoin(organization, eq(member.organizationId, organization.id))
    .where(eq(member.userId, userId))
    .orderBy(asc(organization.createdAt), insertionOrder(organization))
    .all()
    .map((r) => toOrganizationJSON(r.organization))
}

/** A user's memberships with each organization's name and slug (control panel). */
export function listUserMemberships(ctx: AuthContext, userId: string): Array<{ organizationId: string; name: string; slug: string; role: string }> {
  return ctx.db
    .select({ organizationId: organization.id, name: organization.name, slug: organization.slug, role: member.role })
    .from(member)
    .innerJoin(organization, eq(member.organizationId, organization.id))
    .where(eq(member.userId, userId))
    .all()
}

export type TeamWithCount = TeamRow & { memberCount: number }

export type FullOrganization = OrganizationJSON & {
  members: MemberWithUser[]
  invitations: InvitationRow[]
  teams: TeamWithCount[] | null
}

export function listMembersWithUsers(ctx: AuthContext, organizationId: string, limit: number, offset = 0): MemberWithUser[] {
  return ctx.db
    .select({ member, user: memberUserColumns })
    .from(member)
    .innerJoin(user, eq(member.userId, user.id))
    .where(eq(member.organizationId, organizationId))
    .orderBy(asc(member.createdAt), insertionOrder(member))
    .limit(limit)
    .offset(offset)
    .all()
    .map((r) => ({ ...r.member, user: r.user }))
}

export function listTeamsWithCounts(ctx: AuthContext, organizationId: string): TeamWithCount[] {
  return ctx.db
    .select({ team, memberCount: sql<number>`(select count(*) from ${teamMember} where ${teamMember.teamId} = ${team.id})` })
    .from(team)
    .where(eq(team.organizationId, organizationId))
    .orderBy(asc(team.createdAt), insertionOrder(team))
    .all()
    .map((r) => ({ ...r.team, memberCount: Number(r.memberCount) }))
}

/** An organization with its members (+ user), all its invitations and its teams (null without teams). */
export function buildFullOrganization(ctx: AuthContext, row: OrganizationRow, membersLimit?: number): FullOrganization {
  const conf = ctx.config().organization
  const limit = Math.min(membersLimit ?? conf.membershipLimit, conf.membershipLimit)
  return {
    ...toOrganizationJSON(row),
    members: listMembersWithUsers(ctx, row.id, limit),
    invitations: ctx.db
      .select()
      .from(invitation)
      .where(eq(invitation.organizationId, row.id))
      .orderBy(asc(invitation.createdAt), insertionOrder(invitation))
      .all(),
    teams: conf.teams.enabled ? listTeamsWithCounts(ctx, row.id) : null,
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
    const bySlug = findOrganizationBySlug(ctx, selector.organizationSlug)
    if (!bySlug) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
    orgId = bySlug.id
  }
  if (!orgId && actor.kind === 'user') orgId = actor.session?.activeOrganizationId
  if (!orgId) return null
  const caller = await requireMember(ctx, actor, orgId, notMember)
  const org = findOrganizationById(ctx, orgId)
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
  actor: Extract<OrgActor, { kind: 'user' }> & { session: SessionRow },
  selector: OrganizationSelector,
): Promise<{ organization: FullOrganization | null } & SessionChange> {
  const current = actor.session
  if (selector.organizationId === null && !selector.organizationSlug) {
    if (!current.activeOrganizationId) return { organization: null, session: null }
    const changed = setSessionActiveOrganization(ctx, current, null)
    await auditOrg(ctx, actor, {
      type: 'organization.active-set',
      target: current.id,
      detail: { organizationId: null, previous: current.activeOrganizationId },
    })
    return { organization: null, session: changed }
  }
  let orgId = selector.organizationId ?? null
  if (!orgId && selector.organizationSlug) {
    const bySlug = findOrganizationBySlug(ctx, selector.organizationSlug)
    if (!bySlug) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
    orgId = bySlug.id
  }
  if (!orgId) orgId = current.activeOrganizationId
  if (!orgId) return { organization: null, session: null }
  if (!await findMembership(ctx, orgId, actor.user.id)) throw orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION')
  const org = findOrganizationById(ctx, orgId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  let changed: SessionRow | null = null
  if (current.activeOrganizationId !== orgId) {
    changed = setSessionActiveOrganization(ctx, current, orgId)
    await auditOrg(ctx, actor, {
      type: 'organization.active-set',
      target: current.id,
      detail: { organizationId: orgId, previous: current.activeOrganizationId },
    })
  }
  return { organization: { ...buildFullOrganization(ctx, org), teams: null }, session: changed }
}

// ---- control panel ----------------------------------------------------------------------

export type OrganizationSummary = OrganizationJSON & { memberCount: number }

/** Organizations matching `search` (name or slug, case-insensitive substring), newest first. */
export function searchOrganizations(
  ctx: AuthContext,
  query: { search?: string; limit?: number; offset?: number } = {},
): { organizations: OrganizationSummary[]; total: number } {
  const limit = Math.max(1, Math.min(query.limit ?? 100, 1000))
  const offset = Math.max(0, query.offset ?? 0)
  const term = query.search?.trim()
  const pattern = term ? `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null
  const where = pattern
    ? or(
        sql`${organization.name} like ${pattern} escape '\\'`,
        sql`${organization.slug} like ${pattern} escape '\\'`,
      )
    : undefined
  const total = ctx.db.select({ n: count() }).from(organization).where(where).get()?.n ?? 0
  const rows = ctx.db
    .select({
      organization,
      memberCount: sql<number>`(select count(*) from ${member} where ${member.organizationId} = ${organization.id})`,
    })
    .from(organization)
    .where(where)
    .orderBy(desc(organization.createdAt), sql`${organization}.rowid desc`)
    .limit(limit)
    .offset(offset)
    .all()
  return {
    organizations: rows.map((r) => ({ ...toOrganizationJSON(r.organization), memberCount: Number(r.memberCount) })),
    total,
  }
}

/** Everything the panel shows about one organization. */
export function getOrganizationDetail(ctx: AuthContext, organizationId: string): FullOrganization {
  const org = findOrganizationById(ctx, organizationId)
  if (!org) throw orgError(404, 'ORGANIZATION_NOT_FOUND')
  return buildFullOrganization(ctx, org)
}
