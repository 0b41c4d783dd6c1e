import { and, asc, count, eq, gt } from 'drizzle-orm'
import { generateId } from '../../crypto/random.js'
import { invitation, member, team, user } from '../../db/schema.js'
import { invitationURL, renderInvitationMail } from '../../mail/invitation-template.js'
import type { AuthContext } from '../context.js'
import { includesCreatorRole } from '../org-access.js'
import type { SessionRow } from '../sessions.js'
import { assertValidEmail, normalizeEmail } from '../users.js'
import { assertTeamInOrganization, checkRoles, insertMemberChecked } from './members.js'
import { findOrganizationById } from './orgs.js'
import {
  auditOrg,
  insertionOrder,
  findMembership,
  type InvitationRow,
  type MemberRow,
  type OrgActor,
  type OrganizationRow,
  orgError,
  requireMember,
  requirePermission,
  type SessionChange,
  setSessionActiveOrganization,
  setSessionActiveTeam,
  targetOrganizationId,
} from './shared.js'

type UserActor = Extract<OrgActor, { kind: 'user' }>

export function findInvitationById(ctx: AuthContext, id: string): InvitationRow | undefined {
  return ctx.db.select().from(invitation).where(eq(invitation.id, id)).get()
}

const isOpen = (ctx: AuthContext, row: InvitationRow): boolean =>
  row.status === 'pending' && row.expiresAt.getTime() > ctx.clock.now()

function pendingFor(ctx: AuthContext, organizationId: string, email: string): InvitationRow[] {
  return ctx.db
    .select()
    .from(invitation)
    .where(
      and(
        eq(invitation.organizationId, organizationId),
        eq(invitation.email, email),
        eq(invitation.status, 'pending'),
        gt(invitation.expiresAt, new Date(ctx.clock.now())),
      ),
    )
    .orderBy(asc(invitation.createdAt), insertionOrder(invitation))
    .all()
}

function countPending(ctx: AuthContext, organizationId: string): number {
  return (
    ctx.db
      .select({ n: count() })
      .from(invitation)
      .where(
        and(
          eq(invitation.organizationId, organizationId),
          eq(invitation.status, 'pending'),
          gt(invitation.expiresAt, new Date(ctx.clock.now())),
        ),
      )
      .get()?.n ?? 0
  )
}

/** The earliest owner: who a system-made invitation comes from when no inviter is named. */
function defaultInviter(ctx: AuthContext, organizationId: string): string | null {
  const owners = ctx.db
    .select({ userId: member.userId, role: member.role })
    .from(member)
    .where(eq(member.organizationId, organizationId))
    .orderBy(asc(member.createdAt), insertionOrder(member))
    .all()
  return owners.find((m) => includesCreatorRole(ctx.config(), m.role))?.userId ?? owners[0]?.userId ?? null
}

/** Queues the invitation mail with the accept link. */
function sendInvitationMail(ctx: AuthContext, row: InvitationRow, org: OrganizationRow): void {
  const inviter = ctx.db.select({ name: user.name, email: user.email }).from(user).where(eq(user.id, row.inviterId)).get()
  const conf = ctx.config().organization
  const mail = renderInvitationMail({
    organizationName: org.name,
    inviterName: inviter?.name ?? '',
    inviterEmail: inviter?.email ?? '',
    role: row.role ?? 'member',
    url: invitationURL(conf.invitationURL, ctx.baseURL, row.id),
    expiresAt: row.expiresAt,
  })
  ctx.mailer.send({ to: row.email, kind: 'invitation', ...mail })
}

export interface InviteMemberInput {
  email: string
  role: string | string[]
  organizationId?: string
  resend?: boolean
  teamId?: string
  /** System only: who the invitation comes from (default: the earliest owner). */
  inviterId?: string
}

/**
 * Invites an email address (SPEC §4 Invitation status, reference §9.2): pending for
 * `invitationExpiresIn`, mail queued with the accept link. A pending invitation for the same
 * address is refused unless `resend` (which renews and re-sends it) or
 * cancelPendingInvitationsOnReInvite (which cancels it and creates a new one).
 */
