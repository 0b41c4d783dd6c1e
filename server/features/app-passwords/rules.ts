import { z } from 'zod'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { CredentialRevocation } from '../../core/credential-revocation.js'
import { generateId, randomString } from '../../crypto/random.js'
import { appPasswordError } from './errors.js'
import type { AppPasswordRow } from './schema.js'
import { countAppPasswordsOf, deleteAppPasswordOf, deleteAppPasswordsOf, insertAppPassword, listAppPasswordsOf } from './store.js'
import { hashAppPassword, isLive } from './verify.js'

/** Secrets: 28 characters of [A-Za-z0-9] (166 bits; 142 bits besides the four shown as the hint). */
export const SECRET_LENGTH = 28
/** How many app passwords one person may hold. */
export const MAX_PER_USER = 50
/** The longest expiry one may ask for: ten years, in seconds. */
export const MAX_EXPIRES_IN = 10 * 365 * 86_400

export const createBody = z.object({
  name: z.string().trim().min(1).max(64).meta({ description: 'What the app password is for (e.g. "NAS")' }),
  expiresIn: z
    .number()
    .int()
    .min(60)
    .max(MAX_EXPIRES_IN)
    .nullable()
    .optional()
    .meta({ description: 'Seconds until it stops working; absent or null: never' }),
})
export type CreateInput = z.output<typeof createBody>

export const revokeBody = z.object({ id: z.string().min(1).meta({ description: 'The app password to revoke' }) })

/** An app password as the owner and the panel see it: never the hash, never the secret. */
export interface AppPasswordView {
  id: string
  name: string
  hint: string
  createdAt: number
  expiresAt: number | null
  lastUsedAt: number | null
  expired: boolean
}

export const toView = (row: AppPasswordRow, now: number): AppPasswordView => ({
  id: row.id,
  name: row.name,
  hint: row.hint,
  createdAt: row.createdAt.getTime(),
  expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
  lastUsedAt: row.lastUsedAt ? row.lastUsedAt.getTime() : null,
  expired: !isLive(row, now),
})

/** Makes an app password for `userId`; the secret is in this answer and nowhere else, ever. */
export async function createAppPassword(
  ctx: AuthContext,
  userId: string,
  input: CreateInput,
  meta: RequestMeta | null,
): Promise<{ id: string; name: string; password: string; hint: string; createdAt: number; expiresAt: number | null }> {
  if ((await countAppPasswordsOf(ctx, userId)) >= MAX_PER_USER) throw appPasswordError(400, 'TOO_MANY_APP_PASSWORDS')
  const now = ctx.clock.now()
  const password = randomString(SECRET_LENGTH)
  const row: AppPasswordRow = {
    id: generateId(),
    userId,
    name: input.name,
    hash: hashAppPassword(ctx, password),
    hint: password.slice(-4),
    createdAt: new Date(now),
    expiresAt: input.expiresIn ? new Date(now + input.expiresIn * 1000) : null,
    lastUsedAt: null,
  }
  await insertAppPassword(ctx, row)
  await recordAudit(ctx, {
    type: 'app-password.created',
    actorUserId: userId,
    target: row.id,
    detail: { name: row.name, expiresAt: row.expiresAt?.toISOString() ?? null },
    meta,
  })
  return { id: row.id, name: row.name, password, hint: row.hint, createdAt: now, expiresAt: row.expiresAt?.getTime() ?? null }
}

export async function listAppPasswords(ctx: AuthContext, userId: string): Promise<AppPasswordView[]> {
  const now = ctx.clock.now()
  return (await listAppPasswordsOf(ctx, userId)).map((row) => toView(row, now))
}

/**
 * Revokes (deletes) one of `userId`'s app passwords; another person's id is not found. By the
 * owner (`meta` of their request) or from the panel (null: the audit's actor is the panel's caller).
 */
export async function revokeAppPassword(ctx: AuthContext, userId: string, id: string, meta: RequestMeta | null): Promise<void> {
  const row = await deleteAppPasswordOf(ctx, userId, id)
  if (!row) throw appPasswordError(404, 'APP_PASSWORD_NOT_FOUND')
  await recordAudit(ctx, {
    type: 'app-password.revoked',
    ...(meta ? { actorUserId: userId } : { targetUserId: userId }),
    target: row.id,
    detail: { name: row.name, via: meta ? 'api' : 'panel' },
    meta,
  })
}

/**
 * A step that evicts an intruder was taken (core/credential-revocation.ts): every app password of
 * the user is revoked, each with its audit event naming the reason; a change the person made
 * themself keeps them when `appPasswords.keepOnPasswordChange` says so. Inside the step's
 * transaction: the password, the ban or the deletion and the revocation commit together.
 */
export async function revokeAppPasswordsFor(ctx: AuthContext, revocation: CredentialRevocation): Promise<void> {
  if (revocation.reason === 'password-changed' && ctx.config().appPasswords.keepOnPasswordChange) return
  const rows = await deleteAppPasswordsOf(ctx, revocation.userId)
  for (const row of rows) {
    await recordAudit(ctx, {
      type: 'app-password.revoked',
      actorUserId: revocation.actorUserId,
      targetUserId: revocation.userId,
      target: row.id,
      detail: { name: row.name, reason: revocation.reason },
      meta: revocation.meta,
    })
  }
}
