import { APIError, type ErrorStatus } from '../../core/errors.js'

/** @better-auth/passkey's PASSKEY_ERROR_CODES (src/error-codes.ts). */
export const PASSKEY_ERRORS = {
  CHALLENGE_NOT_FOUND: 'Challenge not found',
  YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY: 'You are not allowed to register this passkey',
  FAILED_TO_VERIFY_REGISTRATION: 'Failed to verify registration',
  PASSKEY_NOT_FOUND: 'Passkey not found',
  AUTHENTICATION_FAILED: 'Authentication failed',
  UNABLE_TO_CREATE_SESSION: 'Unable to create session',
  USER_NOT_FOUND: 'User not found',
  FAILED_TO_UPDATE_PASSKEY: 'Failed to update passkey',
  SESSION_REQUIRED: 'Passkey registration requires an authenticated session',
} as const

export type PasskeyErrorKey = keyof typeof PASSKEY_ERRORS

export const passkeyError = (status: ErrorStatus, key: PasskeyErrorKey): APIError => new APIError(status, key, PASSKEY_ERRORS[key])
