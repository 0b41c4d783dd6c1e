import { APIError, type ErrorStatus } from '../../core/errors.js'

/**
 * The one-time-token feature's messages, as better-auth's plugin spells them. better-auth sends
 * these with a message only (`c.error("BAD_REQUEST", {message})`), no `code`: the empty code
 * below makes the wire body `{message}` as well (server/http/app.ts).
 */
export const ONE_TIME_TOKEN_ERR = {
  INVALID_TOKEN: 'Invalid token',
  SESSION_NOT_FOUND: 'Session not found',
  SESSION_EXPIRED: 'Session expired',
  CLIENT_REQUESTS_DISABLED: 'Client requests are disabled',
} as const

export type OneTimeTokenErrorKey = keyof typeof ONE_TIME_TOKEN_ERR

export const oneTimeTokenError = (status: ErrorStatus, key: OneTimeTokenErrorKey): APIError =>
  new APIError(status, '', ONE_TIME_TOKEN_ERR[key])
