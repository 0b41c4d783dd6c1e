import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RecordedAudit } from '../core/audit.js'
import type { AdmissionRefusal } from '../core/admission-refusal.js'
import type { AuthContext } from '../core/context.js'
import type { CredentialRevocation } from '../core/credential-revocation.js'
import type { APIError } from '../core/errors.js'
import type { SessionWithUser, UserRow } from '../core/sessions.js'
import type { SignInAttempt } from '../core/sign-in.js'
import type { UserFieldsOptions } from '../core/user-store.js'
import type { Route, RouteContext } from './route.js'

/**
 * The seam through which core and HTTP call the features (issue 51 §3): the part of a feature
 * (server/feature.ts `Feature`, which extends this) that the lower floors ask for — its routes and
 * rate rules, and the hooks of the request, the sign-in pipeline, the sessions, the audit and the
 * user columns — and where a context's features are kept. It names only core's and HTTP's types, so
 * core and HTTP ask it without importing the feature frame above them; the frame
 * (server/features-of.ts) attaches a server's features here and reads them back whole.
 */
export interface FeatureHooks {
  /** better-auth's plugin id where one exists (`api-key`, `jwt`, `two-factor`, …). */
  id: string
  /** Endpoints under the base path. */
  routes?: Route[]
  /**
   * Rate-limit rules for the feature's own paths, as its better-auth plugin declares them (twoFactor:
   * 3 per 10 s under /two-factor/). They replace the default and strict rules on the matching routes
   * of this feature (and on the paths its `mount` serves, each counted apart: the OIDC provider's
   * `/oauth2/register`); a route's own `rateLimit` wins over them, and `rateLimit.customRules` over both.
   */
  rateLimit?: FeatureRateRule[]
  /**
   * Session resolution from something other than the session cookie (the api-key feature's
   * `enableSessionForAPIKeys`), asked first. Undefined (not a promise) when it does not apply, so
   * that the cookie path of every request awaits nothing for it; a promise of undefined when it
   * looked and found nothing; throws (or rejects with) APIError to refuse the request. `rc.meta` is
   * computed on first read: read it only when needed.
   */
  requestSession?: (rc: RouteContext<unknown, unknown, unknown>) => Promise<SessionWithUser | undefined> | undefined
  /**
   * A get-session answer carrying a session is about to leave: add headers (the jwt feature's
   * `set-auth-jwt`). Return a promise whenever something is added: an answer to which no hook
   * returned one may be replayed as it is to the same request (server/http/app.ts, "Replays").
   */
  sessionAnswered?: (ctx: AuthContext, answer: SessionAnswer, headers: Headers) => void | Promise<void>
  /**
   * The sign-in pipeline's second-factor step (server/http/sign-in.ts), asked for every sign-in
   * whose method asks for an enrolled second factor, before any session exists: `challenge` stands
   * in for the session (the feature set its cookie; the answer is sent as it is), `extra` adds to
   * the signed-in answer, undefined lets the sign-in go on. Throws APIError to refuse it.
   */
  secondFactor?: (rc: RouteContext<unknown, unknown, unknown>, attempt: SignInAttempt) => Promise<SecondFactorOutcome | undefined>
  /**
   * The feature's own reason not to vouch for a person at a face (core/admission.ts: forward auth,
   * SAML, LDAP, the OIDC provider): anonymous refuses an anonymous user, two-factor a second-factor
   * enrolment whose grace period is over. Null: no objection. Synchronous unless it reads the database.
   */
  faceRefusal?: (ctx: AuthContext, user: UserRow) => AdmissionRefusal | null | Promise<AdmissionRefusal | null>
  /** POST /sign-out, after the current session ended and before its cookies are cleared (the multi-session feature ends its device sessions). */
  signingOut?: (rc: RouteContext<unknown, unknown, unknown>) => void | Promise<void>
  /**
   * Sessions ended (sign-out, revocation, expiry, a ban, a deletion: core's sessions module, after
   * the delete and inside the caller's transaction when there is one): the OIDC provider queues
   * back-channel logout notices. Runs queries only.
   */
  sessionsEnded?: (ctx: AuthContext, sessionIds: readonly string[]) => Promise<void>
  /**
   * A step that evicts an intruder was taken for a user (a password change or reset, a ban, "revoke
   * all sessions", a deletion: core/credential-revocation.ts, inside the caller's transaction when
   * there is one): the app-passwords feature revokes the user's app passwords. Runs queries only.
   */
  credentialsRevoked?: (ctx: AuthContext, revocation: CredentialRevocation) => Promise<void>
  /**
   * An audit event was recorded (core/audit.ts recordAudit, after its insert and inside the caller's
   * transaction when there is one): the account feature mails its security notices for the events
   * of a person's account. Runs queries only and never throws (a failure must not fail the action).
   */
  audited?: (ctx: AuthContext, event: RecordedAudit) => Promise<void>
  /**
   * With `signUp.mode: "invitation"`, whether this (lower-cased) address is invited to sign up (the
   * organization feature: a pending invitation; admin: a sign-up invitation). core/sign-up-gate.ts.
   */
  invitesSignUp?: (ctx: AuthContext, email: string) => Promise<boolean>
  /** The sign-in pipeline's last step: a session was created and its cookies set (any method). */
  signedIn?: (rc: RouteContext<unknown, unknown, unknown>, signedIn: SessionWithUser, attempt: SignInAttempt) => void | Promise<void>
  /**
   * User columns the feature owns (the username feature's username / displayUsername), read from a
   * client's free-form user input by sign-up, update-user and admin create/update
   * (users.ts readFeatureUserFields): validated; {} when none of its fields is present.
   */
  readUserFields?: (ctx: AuthContext, input: Record<string, unknown>, options: UserFieldsOptions) => Promise<Partial<UserRow>>
  /** The feature's answer to a unique clash on one of its user columns (users.ts userWriteError); undefined: not its column. */
  userFieldClash?: (error: unknown) => APIError | undefined
  /**
   * A Node request handler (Koa or Connect style) serving paths under the base path that no
   * declared route takes: the OIDC provider feature mounts oidc-provider so. `handles` is asked
   * with the path relative to the base path (after the rate limit); `handle` gets Node's request
   * (its `url` as received) and response and writes the answer itself.
   */
  mount?: {
    handles(ctx: AuthContext, path: string): boolean
    handle(rc: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void>
    /**
     * POST paths (relative to the base path) also taken straight from node:http, ahead of h3's
     * router, when the request target is exactly the path: the same rate limit, request id,
     * metrics and handler, without the router and srvx's web Request emulation (server/http/app.ts,
     * the direct handler). For the OIDC token endpoint, the provider's busiest path.
     */
    directPosts?: readonly string[]
  }
}

export interface FeatureRateRule {
  pathMatcher: (path: string) => boolean
  rule: (ctx: AuthContext) => { window: number; max: number }
}

export type SecondFactorOutcome =
  | { challenge: Record<string, unknown> }
  | { extra: Record<string, unknown>; withSession?: (created: SessionWithUser) => Promise<void> }

/** A get-session answer: the session and the public user (from the database or the cookie cache). */
export interface SessionAnswer {
  session: { id: string; userId: string; activeOrganizationId?: string | null }
  user: { id: string } & Record<string, unknown>
}

const attached = new WeakMap<object, readonly FeatureHooks[]>()
const none: readonly FeatureHooks[] = []

/** Keeps `list` as the features `ctx` runs (server/features-of.ts attachFeatures, the one caller). */
export function attachHooks(ctx: object, list: readonly FeatureHooks[]): void {
  attached.set(ctx, list)
}

/** The features `ctx` runs, as core and HTTP see them; none in tool contexts (the CLI) that attach none. */
export function hooksOf(ctx: object): readonly FeatureHooks[] {
  return attached.get(ctx) ?? none
}

const withHookByList = new WeakMap<readonly object[], Map<string, readonly object[]>>()

/**
 * The members of `list` that declare `hook`, in list order, worked out once per list: get-session
 * asks two hooks on every request (requestSession, sessionAnswered), which one or two of some
 * thirty features declare. Generic so the frame's `featuresWith` shares it for the whole Feature.
 */
export function membersWith<T extends object, K extends keyof T>(list: readonly T[], hook: K): readonly (T & Required<Pick<T, K>>)[] {
  let byHook = withHookByList.get(list)
  if (!byHook) {
    byHook = new Map()
    withHookByList.set(list, byHook)
  }
  let found = byHook.get(hook as string)
  if (!found) {
    found = list.filter((member) => member[hook] !== undefined)
    byHook.set(hook as string, found)
  }
  return found as readonly (T & Required<Pick<T, K>>)[]
}

/** The features of `ctx` that declare `hook`. */
export function hooksWith<K extends keyof FeatureHooks>(ctx: object, hook: K): readonly (FeatureHooks & Required<Pick<FeatureHooks, K>>)[] {
  return membersWith(hooksOf(ctx), hook)
}
