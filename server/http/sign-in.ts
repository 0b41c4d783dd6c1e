import { admitSignIn, openSignInSession, refuseSignIn, type SignInAttempt } from '../core/sign-in.js'
import type { AuthContext } from '../core/context.js'
import { APIError } from '../core/errors.js'
import { signInRefusal } from '../core/events.js'
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
 *   metric: `ctx.events.signIn(method, outcome)`, here for every method (the identification's own
 *     refusals are counted by `identifying`, the method's step before this one)
 */
export async function finishSignIn(rc: AnyRouteContext, attempt: SignInAttempt): Promise<SignInResult> {
  try {
    const result = await runPipeline(rc, attempt)
    rc.ctx.events.signIn(attempt.method, result.kind === 'second-factor' ? 'second-factor' : 'success')
    return result
  } catch (e) {
    rc.ctx.events.signIn(attempt.method, signInRefusal(e instanceof APIError ? e.code : undefined))
    throw e
  }
}

/**
 * A method's identification step (who is this: a password checked, a code or link spent, a
 * provider's answer read), with its refusal counted in the sign-in metric under the method's
 * name; what follows, the pipeline counts.
 */
export async function identifying<T>(ctx: AuthContext, method: string, identify: () => T | Promise<T>): Promise<T> {
  try {
    return await identify()
  } catch (e) {
    ctx.events.signIn(method, signInRefusal(errorCode(e)))
    throw e
  }
}

/** An APIError's code, or the `code` of a method's own error (a magic link's); undefined for anything unexpected. */
const errorCode = (e: unknown): string | undefined =>
  e instanceof APIError ? e.code : typeof (e as { code?: unknown } | null)?.code === 'string' ? (e as { code: string }).code : undefined

/**
 * The JSON answer of a sign-in that may be held for a second factor: the challenge as it is, or
 * the method's own better-auth body for the session (`shape`) with what features added (`extra`,
 * such as two-factor's enrolment notice), so no method can drop it.
 */
export function jsonSignInAnswer<T extends object>(result: SignInResult, shape: (signedIn: SessionWithUser) => T) {
  if (result.kind === 'second-factor') return result.answer
  return { ...shape(result.signedIn), ...result.extra }
}

async function runPipeline(rc: AnyRouteContext, attempt: SignInAttempt): Promise<SignInResult> {
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
export async function signInAnswer(
  rc: AnyRouteContext,
  identify: () => Promise<SignInAttempt>,
  method: string,
  request: { callbackURL?: string } = {},
) {
  const result = await finishSignIn(rc, await identifying(rc.ctx, method, identify))
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
    ctx.events.signIn(attempt.method, signInRefusal(e instanceof APIError ? e.code : undefined))
    throw e
  }
  try {
    const signedIn = await openSignInSession(ctx, admitted, meta)
    ctx.events.signIn(attempt.method, 'success')
    return signedIn
  } catch (e) {
    if (e instanceof APIError) await refuseSignIn(ctx, { ...attempt, commit: undefined }, e, meta)
    ctx.events.signIn(attempt.method, signInRefusal(e instanceof APIError ? e.code : undefined))
    throw e
  }
}
