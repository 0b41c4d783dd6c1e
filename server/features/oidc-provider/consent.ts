import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { oidcError } from './errors.js'
import { consentsOfUser, deleteConsent, deleteGrantAndTokens, findConsent, upsertConsent } from './store.js'

/**
 * Remembered consent: what a person allowed an application to see (OIDC scopes and claims), kept
 * per user and client across OIDC sessions and browsers until the person or an admin revokes it.
 * The authorization endpoint asks again only when an application asks for more than this. Every
 * token issued under it belongs to one oidc-provider Grant (`grantId`); revoking deletes the
 * consent, that grant and all its codes, access and refresh tokens at once. The rule lives here,
 * used by the authorization endpoint (provider.ts), the consent page (interaction.ts), the hosted
 * "Connected apps" page (routes.ts) and the panel's user drawer (panel.ts).
 */

export interface ConnectedApp {
  clientId: string
  name: string
  logo: string | null
  /** The OIDC scopes granted (openid, email, profile, groups, offline_access). */
  scopes: string[]
  /** Individual claims granted through the `claims` parameter. */
  claims: string[]
  grantedAt: number
  updatedAt: number
}

export interface RememberedConsent {
  scopes: string[]
  claims: string[]
  grantId: string | null
}

export async function rememberedConsent(ctx: AuthContext, userId: string, clientId: string): Promise<RememberedConsent | undefined> {
  const row = await findConsent(ctx, userId, clientId)
  return row ? { scopes: row.scopes, claims: row.claims, grantId: row.grantId } : undefined
}

/** Records what the person has granted now (the union with what they had granted before) and the grant it lives in. */
export async function rememberConsent(
  ctx: AuthContext,
  input: { userId: string; clientId: string; scopes: string[]; claims: string[]; grantId: string },
): Promise<void> {
  const now = new Date(ctx.clock.now())
  const before = await findConsent(ctx, input.userId, input.clientId)
  await upsertConsent(ctx, {
    userId: input.userId,
    clientId: input.clientId,
    scopes: [...new Set([...(before?.scopes ?? []), ...input.scopes])],
    claims: [...new Set([...(before?.claims ?? []), ...input.claims])],
    grantId: input.grantId,
    createdAt: before?.createdAt ?? now,
    updatedAt: now,
  })
}

/** Points a remembered consent at the grant recreated from it (the previous one expired or was removed). */
export async function attachGrant(ctx: AuthContext, userId: string, clientId: string, grantId: string): Promise<void> {
  const row = await findConsent(ctx, userId, clientId)
  if (row) await upsertConsent(ctx, { ...row, grantId })
}

/** The applications a person has allowed, with what each may see. */
export async function connectedApps(ctx: AuthContext, userId: string): Promise<ConnectedApp[]> {
  return (await consentsOfUser(ctx, userId)).map((row) => ({
    clientId: row.clientId,
    name: row.clientName,
    logo: row.clientLogo,
    scopes: row.scopes,
    claims: row.claims,
    grantedAt: row.createdAt.getTime(),
    updatedAt: row.updatedAt.getTime(),
  }))
}

/**
 * Revokes a person's consent to an application: the consent is forgotten and the grant's tokens
 * (codes, access and refresh tokens) stop working at once; the next sign-in asks again.
 */
export async function revokeConsent(
  ctx: AuthContext,
  userId: string,
  clientId: string,
  by: { via: 'account' | 'panel'; actorUserId: string | null; meta?: RequestMeta | null },
): Promise<void> {
  const removed = await ctx.storage.transaction(async () => {
    const row = await deleteConsent(ctx, userId, clientId)
    if (!row) return undefined
    const tokens = row.grantId ? await deleteGrantAndTokens(ctx, row.grantId) : 0
    await recordAudit(ctx, {
      type: 'oidc.consent-revoked',
      actorUserId: by.actorUserId,
      target: clientId,
      detail: { via: by.via, userId, scopes: row.scopes, rowsRemoved: tokens },
      meta: by.meta ?? null,
    })
    return row
  })
  if (!removed) throw oidcError(404, 'CONSENT_NOT_FOUND')
}
