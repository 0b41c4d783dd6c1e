import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The multi-session feature's messages (better-auth's MULTI_SESSION_ERROR_CODES). */
export const MULTI_SESSION_ERR = {
  INVALID_SESSION_TOKEN: 'Invalid session token',
} as const

export type MultiSessionErrorKey = keyof typeof MULTI_SESSION_ERR

export const multiSessionError = (status: ErrorStatus, key: MultiSessionErrorKey): APIError =>
  new APIError(status, key, MULTI_SESSION_ERR[key])
