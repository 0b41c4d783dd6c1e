import type { AuthContext } from '../../core/context.js'
import { safeEqual } from '../../crypto/sign.js'
import { listAppPasswordsOf } from '../app-passwords/store.js'
import { hashAppPassword, verifyAppPassword } from '../app-passwords/verify.js'

/**
 * The check a bind makes with an app password: app-passwords' `verifyAppPassword(ctx, userId,
 * secret)` (a live, unexpired app password of that user matches; its last-used time recorded at
 * most once a minute), then, for the bind memo (bind.ts), when the matched one expires: null when
 * none matched, `expiresAt` null when it never expires.
 */
export type AppPasswordVerifier = (ctx: AuthContext, userId: string, secret: string) => Promise<{ expiresAt: number | null } | null>

async function verifyForBind(ctx: AuthContext, userId: string, secret: string): Promise<{ expiresAt: number | null } | null> {
  if (!(await verifyAppPassword(ctx, userId, secret))) return null
  const hash = hashAppPassword(ctx, secret)
  const row = (await listAppPasswordsOf(ctx, userId)).find((r) => safeEqual(r.hash, hash))
  // Revoked in between: no bind.
  return row ? { expiresAt: row.expiresAt?.getTime() ?? null } : null
}

export const appPasswordVerifier = (): AppPasswordVerifier | null => verifyForBind
