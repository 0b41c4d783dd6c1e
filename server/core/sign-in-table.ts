import { type AdmissionRefusal, type Face, admissionError, admissionRefusal } from './admission.js'
import { recordAudit } from './audit.js'
import type { AuthContext, RequestMeta } from './context.js'
import { APIError } from './errors.js'
import { signInRefusal } from './events.js'
import type { SessionRow, SessionWithUser, UserRow } from './sessions.js'
import { admitSignIn, openSignInSession, refuseSignIn, type SignInAttempt, signInDetail } from './sign-in.js'

/**
 * The house's one sign-in table: every outlet that lets a person in (or vouches for one) runs the
 * rows marked with it, in this order, and nothing else (as node-oidc-provider's authorization is a
 * list of steps). A new face is one more outlet name in the rows it needs, never a fifth copy of
 * the sequence.
 *
 * Outlets:
 * - `cookie`: the HTTP sign-in methods (password, username, social, passkey, magic link, email
 *   OTP, two-factor's second step, anonymous): a session in this client's cookies
 *   (server/http/sign-in.ts `finishSignIn` supplies the rows only HTTP has: second factor, answer,
 *   signed-in hooks);
 * - `token`: a session handed to another device as a token (device authorization's POST /device/token,
 *   `finishTokenSignIn`);
 * - `bind`: an LDAP simple bind (features/ldap/bind.ts): a sign-in without a session that also
 *   vouches for the person to the directory's client;
 * - `face`: an existing session (or a person) asking a face for an assertion, tokens or headers
 *   (SAML, the OIDC provider, forward auth): `admitToFace`.
 *
 * The identification before the table (who is this: a password checked, a code spent) is each
 * method's own; its refusals are counted by `identifying`.
 */
export type Outlet = 'cookie' | 'token' | 'bind' | 'face'

export const SIGN_IN_TABLE = [
  {
    step: 'admit',
    outlets: ['cookie', 'token', 'bind'],
    does: 'a ban (an expired one is cleared), an unverified email while requireEmailVerification is on, the account lock',
  },
  {
    step: 'vouch',
    outlets: ['bind', 'face'],
    does: "the admission rule of every face (core/admission.ts): ban, API key, impersonation, a feature's reason, identity.requireVerifiedEmail",
  },
  { step: 'second-factor', outlets: ['cookie'], does: "each feature's secondFactor hook may hold the session for a challenge" },
  {
    step: 'commit',
    outlets: ['cookie', 'token', 'bind'],
    does: "the identification's writes, the session (cookie, token; none for a bind) and the user.sign-in audit in one transaction",
  },
  { step: 'answer', outlets: ['cookie'], does: 'the session cookies (session, dont_remember, cookie cache, set-auth-token)' },
  { step: 'signed-in', outlets: ['cookie'], does: "each feature's signedIn hook, after the session exists" },
  { step: 'metric', outlets: ['cookie', 'token', 'bind'], does: 'the sign-in metric: ctx.events.signIn(method, outcome), refusals too' },
] as const satisfies ReadonlyArray<{ step: string; outlets: readonly Outlet[]; does: string }>

export type SignInStep = (typeof SIGN_IN_TABLE)[number]['step']

/** The rows an outlet runs, in order. */
export const stepsOf = (outlet: Outlet): SignInStep[] =>
  SIGN_IN_TABLE.filter((row) => (row.outlets as readonly Outlet[]).includes(outlet)).map((row) => row.step)

/** One pass through the table: what the rows read and write. */
export interface SignInRun {
  readonly ctx: AuthContext
  readonly meta: RequestMeta
  readonly outlet: Outlet
  /** The attempt; after `admit`, its user is the row as it now is. */
  attempt: SignInAttempt
  /** The session the request came with (a face's question); null for a sign-in. */
  readonly presented: SessionRow | null
  /** The session the `commit` row made (cookie, token). */
  session: SessionWithUser | null
  /** Set by a row that answers in place of the session (a second-factor challenge): the rows after it but `metric` are skipped. */
  held: Record<string, unknown> | null
  /** What features added to the answer (two-factor's enrolment notice). */
  extra: Record<string, unknown>
  /** The `vouch` row's answer. */
  refusal: AdmissionRefusal | null
}

