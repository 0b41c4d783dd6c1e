import { APIError, type ErrorStatus } from '../../core/errors.js'

/** better-auth's TWO_FACTOR_ERROR_CODES (plugins/two-factor/error-code.ts), plus Gatehouse's enforcement and trusted-browser list. */
export const TWO_FACTOR_ERRORS = {
  OTP_NOT_ENABLED: 'OTP not enabled',
  OTP_NOT_CONFIGURED: 'OTP is not available',
  OTP_HAS_EXPIRED: 'OTP has expired',
  TOTP_NOT_ENABLED: 'TOTP not enabled',
  TOTP_ALREADY_ENABLED: 'TOTP is already enabled',
  TOTP_NOT_CONFIGURED: 'TOTP is not available',
  TWO_FACTOR_NOT_ENABLED: "Two factor isn't enabled",
  BACKUP_CODES_NOT_ENABLED: "Backup codes aren't enabled",
  INVALID_BACKUP_CODE: 'Invalid backup code',
  INVALID_CODE: 'Invalid code',
  TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE: 'Too many attempts. Please request a new code.',
  ACCOUNT_TEMPORARILY_LOCKED: 'Too many failed verification attempts. Your account is temporarily locked. Please try again later.',
  INVALID_TWO_FACTOR_COOKIE: 'Invalid two factor cookie',
  INVALID_PASSWORD: 'Invalid password',
  CREDENTIAL_ACCOUNT_NOT_FOUND: 'Credential account not found',
  TRUSTED_DEVICE_NOT_FOUND: 'Trusted browser not found',
  TWO_FACTOR_ENROLLMENT_REQUIRED: 'A second factor is required for your account. Ask an administrator to extend your enrolment period.',
} as const

export type TwoFactorErrorKey = keyof typeof TWO_FACTOR_ERRORS

export const twoFactorError = (status: ErrorStatus, key: TwoFactorErrorKey, headers?: Record<string, string>): APIError =>
  new APIError(status, key, TWO_FACTOR_ERRORS[key], headers)
