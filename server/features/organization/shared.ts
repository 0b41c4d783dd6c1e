import { type AuditInput, recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { type APIError, fail } from '../../core/errors.js'
import { type SessionRow, setSessionActive, type UserRow } from '../../core/sessions.js'
import type { PermissionRequest } from '../../core/access-control.js'
import { roleHasPermission } from './access.js'
import { generateId } from '../../crypto/random.js'
import type { MemberRow, OrganizationRow, TeamMemberRow } from './schema.js'
import { findMembership, findTeamMembership, insertTeamMember } from './store.js'

/**
 * Who acts on organizations, and the checks every rule starts with. A signed-in user is held to
 * membership and role permissions; the system (the control panel, server-side calls) is trusted
 * and only bound by the data rules (limits, last owner...).
 */
export type OrgActor =
  | { kind: 'user'; user: UserRow; session: SessionRow | null; meta: RequestMeta | null }
  | { kind: 'system'; actorUserId?: string | null; meta?: RequestMeta | null; sender?: MailSender }

/**
 * Who a mail sent in the system's name comes from: the administrator signed in to the control
 * panel (`userId` set), or the operator (the desktop's OS account, the recovery link), who has no
 * user row. An invitation the panel sends names them, never the organization's owner.
 */
export interface MailSender {
  userId: string | null
  name: string
  email: string | null
}

export type UserOrgActor = Extract<OrgActor, { kind: 'user' }>
export type SignedInOrgActor = UserOrgActor & { session: SessionRow }

export const systemActor = (actorUserId: string | null = null): OrgActor => ({ kind: 'system', actorUserId })

export const userActor = (data: { user: UserRow; session: SessionRow }, meta: RequestMeta | null): SignedInOrgActor => ({
  kind: 'user',
  user: data.user,
  session: data.session,
  meta,
})

/** The actor's session after a change of its active organization or team, when there was one. */
export interface SessionChange {
  session: SessionRow | null
}

/** Organization as the wire shows it: metadata parsed back into an object. */
export interface OrganizationJSON {
  id: string
  name: string
  slug: string
  logo: string | null
  metadata: Record<string, unknown> | null
  createdAt: Date
}

export function toOrganizationJSON(row: OrganizationRow): OrganizationJSON {
  let metadata: Record<string, unknown> | null = null
  if (row.metadata) {
    try {
      const parsed: unknown = JSON.parse(row.metadata)
      metadata = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null
    } catch {
      metadata = null
    }
  }
  return { id: row.id, name: row.name, slug: row.slug, logo: row.logo, metadata, createdAt: row.createdAt }
}

/**
 * The organization an action addresses: the explicit id, else the caller's active one.
 * `missing` is the error better-auth answers when there is neither.
 */
export function targetOrganizationId(actor: OrgActor, explicit: string | null | undefined, missing: APIError): string {
  const id = explicit || (actor.kind === 'user' ? actor.session?.activeOrganizationId : null)
  if (!id) throw missing
  return id
}

/** The caller's membership, or `error` (users only; the system is no member and needs none). */
export async function requireMember(ctx: AuthContext, actor: OrgActor, organizationId: string, error: APIError): Promise<MemberRow | null> {
  if (actor.kind === 'system') return null
  const found = await findMembership(ctx, organizationId, actor.user.id)
  if (!found) throw error
  return found
}

/** Membership plus a permission of the caller's role(s); the system passes. */
export async function requirePermission(
  ctx: AuthContext,
  actor: OrgActor,
  organizationId: string,
  permissions: PermissionRequest,
  denied: APIError,
  notMember: APIError = denied,
): Promise<MemberRow | null> {
  const caller = await requireMember(ctx, actor, organizationId, notMember)
  if (caller && !roleHasPermission(ctx.config(), caller.role, permissions)) throw denied
  return caller
}

export function actorUserId(actor: OrgActor): string | null {
  return actor.kind === 'user' ? actor.user.id : (actor.actorUserId ?? null)
}

/** Appends the audit event of an organization change, naming the actor and how it acted. */
export async function auditOrg(ctx: AuthContext, actor: OrgActor, event: Omit<AuditInput, 'actorUserId' | 'meta'>): Promise<void> {
  const by = actorUserId(actor)
  await recordAudit(ctx, {
    ...event,
    actorUserId: by,
    targetUserId: event.targetUserId ?? by,
    detail: actor.kind === 'system' ? { ...event.detail, via: 'system' } : (event.detail ?? null),
    meta: actor.meta ?? null,
  })
}

/** Team endpoints answer 404 (as if absent) while teams are switched off. */
export function assertTeamsEnabled(ctx: AuthContext): void {
  if (!ctx.config().organization.teams.enabled) throw fail(404, 'NOT_FOUND')
}

/**
 * Moves one session's active organization and/or team; returns the updated row so the caller can
 * re-issue the cookie cache (get-session then shows the new value at once).
 */
export async function moveSession(
  ctx: AuthContext,
  row: SessionRow,
  patch: { activeOrganizationId?: string | null; activeTeamId?: string | null },
): Promise<SessionRow> {
  await setSessionActive(ctx, row.id, patch)
  return { ...row, ...patch }
}

/** Puts a user in a team (better-auth's findOrCreateTeamMember): the existing row when already there. */
export async function joinTeam(ctx: AuthContext, teamId: string, userId: string): Promise<TeamMemberRow> {
  const existing = await findTeamMembership(ctx, teamId, userId)
  if (existing) return existing
  const row: TeamMemberRow = { id: generateId(), teamId, userId, createdAt: new Date(ctx.clock.now()) }
  await insertTeamMember(ctx, row)
  return row
}
