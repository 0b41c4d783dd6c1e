import type { AuthContext } from '../../core/context.js'
import type { SessionRow } from '../../core/sessions.js'
import { normalizeEmail } from '../../core/user-store.js'
import { assertValidEmail } from '../../core/users.js'
import { createVerification, deleteVerifications, findVerification } from '../../core/verification.js'
import { generateId } from '../../crypto/random.js'
import { includesCreatorRole } from './access.js'
import { onField, orgError } from './errors.js'
import { invitationURL, renderInvitationMail } from './mail.js'
import { assertTeamInOrganization, checkRoles, earliestOwner, insertMemberChecked } from './members.js'
import type { InvitationRow, MemberRow, OrganizationRow } from './schema.js'
import {
  auditOrg,
  moveSession,
  type OrgActor,
  requireMember,
  requirePermission,
  type SessionChange,
  type SignedInOrgActor,
  targetOrganizationId,
  type UserOrgActor,
} from './shared.js'
import {
  countPendingInvitations,
  findInvitationById,
  findMemberByEmail,
  findMembership,
  findMemberUser,
  findOrganizationById,
  findTeamById,
  insertInvitation,
  listInvitationsOf,
  listPendingInvitationsFor,
  markInvitationAccepted,
  updateInvitationRow,
} from './store.js'

const isOpen = (ctx: AuthContext, row: InvitationRow): boolean => row.status === 'pending' && row.expiresAt.getTime() > ctx.clock.now()

/**
 * Who the invitation mail names as sending it: the signed-in user who invites, the administrator
 * (or operator) acting through the control panel, else the invitation's inviter of record.
 */
async function mailSender(ctx: AuthContext, actor: OrgActor, row: InvitationRow): Promise<{ name: string; email: string | null }> {
  if (actor.kind === 'user') return { name: actor.user.name, email: actor.user.email }
  if (actor.sender) return actor.sender
  const inviter = await findMemberUser(ctx, row.inviterId)
  return { name: inviter?.name ?? '', email: inviter?.email ?? null }
}

/** The verification record naming who sent an invitation's latest mail, when not its inviter of record. */
const senderRecord = (invitationId: string) => `invitation-sender:${invitationId}`

/**
 * Remembers who the mail names as its sender when that is not the inviter of record (an
 * administrator acting from the panel who is no member, the operator, a member re-sending
 * another's invitation), for as long as the invitation is open: the accept page names the same
 * person as the mail (issue 37 §7). A mail from the inviter of record clears it.
 */
async function rememberSender(ctx: AuthContext, actor: OrgActor, row: InvitationRow, sender: { name: string; email: string | null }) {
  await deleteVerifications(ctx, senderRecord(row.id))
  const senderId = actor.kind === 'user' ? actor.user.id : (actor.sender?.userId ?? null)
  if (senderId === row.inviterId) return
  const seconds = Math.max(1, Math.ceil((row.expiresAt.getTime() - ctx.clock.now()) / 1000))
  await createVerification(ctx, senderRecord(row.id), JSON.stringify({ name: sender.name, email: sender.email }), seconds)
}

/** Who the accept page names: the sender of the latest mail, else the inviter of record. */
async function invitationSender(ctx: AuthContext, row: InvitationRow): Promise<{ name: string; email: string | null }> {
  const record = await findVerification(ctx, senderRecord(row.id))
  if (record) {
    const parsed = JSON.parse(record.value) as { name?: unknown; email?: unknown }
    return { name: typeof parsed.name === 'string' ? parsed.name : '', email: typeof parsed.email === 'string' ? parsed.email : null }
  }
  const inviter = await findMemberUser(ctx, row.inviterId)
  return { name: inviter?.name ?? '', email: inviter?.email ?? null }
}

/** Queues the invitation mail with the accept link. */
async function sendInvitationMail(ctx: AuthContext, actor: OrgActor, row: InvitationRow, org: OrganizationRow): Promise<void> {
  const sender = await mailSender(ctx, actor, row)
  await rememberSender(ctx, actor, row, sender)
  const conf = ctx.config().organization
  const mail = renderInvitationMail({
    organizationName: org.name,
    inviterName: sender.name,
    inviterEmail: sender.email,
    role: row.role ?? 'member',
    url: invitationURL(conf.invitationURL, ctx.baseURL, row.id, ctx.config().hostedPages.enabled),
    expiresAt: row.expiresAt,
  })
  await ctx.mailer.send({ to: row.email, kind: 'invitation', ...mail })
}

