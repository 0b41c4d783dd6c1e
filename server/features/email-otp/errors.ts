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
} as const

export type EmailOTPErrorKey = keyof typeof EMAIL_OTP_ERRORS

export const emailOTPError = (status: ErrorStatus, key: EmailOTPErrorKey): APIError => new APIError(status, key, EMAIL_OTP_ERRORS[key])
