import type { AuthContext } from '../../core/context.js'
import { hmacBase64Url, purposeKey, safeEqual } from '../../crypto/sign.js'
import type { AppPasswordRow } from './schema.js'
import { listAppPasswordsOf, touchAppPassword } from './store.js'

/**
 * What other features ask of app passwords (LDAP binds): does this secret open this user's
 * account, and must this user use an app password at all. Nothing here writes the audit log: the
 * caller audits the bind as it audits any sign-in.
 */

/** The stored form of a secret: HMAC-SHA256 under a key derived from the auth secret for this purpose only. */
export const hashAppPassword = (ctx: AuthContext, secret: string): string => hmacBase64Url(purposeKey(ctx.secret, 'app-password'), secret)

/** Live: not expired at `now` (a revoked app password is deleted). */
export const isLive = (row: Pick<AppPasswordRow, 'expiresAt'>, now: number): boolean =>
  row.expiresAt === null || row.expiresAt.getTime() > now

/** lastUsedAt is written at most once a minute per app password: a client binding in a loop is not a write per bind. */
const TOUCH_EVERY_MS = 60_000

/**
 * True when `secret` is one of this user's live app passwords; its last use is recorded. Every
 * one of the user's app passwords is compared, in constant time, whatever matches first.
 */
export async function verifyAppPassword(ctx: AuthContext, userId: string, secret: string): Promise<boolean> {
  return (await matchAppPassword(ctx, userId, secret)) !== null
}

/**
 * verifyAppPassword's check, answering when the matched app password expires (null: never), or
 * null when none matched: the LDAP bind memo remembers a bind no longer than that.
 */
export async function matchAppPassword(ctx: AuthContext, userId: string, secret: string): Promise<{ expiresAt: number | null } | null> {
  if (!secret) return null
  const rows = await listAppPasswordsOf(ctx, userId)
  if (rows.length === 0) return null
  const hash = hashAppPassword(ctx, secret)
  let found: AppPasswordRow | undefined
  for (const row of rows) if (safeEqual(row.hash, hash) && !found) found = row
  const now = ctx.clock.now()
  if (!found || !isLive(found, now)) return null
  const last = found.lastUsedAt?.getTime()
  if (last === undefined || now - last >= TOUCH_EVERY_MS || now < last) await touchAppPassword(ctx, found.id, now)
  return { expiresAt: found.expiresAt?.getTime() ?? null }
}

/**
 * Whether a password sign-in of this user is held for a second factor (the sign-in pipeline's
 * rule: two-factor is on and the user enrolled). Such a user binds over LDAP with an app password,
 * not the main password, unless `ldap.allowMainPasswordWithSecondFactor` says otherwise. A passkey
 * alone is no second factor here: the web password sign-in of such a user asks for nothing more.
 */
export function hasSecondFactor(ctx: AuthContext, user: { twoFactorEnabled?: boolean | null }): boolean {
  return ctx.config().twoFactor.enabled && user.twoFactorEnabled === true
}
