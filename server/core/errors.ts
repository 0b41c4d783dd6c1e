/**
 * Every error leaves Gatehouse as an APIError: an HTTP status, a stable `code` and the spec's
 * message. The wire body is `{code, message}`.
 */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 413 | 414 | 415 | 422 | 429 | 500 | 503

export class APIError extends Error {
  readonly status: ErrorStatus
  readonly code: string
  /** Extra response headers (e.g. X-Retry-After). */
  readonly headers: Record<string, string>
  /**
   * The input field the error concerns, when there is one ('email', 'slug', ...): the panel shows
   * the message beside that field. Not on the HTTP wire, whose body stays better-auth's `{code, message}`.
   */
  readonly field: string | undefined

  constructor(status: ErrorStatus, code: string, message: string, headers: Record<string, string> = {}, field?: string) {
    // An APIError is an answer, not a bug: skip capturing a stack trace, which costs more than
    // the rest of a 401 or 404 (and floods of those are what attacks look like).
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(message)
    Error.stackTraceLimit = limit
    this.name = 'APIError'
    this.status = status
    this.code = code
    this.headers = headers
    this.field = field
  }
}

/**
 * The messages of SPEC §8 that core and several features share, with the code better-auth puts on
 * the wire for each. A feature's own messages are in its errors.ts.
 */
export const ERR = {
  USER_NOT_FOUND: 'User not found',
  FAILED_TO_CREATE_USER: 'Failed to create user',
  FAILED_TO_CREATE_SESSION: 'Failed to create session',
  FAILED_TO_UPDATE_USER: 'Failed to update user',
  FAILED_TO_GET_SESSION: 'Failed to get session',
  INVALID_PASSWORD: 'Invalid password',
  INVALID_EMAIL: 'Invalid email',
  SOCIAL_ACCOUNT_ALREADY_LINKED: 'Social account already linked',
  PROVIDER_NOT_FOUND: 'Provider not found',
  INVALID_TOKEN: 'invalid token',
  ID_TOKEN_NOT_SUPPORTED: 'id_token not supported',
  FAILED_TO_GET_USER_INFO: 'Failed to get user info',
  USER_EMAIL_NOT_FOUND: 'User email not found',
  USER_ALREADY_EXISTS: 'User already exists',
  CREDENTIAL_ACCOUNT_NOT_FOUND: 'Credential account not found',
  ACCOUNT_NOT_FOUND: 'Account not found',
  SESSION_NOT_FOUND: 'Session not found',
  SESSION_NOT_FRESH: 'Session is not fresh',
  EMAIL_NOT_VERIFIED: 'Email not verified',
  BANNED_USER: 'You have been banned from this application. Please contact support if you believe this is an error.',
  TOO_MANY_REQUESTS: 'Too many requests. Please try again later.',
  UNAUTHORIZED: 'Unauthorized',
  NOT_FOUND: 'Not Found',
  METHOD_NOT_ALLOWED: 'Method Not Allowed',
  METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED: 'POST method requires deferSessionRefresh to be enabled in session config',
  INVALID_ORIGIN: 'Invalid origin',
  IMPERSONATION_NOT_ALLOWED: 'You cannot do this while impersonating a user',
  SIGN_UP_INVITATION_REQUIRED: 'Sign up is by invitation only',
} as const

export type ErrorKey = keyof typeof ERR

export const fail = (status: ErrorStatus, key: ErrorKey, code: string = key, field?: string): APIError =>
  new APIError(status, code, ERR[key], {}, field)

/**
 * An error OAuth 2.0 endpoints answer in RFC 6749 §5.2's words (better-auth's device authorization
 * plugin): the wire body is `{error, error_description}` — `code` goes out as `error`, the message
 * as `error_description` — instead of `{code, message}`.
 */
export class OAuthAPIError extends APIError {
  readonly oauth = true
}
