import { createHash } from 'node:crypto'
import { AsyncLocalStorage } from 'node:async_hooks'
import { recordAudit } from '../../core/audit.js'
import { idleOff } from '../../idle-scope.js'
import { callerLabel, panelCaller } from '../../core/panel-caller.js'
import type { AuthContext } from '../../core/context.js'
import { randomString } from '../../crypto/random.js'
import type { By } from './clients.js'
import { oidcError } from './errors.js'
import type { OidcRegistrationTokenRow } from './schema.js'
import {
  findRegistrationTokenByHash,
  insertRegistrationToken,
  listRegistrationTokens,
  refundRegistrationToken,
  revokeRegistrationToken,
  spendRegistrationToken,
} from './store.js'

/**
 * Initial access tokens for dynamic client registration (RFC 7591 §3): created by an admin (CLI or
 * panel), shown once, stored as their SHA-256; each registration spends one use. The registration
 * itself is oidc-provider's (RFC 7591/7592), behind the mount's check of the token (index.ts).
 */

export interface RegistrationTokenView {
  id: string
  createdAt: number
  expiresAt: number | null
  usesLeft: number | null
  used: number
  revokedAt: number | null
  label: string | null
  /** Who created it: the admin's email, `os:<account>`, `recovery-link`, or `cli`. */
  createdBy: string | null
  /** Usable now: not revoked, not expired, a use left. */
  active: boolean
}

const PREFIX = 'ghrt_'
const hashToken = (token: string): string => createHash('sha256').update(token).digest('base64url')

function toView(ctx: AuthContext, row: OidcRegistrationTokenRow): RegistrationTokenView {
  const now = ctx.clock.now()
  return {
    id: row.id,
    createdAt: row.createdAt.getTime(),
    expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    usesLeft: row.usesLeft,
    used: row.used,
    revokedAt: row.revokedAt ? row.revokedAt.getTime() : null,
    label: row.label ?? null,
    createdBy: row.createdBy ?? null,
    active: !row.revokedAt && (!row.expiresAt || row.expiresAt.getTime() > now) && (row.usesLeft === null || row.usesLeft > 0),
  }
}

/** Who creates a token now: the panel's caller as the audit names them, else the CLI. */
function createdByLabel(by: By): string {
  const caller = panelCaller()
  return caller ? callerLabel(caller) : by.via
}

export async function createRegistrationToken(
  ctx: AuthContext,
  input: { expiresIn?: number | null; uses?: number | null; label?: string | null },
  by: By,
): Promise<{ token: string; registrationToken: RegistrationTokenView }> {
  const now = ctx.clock.now()
  const id = randomString(12, 'abcdefghijklmnopqrstuvwxyz0123456789')
  const token = `${PREFIX}${randomString(43)}`
  const row: OidcRegistrationTokenRow = {
    id,
    tokenHash: hashToken(token),
    usesLeft: input.uses ?? null,
    used: 0,
    expiresAt: input.expiresIn ? new Date(now + input.expiresIn * 1000) : null,
    revokedAt: null,
    createdAt: new Date(now),
    label: input.label?.trim() || null,
    createdBy: createdByLabel(by),
  }
  await insertRegistrationToken(ctx, row)
  await recordAudit(ctx, {
    type: 'oidc.registration-token-created',
    actorUserId: by.actorUserId ?? null,
    target: id,
    detail: { via: by.via, expiresIn: input.expiresIn ?? null, uses: input.uses ?? null, label: row.label },
    meta: by.meta ?? null,
  })
  return { token, registrationToken: toView(ctx, row) }
}

export async function registrationTokens(ctx: AuthContext): Promise<RegistrationTokenView[]> {
  return (await listRegistrationTokens(ctx)).map((row) => toView(ctx, row))
}

export async function revokeRegistration(ctx: AuthContext, id: string, by: By): Promise<void> {
  if (!(await revokeRegistrationToken(ctx, id, new Date(ctx.clock.now())))) throw oidcError(404, 'REGISTRATION_TOKEN_NOT_FOUND')
  await recordAudit(ctx, {
    type: 'oidc.registration-token-revoked',
    actorUserId: by.actorUserId ?? null,
    target: id,
    detail: { via: by.via },
    meta: by.meta ?? null,
  })
}

/**
 * Spends a use of a presented initial access token: the token's id, or why it is refused (not a
 * valid token; or valid but it has registered `registration.maxClientsPerToken` clients already).
 */
export async function spendRegistration(
  ctx: AuthContext,
  presented: string,
): Promise<{ tokenId: string } | { refused: 'invalid' | 'client-limit' }> {
  if (!presented.startsWith(PREFIX)) return { refused: 'invalid' }
  const hash = hashToken(presented)
  const max = ctx.config().oidcProvider.registration.maxClientsPerToken
  const tokenId = await spendRegistrationToken(ctx, hash, new Date(ctx.clock.now()), max)
  if (tokenId) return { tokenId }
  const row = await findRegistrationTokenByHash(ctx, hash)
  return { refused: row && toView(ctx, row).active && row.used >= max ? 'client-limit' : 'invalid' }
}

/** A registration that was refused (no client created) gives its use back. */
export async function refundRegistration(ctx: AuthContext, tokenId: string): Promise<void> {
  await refundRegistrationToken(ctx, tokenId)
}

/** The registration request being served: the initial access token it spent (read by the adapter when it stores the client). */
export const registrationRequest = idleOff(new AsyncLocalStorage<{ tokenId: string | null }>())
