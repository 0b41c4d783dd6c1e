import type { AuthContext } from '../../core/context.js'

/**
 * TEMPORARY PORT until the app-passwords feature is on main: the check a bind makes with an app
 * password, in the exact signature app-passwords exports from its verify.ts —
 * `verifyAppPassword(ctx, userId, secret)`: true (and its last-used time recorded) when a live,
 * unexpired, unrevoked app password of that user matches.
 *
 * The LDAP feature takes the verifier through `setAppPasswordVerifier` (none: binds with an app
 * password fail like a wrong password). At merge, the lead replaces the body of this module with
 * `export { verifyAppPassword } from '../app-passwords/verify.js'` wiring, i.e.
 * `appPasswordVerifier = () => verifyAppPassword`, and declares the dependency
 * (ldap → app-passwords/verify.ts) in .dependency-cruiser.cjs.
 */
export type AppPasswordVerifier = (ctx: AuthContext, userId: string, secret: string) => Promise<boolean>

let verifier: AppPasswordVerifier | null = null

/** Installs the app-password check (the composition of app-passwords with ldap). */
export function setAppPasswordVerifier(check: AppPasswordVerifier | null): void {
  verifier = check
}

/** The app-password check, or null while no app-password feature is wired. */
export function appPasswordVerifier(): AppPasswordVerifier | null {
  return verifier
}