export async function inviteMember(ctx: AuthContext, actor: OrgActor, input: InviteMemberInput): Promise<InvitationRow> {
  const conf = ctx.config().organization
  const orgId = targetOrganizationId(actor, input.organizationId, orgError(400, 'ORGANIZATION_NOT_FOUND'))
  const caller = await requirePermission(
    ctx,
    actor,
    orgId,
    { invitation: ['create'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION'),
    orgError(403, 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION'),
  )
  const email = normalizeEmail(input.email)
  assertValidEmail(email)
  const role = checkRoles(ctx, input.role)
  const callerIsOwner = caller ? includesCreatorRole(ctx.config(), caller.role) : true
  if (!callerIsOwner && includesCreatorRole(ctx.config(), role)) {
    throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE')
  }
  const org = findOrganizationById(ctx, orgId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  if (input.teamId) {
    if (!conf.teams.enabled) throw orgError(400, 'TEAMS_ARE_NOT_ENABLED')
    assertTeamInOrganization(ctx, orgId, input.teamId)
  }
  const inviterId = actor.kind === 'user' ? actor.user.id : (input.inviterId ?? defaultInviter(ctx, orgId))
  if (!inviterId || !await findMembership(ctx, orgId, inviterId)) throw orgError(400, 'MEMBER_NOT_FOUND')

  const now = ctx.clock.now()
  const expiresAt = new Date(now + conf.invitationExpiresIn * 1000)
  const row = await ctx.storage.transaction(
    async () => {
      const already = ctx.db
        .select({ id: member.id })
        .from(member)
        .innerJoin(user, eq(member.userId, user.id))
        .where(and(eq(member.organizationId, orgId), eq(user.email, email)))
        .get()
      if (already) throw orgError(400, 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION')
      const pending = pendingFor(ctx, orgId, email)
      const existing = pending[0]
      if (existing && input.resend) {
        if (!callerIsOwner && includesCreatorRole(ctx.config(), existing.role ?? '')) {
          throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE')
        }
        ctx.db.update(invitation).set({ expiresAt }).where(eq(invitation.id, existing.id)).run()
        await auditOrg(ctx, actor, { type: 'invitation.resent', target: orgId, detail: { invitationId: existing.id, email } })
        return { ...existing, expiresAt }
      }
      if (existing && !conf.cancelPendingInvitationsOnReInvite) {
        throw orgError(400, 'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION')
      }
      for (const old of pending) {
        ctx.db.update(invitation).set({ status: 'canceled' }).where(eq(invitation.id, old.id)).run()
        await auditOrg(ctx, actor, { type: 'invitation.canceled', target: orgId, detail: { invitationId: old.id, email, reason: 're-invite' } })
      }
      if (countPending(ctx, orgId) >= conf.invitationLimit) throw orgError(403, 'INVITATION_LIMIT_REACHED')
      const created: InvitationRow = {
        id: generateId(),
        organizationId: orgId,
        email,
        role,
        status: 'pending',
        teamId: input.teamId ?? null,
        inviterId,
        expiresAt,
        createdAt: new Date(now),
      }
      ctx.db.insert(invitation).values(created).run()
      await auditOrg(ctx, actor, {
        type: 'invitation.created',
        target: orgId,
        detail: { invitationId: created.id, email, role, teamId: created.teamId },
      })
      return created
    },
  )
  sendInvitationMail(ctx, row, org)
  return row
}

/** Renews a pending invitation's expiry and sends its mail again (control panel "resend"). */
export async function resendInvitation(ctx: AuthContext, actor: OrgActor, invitationId: string): Promise<InvitationRow> {
  const found = findInvitationById(ctx, invitationId)
  if (found?.status !== 'pending') throw orgError(400, 'INVITATION_NOT_FOUND')
  const caller = await requirePermission(
    ctx,
    actor,
    found.organizationId,
    { invitation: ['create'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION'),
  )
  if (caller && !includesCreatorRole(ctx.config(), caller.role) && includesCreatorRole(ctx.config(), found.role ?? '')) {
    throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE')
  }
  const org = findOrganizationById(ctx, found.organizationId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  const expiresAt = new Date(ctx.clock.now() + ctx.config().organization.invitationExpiresIn * 1000)
  ctx.db.update(invitation).set({ expiresAt }).where(eq(invitation.id, found.id)).run()
  await auditOrg(ctx, actor, { type: 'invitation.resent', target: found.organizationId, detail: { invitationId: found.id, email: found.email } })
  const row = { ...found, expiresAt }
  sendInvitationMail(ctx, row, org)
  return row
}

/** Loads an invitation the signed-in user may act on: pending, unexpired, addressed to them. */
function recipientInvitation(ctx: AuthContext, actor: UserActor, invitationId: string): InvitationRow {
  const found = findInvitationById(ctx, invitationId)
  if (!found || !isOpen(ctx, found)) throw orgError(400, 'INVITATION_NOT_FOUND')
  if (found.email.toLowerCase() !== actor.user.email.toLowerCase()) {
    throw orgError(403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION')
  }
  return found
}

/**
 * Accepts an invitation: the member (role and team from the invitation) is created and the
 * invitation marked accepted in one IMMEDIATE transaction, so concurrent accepts cannot exceed
 * the membership limit. The organization becomes the session's active one.
 */
export async function acceptInvitation(
  ctx: AuthContext,
  actor: UserActor & { session: SessionRow },
  invitationId: string,
): Promise<{ invitation: InvitationRow; member: MemberRow } & SessionChange> {
  return ctx.storage.transaction(
    async () => {
      const found = recipientInvitation(ctx, actor, invitationId)
      if (!await findMembership(ctx, found.organizationId, found.inviterId)) {
        throw orgError(400, 'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION')
      }
      const teamId =
        found.teamId && ctx.config().organization.teams.enabled
          ? (ctx.db.select({ id: team.id }).from(team).where(eq(team.id, found.teamId)).get()?.id ?? null)
          : null
      const created = await insertMemberChecked(ctx, {
        organizationId: found.organizationId,
        userId: actor.user.id,
        role: found.role || 'member',
        teamId,
      })
      const updated = ctx.db
        .update(invitation)
        .set({ status: 'accepted' })
        .where(and(eq(invitation.id, found.id), eq(invitation.status, 'pending')))
        .run()
      if (updated.changes !== 1) throw orgError(400, 'FAILED_TO_RETRIEVE_INVITATION')
      let changed =
        actor.session.activeOrganizationId === found.organizationId
          ? null
          : setSessionActiveOrganization(ctx, actor.session, found.organizationId)
      // better-auth 1.7: an invitation to one team makes that team the session's active one.
      if (teamId) changed = setSessionActiveTeam(ctx, changed ?? actor.session, teamId)
      await auditOrg(ctx, actor, {
        type: 'invitation.accepted',
        target: found.organizationId,
        detail: { invitationId: found.id, memberId: created.id, role: created.role },
      })
      return { invitation: { ...found, status: 'accepted' }, member: created, session: changed }
    },
  )
}

export async function rejectInvitation(
  ctx: AuthContext,
  actor: UserActor,
  invitationId: string,
): Promise<{ invitation: InvitationRow; member: null }> {
  return ctx.storage.transaction(
    async () => {
      const found = recipientInvitation(ctx, actor, invitationId)
      ctx.db.update(invitation).set({ status: 'rejected' }).where(eq(invitation.id, found.id)).run()
      await auditOrg(ctx, actor, { type: 'invitation.rejected', target: found.organizationId, detail: { invitationId: found.id } })
      return { invitation: { ...found, status: 'rejected' }, member: null }
    },
  )
}

/** Cancels a pending invitation; needs invitation:cancel in the invitation's own organization. */
export async function cancelInvitation(ctx: AuthContext, actor: OrgActor, invitationId: string): Promise<InvitationRow> {
  const found = findInvitationById(ctx, invitationId)
  if (!found) throw orgError(400, 'INVITATION_NOT_FOUND')
  await requirePermission(
    ctx,
    actor,
    found.organizationId,
    { invitation: ['cancel'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION'),
  )
  if (found.status !== 'pending') throw orgError(400, 'INVITATION_NOT_FOUND')
  ctx.db.update(invitation).set({ status: 'canceled' }).where(eq(invitation.id, found.id)).run()
  await auditOrg(ctx, actor, { type: 'invitation.canceled', target: found.organizationId, detail: { invitationId: found.id } })
  return { ...found, status: 'canceled' }
}

export type InvitationDetail = InvitationRow & { organizationName: string; organizationSlug: string; inviterEmail: string }

/** get-invitation: what the recipient needs to decide. */
export async function getInvitation(ctx: AuthContext, actor: UserActor, invitationId: string): Promise<InvitationDetail> {
  const found = recipientInvitation(ctx, actor, invitationId)
  const org = findOrganizationById(ctx, found.organizationId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  if (!await findMembership(ctx, found.organizationId, found.inviterId)) {
    throw orgError(400, 'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION')
  }
  const inviter = ctx.db.select({ email: user.email }).from(user).where(eq(user.id, found.inviterId)).get()
  return { ...found, organizationName: org.name, organizationSlug: org.slug, inviterEmail: inviter?.email ?? '' }
}

/** All invitations (every status) of an organization; members only. */
export async function listInvitations(ctx: AuthContext, actor: OrgActor, organizationId?: string): Promise<InvitationRow[]> {
  const orgId = targetOrganizationId(actor, organizationId, orgError(400, 'ORGANIZATION_ID_IS_REQUIRED'))
  await requireMember(ctx, actor, orgId, orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION'))
  return ctx.db
    .select()
    .from(invitation)
    .where(eq(invitation.organizationId, orgId))
    .orderBy(asc(invitation.createdAt), insertionOrder(invitation))
    .all()
}
