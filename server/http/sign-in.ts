import { admitSignIn, openSignInSession, refuseSignIn, type SignInAttempt } from '../core/sign-in.js'
import type { AuthContext } from '../core/context.js'
import { APIError } from '../core/errors.js'
import type { SessionWithUser } from '../core/sessions.js'
import { toPublicUser } from '../core/users.js'
import type { RouteContext } from './route.js'
import { setSessionCookies } from './session.js'
import { featuresOf } from '../features-of.js'

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

/**
 * How a sign-in ended: with a session (its cookies are set), or with a second-factor challenge in
 * place of the session (the feature that asked set its cookie and wrote `answer`).
 */
export type SignInResult =
  | { kind: 'session'; signedIn: SessionWithUser; extra: Record<string, unknown> }
  | { kind: 'second-factor'; answer: Record<string, unknown> }

/**
 * The one sign-in pipeline (server/core/sign-in.ts has its domain half). Every method calls it
 * with the user it identified:
 *
 *   admit: banned / unverified-when-required / locked → refused (audited, the method's writes kept)
 *   second factor: when the method asks for one (`secondFactor: 'due'`), each feature's
 *     `secondFactor` hook may stand in for the session (a challenge) or add to the answer
 *   session + the method's writes + audit in one transaction
 *   cookies (session, dont_remember, cookie cache, set-auth-token)
 *   hooks: each feature's `signedIn` (after the session exists)
 */
export async function finishSignIn(rc: AnyRouteContext, attempt: SignInAttempt): Promise<SignInResult> {
  const { ctx, meta } = rc
  let admitted: SignInAttempt
  let extra: Record<string, unknown> = {}
  try {
    admitted = { ...attempt, user: await admitSignIn(ctx, attempt) }
    if (attempt.secondFactor === 'due') {
      for (const feature of featuresOf(ctx)) {
        const outcome = await feature.secondFactor?.(rc, admitted)
        if (!outcome) continue
        if ('challenge' in outcome) {
          await attempt.commit?.()
          return { kind: 'second-factor', answer: outcome.challenge }
        }
        extra = { ...extra, ...outcome.extra }
        const earlier = admitted.withSession
        const own = outcome.withSession
        if (own)
          admitted.withSession = async (created) => {
            await earlier?.(created)
            await own(created)
          }
      }
    }
  } catch (e) {
    if (e instanceof APIError) await refuseSignIn(ctx, attempt, e, meta)
    throw e
  }
  let signedIn: SessionWithUser
  try {
    signedIn = await openSignInSession(ctx, admitted, meta)
  } catch (e) {
    // The user went away between identification and the session (deleted, banned in between).
    if (e instanceof APIError) await refuseSignIn(ctx, { ...attempt, commit: undefined }, e, meta)
    throw e
  }
  setSessionCookies(rc, signedIn, { dontRemember: attempt.rememberMe === false })
  for (const feature of featuresOf(ctx)) await feature.signedIn?.(rc, signedIn, admitted)
  return { kind: 'session', signedIn, extra }
}

/**
 * The JSON answer of a sign-in endpoint (email, username, passkey, …): `{redirect, token, url?,
 * user}` plus what features added, a Location header when a callbackURL was given, or the
 * second-factor answer (`{twoFactorRedirect, twoFactorMethods}`) in place of the session.
 */
export async function signInAnswer(rc: AnyRouteContext, attempt: SignInAttempt, request: { callbackURL?: string } = {}) {
  const result = await finishSignIn(rc, attempt)
  if (result.kind === 'second-factor') return result.answer
  return signedInBody(rc, result.signedIn, request.callbackURL, result.extra)
}

/** better-auth's body after a sign-in that made a session. */
export function signedInBody(rc: AnyRouteContext, signedIn: SessionWithUser, callbackURL?: string, extra: Record<string, unknown> = {}) {
  if (callbackURL) rc.response.headers.set('location', callbackURL)
  return {
    redirect: Boolean(callbackURL),
    token: signedIn.session.token,
    ...(callbackURL ? { url: callbackURL } : {}),
    user: toPublicUser(signedIn.user),
    ...extra,
  }
}

/**
 * Where a sign-in by redirect (a provider's callback, a followed link) sends the browser when the
 * pipeline asked for a second factor: the hosted sign-in page's second step, which holds the
 * two_factor cookie, then goes on to `returnTo`. Null when the hosted pages are off.
 */
export function secondFactorStepURL(ctx: AuthContext, returnTo: string, challenge: Record<string, unknown>): string | null {
  if (!ctx.config().hostedPages.enabled) return null
  const methods = Array.isArray(challenge.twoFactorMethods) ? challenge.twoFactorMethods.join(',') : ''
  return `${ctx.baseURL}/ui/sign-in?${new URLSearchParams({ step: 'two-factor', methods, returnTo })}`
}

/**
 * The pipeline for a sign-in whose session is handed to another device as a token rather than set
 * in this client's cookies (device authorization's POST /device/token): admit, then the session,
 * the method's writes and the audit in one transaction, as finishSignIn does; no cookies and no
 * `signedIn` hooks (they set this client's cookies). Such a method has settled the second factor
 * itself (`satisfied`: the device was approved from a full session, which passed any second factor
 * when it was signed in), so no challenge can stand in for the session here.
 */
export async function finishTokenSignIn(
  rc: AnyRouteContext,
  attempt: SignInAttempt & { secondFactor: 'satisfied' | 'passed' },
): Promise<SessionWithUser> {
  const { ctx, meta } = rc
  let admitted: SignInAttempt
  try {
    admitted = { ...attempt, user: await admitSignIn(ctx, attempt) }
  } catch (e) {
    if (e instanceof APIError) await refuseSignIn(ctx, attempt, e, meta)
    throw e
  }
  try {
    return await openSignInSession(ctx, admitted, meta)
  } catch (e) {
    if (e instanceof APIError) await refuseSignIn(ctx, { ...attempt, commit: undefined }, e, meta)
    throw e
  }
}
