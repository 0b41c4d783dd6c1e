/**
 * What the server tells whoever watches it (the metrics feature): a small observer interface
 * injected into the context as `ctx.events`. Core and the features call it at the point where a
 * thing happens; with metrics off it is `noEvents`, whose methods do nothing. Every argument is a
 * bounded label (a route template, a method from a fixed list, a status code): never a user id,
 * an email, a token or a raw path.
 */
export interface ServerEvents {
  /**
   * A request was answered. `route` is the declared route (its template), or null for a path no
   * declared route takes (a mounted handler's or an unknown path); `ms` is the time from the
   * runner's start to the answer.
   */
  requestAnswered(route: { path: string; method: string } | null, method: string, status: number, ms: number): void
  /** A sign-in attempt ended: how (`email`, `username`, `social`, `passkey`, `two-factor`, …) and how it ended. */
  signIn(method: SignInMethod, outcome: SignInOutcome): void
  /** A request refused by a defence: the per-client rate limit, or an account's password lockout. */
  refused(kind: 'rate-limit' | 'lockout'): void
  /** The session cache answered a lookup (hit) or sent it to the database (miss). */
  sessionCache(hit: boolean): void
  /** The OpenID provider issued tokens for a grant (`authorization_code`, `refresh_token`, `client_credentials`, …). */
  oidcToken(grant: string): void
  /** The outbox tried to deliver a message: sent, or failed. */
  mailDelivery(sent: boolean): void
  /** A scheduled job (backup, cleanup) finished its body successfully. */
  jobSucceeded(job: string): void
  /**
   * Forward auth answered a reverse proxy: which rule decided (its index in `forwardAuth.rules`;
   * -1 the default policy, -2 a malformed path) and the answer.
   */
  forwardAuthDecision(rule: number, outcome: ForwardAuthOutcome): void
  /** The LDAP directory answered a search (its binds are sign-ins, method `ldap`). */
  ldapSearch(): void
  /** The SAML identity provider issued an assertion, or refused a request. */
  samlAssertion(outcome: 'issued' | 'refused'): void
}

/** Forward auth's answers: 200 (bypass, allowed), 401 (unauthenticated, second-factor), 403 (forbidden). */
export type ForwardAuthOutcome = 'bypass' | 'allowed' | 'unauthenticated' | 'second-factor' | 'unverified' | 'forbidden'

export type SignInMethod = 'email' | 'username' | 'social' | 'passkey' | 'two-factor' | 'email-verification' | (string & {})

/**
 * success; second-factor: the password was right and a second factor is now asked;
 * wrong-credentials; banned; locked (the account's password lockout); refused: any other refusal
 * (unverified email, disabled method, an invalid code or challenge); error: an unexpected failure.
 */
export type SignInOutcome = 'success' | 'second-factor' | 'wrong-credentials' | 'banned' | 'locked' | 'refused' | 'error'

const nothing = (): void => {}

/** The events of a server nobody watches. */
export const noEvents: ServerEvents = Object.freeze({
  requestAnswered: nothing,
  signIn: nothing,
  refused: nothing,
  sessionCache: nothing,
  oidcToken: nothing,
  mailDelivery: nothing,
  jobSucceeded: nothing,
  forwardAuthDecision: nothing,
  ldapSearch: nothing,
  samlAssertion: nothing,
})

/** The error codes that mean the credentials were wrong, whichever method refused them. */
const WRONG_CREDENTIALS = new Set([
  'INVALID_EMAIL_OR_PASSWORD',
  'INVALID_USERNAME_OR_PASSWORD',
  'INVALID_PASSWORD',
  'INVALID_CREDENTIALS',
  'INVALID_CODE',
  'INVALID_TWO_FACTOR_CODE',
  'INVALID_BACKUP_CODE',
  'INVALID_OTP',
  'OTP_HAS_EXPIRED',
  'PASSKEY_NOT_FOUND',
  'AUTHENTICATION_FAILED',
])

/** The outcome of a refused sign-in, from its error code. */
export function signInRefusal(code: string | undefined): SignInOutcome {
  if (code === undefined) return 'error'
  if (code === 'BANNED_USER') return 'banned'
  if (code === 'TOO_MANY_REQUESTS' || code === 'ACCOUNT_TEMPORARILY_LOCKED' || code === 'TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE')
    return 'locked'
  if (WRONG_CREDENTIALS.has(code)) return 'wrong-credentials'
  return 'refused'
}
