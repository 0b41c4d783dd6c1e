import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The email-password feature's messages (SPEC §8, better-auth's BASE_ERROR_CODES), the only place they are spelled. */
export const EMAIL_PASSWORD_ERR = {
  EMAIL_PASSWORD_DISABLED: 'Email and password is not enabled',
  EMAIL_PASSWORD_SIGN_UP_DISABLED: 'Email and password sign up is not enabled',
  INVALID_EMAIL_OR_PASSWORD: 'Invalid email or password',
  EMAIL_NOT_VERIFIED: 'Email not verified',
  PASSWORD_TOO_SHORT: 'Password too short',
  PASSWORD_TOO_LONG: 'Password too long',
  PASSWORD_TOO_COMMON: 'Password is too common. Please choose a less guessable one.',
  RESET_PASSWORD_DISABLED: "Reset password isn't enabled",
  VERIFICATION_EMAIL_NOT_ENABLED: "Verification email isn't enabled",
  EMAIL_MISMATCH: 'Email mismatch',
  EMAIL_ALREADY_VERIFIED: 'Email is already verified',
} as const

export type EmailPasswordErrorKey = keyof typeof EMAIL_PASSWORD_ERR

/** The form field each error concerns (the password rules name the field they checked instead). */
const FIELDS: Partial<Record<EmailPasswordErrorKey, string>> = {
  INVALID_EMAIL_OR_PASSWORD: 'password',
  PASSWORD_TOO_SHORT: 'password',
  PASSWORD_TOO_LONG: 'password',
  PASSWORD_TOO_COMMON: 'password',
  EMAIL_MISMATCH: 'email',
  EMAIL_ALREADY_VERIFIED: 'email',
}

export const emailPasswordError = (status: ErrorStatus, key: EmailPasswordErrorKey, field: string | undefined = FIELDS[key]): APIError =>
  new APIError(status, key, EMAIL_PASSWORD_ERR[key], {}, field)
