import { type ErrorStatus, OAuthAPIError } from '../../core/errors.js'

/**
 * The device authorization plugin's messages, as better-auth 1.7 spells them. Its endpoints answer
 * in RFC 8628 / RFC 6749 words, `{error, error_description}` (OAuthAPIError), with the `error`
 * each call site names (`authorization_pending`, `slow_down`, `expired_token`, `access_denied`,
 * `invalid_grant`, `invalid_request`, `invalid_client`, `unauthorized`, `server_error`).
 */
export const DEVICE_AUTHORIZATION_ERRORS = {
  INVALID_DEVICE_CODE: 'Invalid device code',
  EXPIRED_DEVICE_CODE: 'Device code has expired',
  EXPIRED_USER_CODE: 'User code has expired',
  AUTHORIZATION_PENDING: 'Authorization pending',
  ACCESS_DENIED: 'Access denied',
  INVALID_USER_CODE: 'Invalid user code',
  DEVICE_CODE_ALREADY_PROCESSED: 'Device code already processed',
  DEVICE_CODE_NOT_CLAIMED:
    'Device code has not been claimed by a verifying session; call `GET /device` with the `user_code` while signed in before approving or denying',
  POLLING_TOO_FREQUENTLY: 'Polling too frequently',
  USER_NOT_FOUND: 'User not found',
  INVALID_DEVICE_CODE_STATUS: 'Invalid device code status',
  AUTHENTICATION_REQUIRED: 'Authentication required',
  CLIENT_ID_REQUIRED: 'client_id is required',
  INVALID_CLIENT_ID: 'Invalid client ID',
  CLIENT_ID_MISMATCH: 'Client ID mismatch',
  NOT_YOURS_TO_APPROVE: 'You are not authorized to approve this device authorization',
  NOT_YOURS_TO_DENY: 'You are not authorized to deny this device authorization',
  CODE_GENERATION_FAILED: 'Failed to generate a unique device code',
} as const

export type DeviceAuthorizationErrorKey = keyof typeof DEVICE_AUTHORIZATION_ERRORS

/** OAuth error codes these endpoints answer with. */
export type DeviceErrorCode =
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'access_denied'
  | 'invalid_grant'
  | 'invalid_request'
  | 'invalid_client'
  | 'unauthorized'
  | 'server_error'

export const deviceError = (status: ErrorStatus, error: DeviceErrorCode, key: DeviceAuthorizationErrorKey): OAuthAPIError =>
  new OAuthAPIError(status, error, DEVICE_AUTHORIZATION_ERRORS[key])

/** A refusal of /device/code's input in better-auth's words: `invalid_request` with the validation message. */
export const invalidDeviceRequest = (description: string): OAuthAPIError => new OAuthAPIError(400, 'invalid_request', description)