/**
 * The inviter of record of an invitation the system makes: the panel's administrator when they are
 * a member of the organization, else its earliest owner (accepting needs an inviter who is a
 * member, as better-auth's accept-invitation checks). The mail names the sender either way.
 */
async function systemInviter(ctx: AuthContext, actor: OrgActor, orgId: string): Promise<string | null> {
  const admin = actor.kind === 'system' ? actor.sender?.userId : null
  if (admin && (await findMembership(ctx, orgId, admin))) return admin
  return earliestOwner(ctx, orgId)
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
  try {
    assertValidEmail(email)
  } catch (error) {
    throw onField(error, 'email')
  }
  const role = checkRoles(ctx, input.role)
  const callerIsOwner = caller ? includesCreatorRole(ctx.config(), caller.role) : true
  if (!callerIsOwner && includesCreatorRole(ctx.config(), role)) {
    throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE')
  }
  const org = await findOrganizationById(ctx, orgId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  if (input.teamId) await assertTeamInOrganization(ctx, orgId, input.teamId)
  const inviterId = actor.kind === 'user' ? actor.user.id : (input.inviterId ?? (await systemInviter(ctx, actor, orgId)))
  if (!inviterId || !(await findMembership(ctx, orgId, inviterId))) throw orgError(400, 'MEMBER_NOT_FOUND')

  const now = ctx.clock.now()
  const expiresAt = new Date(now + conf.invitationExpiresIn * 1000)
  const row = await ctx.storage.transaction(async () => {
    if (await findMemberByEmail(ctx, orgId, email)) throw orgError(400, 'USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION')
    const pending = await listPendingInvitationsFor(ctx, orgId, email)
    const existing = pending[0]
    if (existing && input.resend) {
      if (!callerIsOwner && includesCreatorRole(ctx.config(), existing.role ?? '')) {
        throw orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE')
      }
      await updateInvitationRow(ctx, existing.id, { expiresAt })
      await auditOrg(ctx, actor, { type: 'invitation.resent', target: orgId, detail: { invitationId: existing.id, email } })
      return { ...existing, expiresAt }
    }
    if (existing && !conf.cancelPendingInvitationsOnReInvite) {
      throw orgError(400, 'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION')
    }
    for (const old of pending) {
      await updateInvitationRow(ctx, old.id, { status: 'canceled' })
      await auditOrg(ctx, actor, {
        type: 'invitation.canceled',
        target: orgId,
        detail: { invitationId: old.id, email, reason: 're-invite' },
      })
    }
    if ((await countPendingInvitations(ctx, orgId)) >= conf.invitationLimit) throw orgError(403, 'INVITATION_LIMIT_REACHED')
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
    await insertInvitation(ctx, created)
    await auditOrg(ctx, actor, {
      type: 'invitation.created',
      target: orgId,
      detail: { invitationId: created.id, email, role, teamId: created.teamId },
    })
    return created
  })
  await sendInvitationMail(ctx, actor, row, org)
  return row
}

/** Renews a pending invitation's expiry and sends its mail again (control panel "resend"). */
export async function resendInvitation(ctx: AuthContext, actor: OrgActor, invitationId: string): Promise<InvitationRow> {
  const found = await findInvitationById(ctx, invitationId)
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
  const org = await findOrganizationById(ctx, found.organizationId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  const expiresAt = new Date(ctx.clock.now() + ctx.config().organization.invitationExpiresIn * 1000)
  await updateInvitationRow(ctx, found.id, { expiresAt })
  await auditOrg(ctx, actor, {
    type: 'invitation.resent',
    target: found.organizationId,
    detail: { invitationId: found.id, email: found.email },
  })
  const row = { ...found, expiresAt }
  await sendInvitationMail(ctx, actor, row, org)
  return row
}

/** Loads an invitation the signed-in user may act on: pending, unexpired, addressed to them. */
async function recipientInvitation(ctx: AuthContext, actor: UserOrgActor, invitationId: string): Promise<InvitationRow> {
  const found = await findInvitationById(ctx, invitationId)
  if (!found || !isOpen(ctx, found)) throw orgError(400, 'INVITATION_NOT_FOUND')
  if (found.email.toLowerCase() !== actor.user.email.toLowerCase()) {
    throw orgError(403, 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION')
  }
  return found
}

/**
 * Accepts an invitation: the member (role and team from the invitation) is created and the
 * invitation marked accepted in one transaction, so concurrent accepts cannot exceed the
 * membership limit. The organization becomes the session's active one.
 */
export async function acceptInvitation(
  ctx: AuthContext,
  actor: SignedInOrgActor,
  invitationId: string,
): Promise<{ invitation: InvitationRow; member: MemberRow } & SessionChange> {
  return ctx.storage.transaction(async () => {
    const found = await recipientInvitation(ctx, actor, invitationId)
    if (!(await findMembership(ctx, found.organizationId, found.inviterId))) {
      throw orgError(400, 'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION')
    }
    const teamId = found.teamId && ctx.config().organization.teams.enabled ? ((await findTeamById(ctx, found.teamId))?.id ?? null) : null
    const created = await insertMemberChecked(ctx, {
      organizationId: found.organizationId,
      userId: actor.user.id,
      role: found.role || 'member',
      teamId,
    })
    if (!(await markInvitationAccepted(ctx, found.id))) throw orgError(400, 'FAILED_TO_RETRIEVE_INVITATION')
    const patch: { activeOrganizationId?: string; activeTeamId?: string } = {}
    if (actor.session.activeOrganizationId !== found.organizationId) patch.activeOrganizationId = found.organizationId
    // better-auth 1.7: an invitation to one team makes that team the session's active one.
    if (teamId) patch.activeTeamId = teamId
    const changed: SessionRow | null = Object.keys(patch).length > 0 ? await moveSession(ctx, actor.session, patch) : null
    await auditOrg(ctx, actor, {
      type: 'invitation.accepted',
      target: found.organizationId,
      detail: { invitationId: found.id, memberId: created.id, role: created.role },
    })
    return { invitation: { ...found, status: 'accepted' }, member: created, session: changed }
  })
}

export async function rejectInvitation(
  ctx: AuthContext,
  actor: UserOrgActor,
  invitationId: string,
): Promise<{ invitation: InvitationRow; member: null }> {
  return ctx.storage.transaction(async () => {
    const found = await recipientInvitation(ctx, actor, invitationId)
    await updateInvitationRow(ctx, found.id, { status: 'rejected' })
    await auditOrg(ctx, actor, { type: 'invitation.rejected', target: found.organizationId, detail: { invitationId: found.id } })
    return { invitation: { ...found, status: 'rejected' }, member: null }
  })
}

/** Cancels a pending invitation; needs invitation:cancel in the invitation's own organization. */
export async function cancelInvitation(ctx: AuthContext, actor: OrgActor, invitationId: string): Promise<InvitationRow> {
  const found = await findInvitationById(ctx, invitationId)
  if (!found) throw orgError(400, 'INVITATION_NOT_FOUND')
  await requirePermission(
    ctx,
    actor,
    found.organizationId,
    { invitation: ['cancel'] },
    orgError(403, 'YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION'),
  )
  if (found.status !== 'pending') throw orgError(400, 'INVITATION_NOT_FOUND')
  await updateInvitationRow(ctx, found.id, { status: 'canceled' })
  await auditOrg(ctx, actor, { type: 'invitation.canceled', target: found.organizationId, detail: { invitationId: found.id } })
  return { ...found, status: 'canceled' }
}

/**
 * `inviterEmail` (better-auth's field) and `inviterName` name who sent the invitation's mail, as the
 * mail does: the inviter of record, or the administrator who sent it from the panel.
 */
export type InvitationDetail = InvitationRow & {
  organizationName: string
  organizationSlug: string
  inviterEmail: string
  inviterName: string
}

/** get-invitation: what the recipient needs to decide. */
export async function getInvitation(ctx: AuthContext, actor: UserOrgActor, invitationId: string): Promise<InvitationDetail> {
  const found = await recipientInvitation(ctx, actor, invitationId)
  const org = await findOrganizationById(ctx, found.organizationId)
  if (!org) throw orgError(400, 'ORGANIZATION_NOT_FOUND')
  if (!(await findMembership(ctx, found.organizationId, found.inviterId))) {
    throw orgError(400, 'INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION')
  }
  const sender = await invitationSender(ctx, found)
  return { ...found, organizationName: org.name, organizationSlug: org.slug, inviterEmail: sender.email ?? '', inviterName: sender.name }
}

/** All invitations (every status) of an organization; members only. */
export async function listInvitations(ctx: AuthContext, actor: OrgActor, organizationId?: string): Promise<InvitationRow[]> {
  const orgId = targetOrganizationId(actor, organizationId, orgError(400, 'ORGANIZATION_ID_IS_REQUIRED'))
  await requireMember(ctx, actor, orgId, orgError(403, 'YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION'))
  return listInvitationsOf(ctx, orgId)
}
