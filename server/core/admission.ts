import { hooksWith } from '../http/feature-hooks.js'
import type { AdmissionRefusal, Face } from './admission-refusal.js'
import { type BanFields, bannedNow } from './bans.js'
import type { AuthContext } from './context.js'
import { APIError, ERR } from './errors.js'
import type { SessionRow, SessionWithUser, UserRow } from './sessions.js'

/**
 * Whether Gatehouse may vouch for a person right now: the one admission rule of every face that
 * tells an app who someone is (forward auth's Remote-* headers, SAML assertions, LDAP entries and
 * binds, the OIDC provider's tokens and claims). Three variants disagreed before it (issue 47: an
 * unverified person got OIDC tokens but no SAML assertion). The reasons, in the order asked:
 *
 * - `BANNED_USER`: a ban that has not expired (core/bans.ts `bannedNow`; an expired one no longer
 *   counts, and the sign-in table's admit step clears it);
 * - `API_KEY_SESSION`: the request's "session" stands for an API key (api-key's
 *   `enableSessionForAPIKeys`): a key is a credential for the API, not a person signing in to an app;
 * - `IMPERSONATION`: an administrator's impersonation session. No face vouches for it: an
 *   assertion, a token or Remote-* headers would let the administrator act as the person at
 *   another app, whose own audit would name the person. The hosted account pages are not a face
 *   and do show the person's account to an impersonation session (what it may change there is
 *   admin/impersonation.ts's rule). LDAP binds have no session, so this never applies to them;
 * - a feature's own reason (`faceRefusal` hook): an anonymous user (`ANONYMOUS_USER`, anonymous:
 *   there is no one to vouch for), a second-factor enrolment whose grace period is over
 *   (`TWO_FACTOR_ENROLLMENT_REQUIRED`, two-factor);
 * - `EMAIL_NOT_VERIFIED`: the email is not verified while `identity.requireVerifiedEmail` is on
 *   (default). Admin-created and imported users count as verified when the admin said so.
 *
 * better-auth's own API keeps better-auth's rule (`emailAndPassword.requireEmailVerification`,
 * core/sign-in.ts); this one is for what Gatehouse asserts to other apps.
 */

export type { AdmissionRefusal, Face } from './admission-refusal.js'

/** Who a face is asked to vouch for: the person, and the session the request came with (none for an LDAP bind). */
export interface Vouchee {
  user: UserRow
  session?: SessionRow | null
}

/** Sessions that stand for an API key (api-key's requestSession): marked where they are made, never stored. */
const apiKeySessions = new WeakSet<object>()

/** Marks a stand-in session made from an API key (the api-key feature, where it builds one). */
export function markApiKeySession<T extends SessionWithUser>(data: T): T {
  apiKeySessions.add(data.session)
  return data
}

export const standsForApiKey = (session: SessionRow): boolean => apiKeySessions.has(session)

/** `identity.requireVerifiedEmail` is on and this person's email is not verified. */
export const unverifiedRefused = (ctx: AuthContext, user: { emailVerified: boolean }): boolean =>
  ctx.config().identity.requireVerifiedEmail && !user.emailVerified

/**
 * The reasons read off the row as it is now, with the time and the configuration of this moment
 * (a ban, an unverified email): cheap and synchronous, so a face that keeps the rest beside a
 * cached session (forward auth) asks these at every request.
 */
export function refusalNow(ctx: AuthContext, user: BanFields & { emailVerified: boolean }): 'BANNED_USER' | 'EMAIL_NOT_VERIFIED' | null {
  if (bannedNow(user, ctx.clock.now())) return 'BANNED_USER'
  if (unverifiedRefused(ctx, user)) return 'EMAIL_NOT_VERIFIED'
  return null
}

/**
 * The reasons that follow from the session and the features (API key, impersonation, anonymous,
 * an overdue second-factor enrolment): what changes only with a database write, so a face may keep
 * the answer beside the session object the session cache hands out.
 */
export function standingRefusal(ctx: AuthContext, who: Vouchee): AdmissionRefusal | null | Promise<AdmissionRefusal | null> {
  if (who.session) {
    if (standsForApiKey(who.session)) return 'API_KEY_SESSION'
    if (who.session.impersonatedBy) return 'IMPERSONATION'
  }
  return featureRefusal(ctx, who.user, 0)
}

function featureRefusal(ctx: AuthContext, user: UserRow, start: number): AdmissionRefusal | null | Promise<AdmissionRefusal | null> {
  const features = hooksWith(ctx, 'faceRefusal')
  for (let i = start; i < features.length; i++) {
    const answer = features[i]?.faceRefusal(ctx, user)
    if (answer instanceof Promise) return answer.then((refusal) => refusal ?? featureRefusal(ctx, user, i + 1))
    if (answer) return answer
  }
  return null
}

/**
 * The admission rule, whole: null when the face may vouch for this person now, else the first
 * reason it may not (the order above). Synchronous unless a feature's rule reads the database.
 */
export function admissionRefusal(ctx: AuthContext, who: Vouchee, _face: Face): AdmissionRefusal | null | Promise<AdmissionRefusal | null> {
  const banned = bannedNow(who.user, ctx.clock.now())
  if (banned) return 'BANNED_USER'
  const then = (standing: AdmissionRefusal | null): AdmissionRefusal | null => standing ?? refusalNow(ctx, who.user)
  const standing = standingRefusal(ctx, who)
  return standing instanceof Promise ? standing.then(then) : then(standing)
}

/** The words of each refusal where a face answers with an error (an LDAP bind's audit, a sign-in table refusal). */
export const ADMISSION_ERRORS: Record<Exclude<AdmissionRefusal, 'BANNED_USER' | 'EMAIL_NOT_VERIFIED'>, string> = {
  API_KEY_SESSION: 'An API key does not sign in to applications',
  IMPERSONATION: 'An impersonation session does not sign in to applications',
  ANONYMOUS_USER: 'An anonymous account does not sign in to applications',
  TWO_FACTOR_ENROLLMENT_REQUIRED: 'Enrol a second factor to sign in to applications',
}

/** A refusal as an APIError (403), with the code naming the reason. */
export function admissionError(ctx: AuthContext, refusal: AdmissionRefusal): APIError {
  if (refusal === 'BANNED_USER') return new APIError(403, 'BANNED_USER', ctx.config().admin.bannedUserMessage)
  if (refusal === 'EMAIL_NOT_VERIFIED') return new APIError(403, 'EMAIL_NOT_VERIFIED', ERR.EMAIL_NOT_VERIFIED)
  return new APIError(403, refusal, ADMISSION_ERRORS[refusal])
}