/** The rows an outlet supplies itself (what needs its transport: HTTP's hooks and cookies). */
export type OutletRows = Partial<Record<SignInStep, (run: SignInRun) => Promise<void>>>

const CORE_ROWS: Partial<Record<SignInStep, (run: SignInRun, face?: Face) => Promise<void>>> = {
  admit: async (run) => {
    run.attempt = { ...run.attempt, user: await admitSignIn(run.ctx, run.attempt) }
  },
  vouch: async (run, face) => {
    run.refusal = await admissionRefusal(run.ctx, { user: run.attempt.user, session: run.presented }, face ?? 'ldap')
    // A sign-in that vouches (a bind) is refused; a face gets the reason and answers in its own way.
    if (run.refusal && run.outlet !== 'face') throw admissionError(run.ctx, run.refusal)
  },
  commit: async (run) => {
    const { ctx, attempt, meta } = run
    if (run.outlet !== 'bind') {
      run.session = await openSignInSession(ctx, attempt, meta)
      return
    }
    if (!attempt.commit && attempt.quiet) return
    await ctx.storage.transaction(async () => {
      await attempt.commit?.()
      if (!attempt.quiet)
        await recordAudit(ctx, { type: 'user.sign-in', actorUserId: attempt.user.id, detail: signInDetail(attempt), meta })
    })
  },
  metric: async (run) => {
    run.ctx.events.signIn(run.attempt.method, run.held ? 'second-factor' : 'success')
  },
}

/**
 * Runs the table for one outlet. A refusal (an APIError) in a row up to the commit is audited
 * (`user.sign-in`, failure: the identification's writes still stand unless the commit itself
 * failed); any failure is counted in the metric when the outlet has that row, and thrown.
 */
export async function runSignIn(
  ctx: AuthContext,
  outlet: Exclude<Outlet, 'face'>,
  attempt: SignInAttempt,
  meta: RequestMeta,
  own: OutletRows = {},
): Promise<SignInRun> {
  const run: SignInRun = { ctx, meta, outlet, attempt, presented: null, session: null, held: null, extra: {}, refusal: null }
  const steps = stepsOf(outlet)
  for (const step of steps) {
    if (run.held && step !== 'metric') continue
    const row = own[step] ?? CORE_ROWS[step]
    if (!row) throw new Error(`sign-in table: the ${outlet} outlet runs "${step}" but nothing supplies it`)
    try {
      await row(run)
    } catch (e) {
      const at = steps.indexOf(step)
      const commitAt = steps.indexOf('commit')
      // A refusal up to the commit is audited; the identification's writes stand unless the commit itself failed.
      if (e instanceof APIError && at <= commitAt)
        await refuseSignIn(ctx, at === commitAt ? { ...run.attempt, commit: undefined } : run.attempt, e, meta)
      if (steps.includes('metric')) ctx.events.signIn(attempt.method, signInRefusal(errorCode(e)))
      throw e
    }
  }
  return run
}

/** A face's question is not a sign-in request: the rows it runs read no request. */
const NO_REQUEST: RequestMeta = { ipAddress: null, userAgent: null }

/**
 * The `face` outlet: whether a face (SAML, the OIDC provider, forward auth) may vouch for this
 * person now, with the session the request came with. Null: admitted; else the first reason it
 * may not. No audit and no sign-in metric: asking is not signing in (each face audits and counts
 * its own assertions, tokens and decisions).
 */
export async function admitToFace(
  ctx: AuthContext,
  person: { user: UserRow; session?: SessionRow | null },
  face: Face,
): Promise<AdmissionRefusal | null> {
  const run: SignInRun = {
    ctx,
    meta: NO_REQUEST,
    outlet: 'face',
    attempt: { user: person.user, method: face, secondFactor: 'satisfied' },
    presented: person.session ?? null,
    session: null,
    held: null,
    extra: {},
    refusal: null,
  }
  for (const step of stepsOf('face')) await CORE_ROWS[step]?.(run, face)
  return run.refusal
}

/**
 * A method's identification step (who is this: a password checked, a code or link spent, a
 * provider's answer read), with its refusal counted in the sign-in metric under the method's name;
 * what follows, the table counts.
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
