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
  /** The outbox tried to deliver a message: sent, or failed. */
  mailDelivery(sent: boolean): void
  /** A scheduled job (backup, cleanup) finished its body successfully. */
  jobSucceeded(job: string): void
  /**
   * One more of a counter a feature declares (`metrics` in its defineFeature, a
   * `CounterDeclaration`), with its label values in the declared order. A value outside a label's
   * declared values counts as `other`; a name nobody declared counts nothing. A feature's events
   * are its own declaration, never a method here.
   */
  count(name: string, ...labelValues: string[]): void
}

/**
 * A counter a feature declares (Feature `metrics`): the metrics feature registers it and
 * `ctx.events.count(name, …values)` moves it. Labels are bounded: each lists the values it may
 * take (any other counts as `other`) unless its feature bounds it itself (`values` absent).
 */
export interface CounterDeclaration {
  name: string
  help: string
  labels?: ReadonlyArray<{ name: string; values?: readonly string[] }>
  /** Label value combinations shown as 0 before anything is counted (a dashboard's series exist from the start). */
  zeros?: ReadonlyArray<readonly string[]>
}

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
  mailDelivery: nothing,
  jobSucceeded: nothing,
  count: nothing,
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
