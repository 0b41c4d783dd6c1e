import type { AuthContext } from '../../core/context.js'
import { matchAppPassword } from '../app-passwords/verify.js'

/**
 * The check a bind makes with an app password: app-passwords' `matchAppPassword(ctx, userId,
 * secret)` (a live, unexpired app password of that user matches; its last-used time recorded at
 * most once a minute): when the matched one expires (null: never, for the bind memo, bind.ts), or
 * null when none matched.
 */
export type AppPasswordVerifier = (ctx: AuthContext, userId: string, secret: string) => Promise<{ expiresAt: number | null } | null>

export const appPasswordVerifier = (): AppPasswordVerifier | null => matchAppPassword
