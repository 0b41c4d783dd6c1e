import { APIError, type ErrorStatus } from '../../core/errors.js'

/** better-auth's EMAIL_OTP_ERROR_CODES and the BASE_ERROR_CODES its routes answer with. */
export const EMAIL_OTP_ERRORS = {
  OTP_EXPIRED: 'OTP expired',
  INVALID_OTP: 'Invalid OTP',
  TOO_MANY_ATTEMPTS: 'Too many attempts',
  INVALID_EMAIL: 'Invalid email',
  USER_NOT_FOUND: 'User not found',
  INVALID_OTP_TYPE: 'Invalid OTP type',
  PASSWORD_TOO_SHORT: 'Password too short',
  PASSWORD_TOO_LONG: 'Password too long',
  // Email change by code (message only on the wire, see MESSAGE_ONLY).
  CHANGE_EMAIL_WITH_OTP_IS_DISABLED: 'Change email with OTP is disabled',
  EMAIL_IS_THE_SAME: 'Email is the same',
  OTP_IS_REQUIRED_TO_VERIFY_CURRENT_EMAIL: 'OTP is required to verify current email',
  EMAIL_ALREADY_IN_USE: 'Email already in use',
} as const

export type EmailOTPErrorKey = keyof typeof EMAIL_OTP_ERRORS

/**
 * Refusals better-auth's plugin throws with a message only (`APIError.fromStatus(status, {message})`):
 * their wire body is `{message}`, no `code` (the empty code below; server/http/app.ts).
 */
const MESSAGE_ONLY: ReadonlySet<EmailOTPErrorKey> = new Set([
  'INVALID_OTP_TYPE',
  'CHANGE_EMAIL_WITH_OTP_IS_DISABLED',
  'EMAIL_IS_THE_SAME',
  'OTP_IS_REQUIRED_TO_VERIFY_CURRENT_EMAIL',
  'EMAIL_ALREADY_IN_USE',
])

export const emailOTPError = (status: ErrorStatus, key: EmailOTPErrorKey): APIError =>
  new APIError(status, MESSAGE_ONLY.has(key) ? '' : key, EMAIL_OTP_ERRORS[key])
