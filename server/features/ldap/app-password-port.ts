import { verifyAppPassword } from '../app-passwords/verify.js'

/**
 * The check a bind makes with an app password: app-passwords' `verifyAppPassword(ctx, userId,
 * secret)`, true (and its last-used time recorded) when a live, unexpired app password of that
 * user matches.
 */
export type AppPasswordVerifier = typeof verifyAppPassword

export const appPasswordVerifier = (): AppPasswordVerifier | null => verifyAppPassword
