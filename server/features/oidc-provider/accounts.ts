import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import type { OidcProviderConfig } from './config.js'
import type { OidcClientRow } from './schema.js'
import { listMembershipsOfUser, listTeamMembershipsOfUser } from '../organization/store.js'
import { findClient, findUserRow } from './store.js'

/**
 * Who may sign in to a client and what the tokens say about them. A banned user (ban not yet
 * expired) or a deleted one has no account here: oidc-provider then refuses the code exchange and
 * every refresh. A client limited to organizations or teams admits only their members.
 */

export function isBanned(ctx: AuthContext, row: UserRow): boolean {
  if (!row.banned) return false
  return !row.banExpires || row.banExpires.getTime() > ctx.clock.now()
}

/** The user when they exist and are not banned. */
export async function activeUser(ctx: AuthContext, userId: string): Promise<UserRow | undefined> {
  const row = await findUserRow(ctx, userId)
  if (!row || isBanned(ctx, row)) return undefined
  return row
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

/** The `groups` claim, as `oidcProvider.groups` says: `acme`, `acme:admin`, `acme/Developers`, `gatehouse:admin`. */
export async function groupsOf(ctx: AuthContext, row: UserRow, conf: OidcProviderConfig['groups']): Promise<string[]> {
  const groups: string[] = []
  if (conf.organizations || conf.roles) {
    const memberships = (await listMembershipsOfUser(ctx, row.id)).sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
    for (const m of memberships) {
      if (conf.organizations) groups.push(m.slug)
      if (conf.roles)
        for (const role of m.role
          .split(',')
          .map((r) => r.trim())
          .filter(Boolean))
          groups.push(`${m.slug}:${role}`)
    }
  }
  if (conf.teams) for (const t of await listTeamMembershipsOfUser(ctx, row.id)) groups.push(`${t.slug}/${t.teamName}`)
  if (conf.userRole && row.role)
    for (const role of row.role
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean))
      groups.push(`gatehouse:${role}`)
  return [...new Set(groups)]
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
    preferred_username: row.username ?? row.email,
    updated_at: Math.floor(row.updatedAt.getTime() / 1000),
    groups: withGroups ? await groupsOf(ctx, row, ctx.config().oidcProvider.groups) : undefined,
  }
}
