import type { SignInAttempt } from '../core/sign-in.js'
import type { AuthContext } from '../core/context.js'
import type { SessionWithUser } from '../core/sessions.js'
import { identifying, type OutletRows, runSignIn } from '../core/sign-in-table.js'
import { toPublicUser } from '../core/users.js'
import type { RouteContext } from './route.js'
import { setSessionCookies } from './session.js'
import { hooksOf } from './feature-hooks.js'
import { hostedPageIfOn } from './hosted-page-url.js'

/** The identification step's metric (the methods import it from here, beside finishSignIn). */
export { identifying }

type AnyRouteContext = RouteContext<unknown, unknown, unknown>

/**
 * How a sign-in ended: with a session (its cookies are set), or with a second-factor challenge in
 * place of the session (the feature that asked set its cookie and wrote `answer`).
 */
export type SignInResult =
  | { kind: 'session'; signedIn: SessionWithUser; extra: Record<string, unknown> }
  | { kind: 'second-factor'; answer: Record<string, unknown> }

/**
 * The `cookie` outlet of the sign-in table (server/core/sign-in-table.ts): every HTTP sign-in
 * method calls it with the user it identified. The table runs admit → second factor → the session,
 * the method's writes and the audit in one transaction → cookies → the features' `signedIn` hooks
 * → the sign-in metric; this module supplies the rows only HTTP has (second factor, answer,
 * signed-in), which need the request.
 */
export async function finishSignIn(rc: AnyRouteContext, attempt: SignInAttempt): Promise<SignInResult> {
  const run = await runSignIn(rc.ctx, 'cookie', attempt, rc.meta, cookieRows(rc))
  if (run.held) return { kind: 'second-factor', answer: run.held }
  if (!run.session) throw new Error('sign-in table: the cookie outlet ended without a session')
  return { kind: 'session', signedIn: run.session, extra: run.extra }
}

/**
 * The JSON answer of a sign-in that may be held for a second factor: the challenge as it is, or
 * the method's own better-auth body for the session (`shape`) with what features added (`extra`,
 * such as two-factor's enrolment notice), so no method can drop it.
 */
export function jsonSignInAnswer<T extends object>(result: SignInResult, shape: (signedIn: SessionWithUser) => T) {
  if (result.kind === 'second-factor') return result.answer
  return { ...shape(result.signedIn), ...result.extra }
}

/** The rows of the table only the HTTP methods run: they need the request and its response. */
function cookieRows(rc: AnyRouteContext): OutletRows {
  return {
    'second-factor': async (run) => {
      if (run.attempt.secondFactor !== 'due') return
      for (const feature of hooksOf(rc.ctx)) {
        const outcome = await feature.secondFactor?.(rc, run.attempt)
        if (!outcome) continue
        if ('challenge' in outcome) {
          // The identification succeeded: its writes stand while the session waits for the second factor.
          await run.attempt.commit?.()
          run.held = outcome.challenge
          return
        }
        run.extra = { ...run.extra, ...outcome.extra }
        const earlier = run.attempt.withSession
        const own = outcome.withSession
        if (own)
          run.attempt.withSession = async (created) => {
            await earlier?.(created)
            await own(created)
          }
      }
    },
    answer: async (run) => {
      if (run.session) setSessionCookies(rc, run.session, { dontRemember: run.attempt.rememberMe === false })
    },
    'signed-in': async (run) => {
      if (!run.session) return
      for (const feature of hooksOf(rc.ctx)) await feature.signedIn?.(rc, run.session, run.attempt)
    },
  }
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
  const methods = Array.isArray(challenge.twoFactorMethods) ? challenge.twoFactorMethods.join(',') : ''
  return hostedPageIfOn(ctx, 'sign-in', { step: 'two-factor', methods, returnTo })
}

/**
 * The hosted enrolment step (the Two-factor page, `?enrol=1`) for a person whose second-factor
 * enrolment a face waits for (two-factor enforcement, issue 49 §10), then back to `returnTo`.
 * Null when the hosted pages are off: there is nowhere to enrol.
 */
export function enrolmentStepURL(ctx: AuthContext, returnTo: string): string | null {
  return hostedPageIfOn(ctx, 'account/two-factor', { enrol: '1', returnTo })
}

/**
 * The `token` outlet of the sign-in table: a sign-in whose session is handed to another device as
 * a token rather than set in this client's cookies (device authorization's POST /device/token):
 * admit, then the session, the method's writes and the audit in one transaction, and the metric;
 * no cookies and no `signedIn` hooks (they set this client's cookies). Such a method has settled
 * the second factor itself (`satisfied`: the device was approved from a full session, which passed
 * any second factor when it was signed in), so no challenge can stand in for the session here.
 */
export async function finishTokenSignIn(
  rc: AnyRouteContext,
  attempt: SignInAttempt & { secondFactor: 'satisfied' | 'passed' },
): Promise<SessionWithUser> {
  const run = await runSignIn(rc.ctx, 'token', attempt, rc.meta)
  if (!run.session) throw new Error('sign-in table: the token outlet ended without a session')
  return run.session
}
