import type { AdmissionRefusal } from '../../core/admission.js'
import { admitToFace } from '../../core/sign-in-table.js'
import type { AuthContext } from '../../core/context.js'
import type { SessionRow, UserRow } from '../../core/sessions.js'
import type { OidcClientRow } from './schema.js'
import { groupNamesOf } from '../groups/names.js'
import { loginNameOf } from '../username/rules.js'
import { listMembershipsOfUser, listTeamMembershipsOfUser } from '../organization/store.js'
import { findClient, findUserRow } from './store.js'

/**
 * Who may sign in to a client and what the tokens say about them. The admission rule of every
 * face (core/admission.ts) decides: a banned user (ban not yet expired), an unverified one while
 * `identity.requireVerifiedEmail` is on, an anonymous one, … or a deleted one has no account here:
 * oidc-provider then refuses the code exchange and every refresh. A client limited to organizations
 * or teams admits only their members.
 */

/** The user and the admission rule's answer for them (with the Gatehouse session when there is one); undefined: no such user. */
export async function admittedUser(
  ctx: AuthContext,
  userId: string,
  session?: SessionRow | null,
): Promise<{ user: UserRow; refusal: AdmissionRefusal | null } | undefined> {
  const row = await findUserRow(ctx, userId)
  if (!row) return undefined
  return { user: row, refusal: await admitToFace(ctx, { user: row, session }, 'oidc') }
}

/** The user when they exist and the admission rule admits them. */
export async function activeUser(ctx: AuthContext, userId: string): Promise<UserRow | undefined> {
  const found = await admittedUser(ctx, userId)
  return found && !found.refusal ? found.user : undefined
}

/**
 * The account a token is issued for (oidc-provider's findAccount): the user, active, and admitted
 * to the client when one is named (a client deleted meanwhile admits no one).
 */
export async function accountFor(
  ctx: AuthContext,
  userId: string,
  clientId: string | undefined,
  /** The client's row when the caller has just read it. */
  row?: OidcClientRow,
): Promise<UserRow | undefined> {
  const user = await activeUser(ctx, userId)
  if (!user) return undefined
  if (clientId) {
    const client = row?.clientId === clientId ? row : await findClient(ctx, clientId)
    if (!client || !(await mayUseClient(ctx, user.id, client))) return undefined
  }
  return user
}

/** Whether the user belongs to one of the client's allowed organizations or teams (no limit: everyone). */
export async function mayUseClient(
  ctx: AuthContext,
  userId: string,
  client: Pick<OidcClientRow, 'allowedOrganizations' | 'allowedTeams'>,
): Promise<boolean> {
  if (client.allowedOrganizations.length === 0 && client.allowedTeams.length === 0) return true
  if (client.allowedOrganizations.length > 0) {
    const orgs = new Set(client.allowedOrganizations)
    if ((await listMembershipsOfUser(ctx, userId)).some((m) => orgs.has(m.organizationId))) return true
  }
  if (client.allowedTeams.length > 0) {
    const teams = new Set(client.allowedTeams)
    if ((await listTeamMembershipsOfUser(ctx, userId)).some((t) => teams.has(t.teamId))) return true
  }
  return false
}

/**
 * Every claim Gatehouse can release; oidc-provider keeps those the granted scopes and claims
 * cover. `groups` (two membership queries) is worked out only when the scope or the requested
 * claims name it (`scope` absent: always).
 */
export async function userClaims(
  ctx: AuthContext,
  row: UserRow,
  scope?: string,
  requested?: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const withGroups = scope === undefined || scope.split(' ').includes('groups') || (requested !== undefined && 'groups' in requested)
  return {
    sub: row.id,
    email: row.email,
    email_verified: row.emailVerified,
    name: row.name,
    picture: row.image ?? undefined,
    preferred_username: loginNameOf(row),
    updated_at: Math.floor(row.updatedAt.getTime() / 1000),
    groups: withGroups ? await groupNamesOf(ctx, row) : undefined,
  }
}
