import { APIError, type ErrorStatus } from '../../core/errors.js'

/**
 * The username feature's messages (SPEC §8 Username, current better-auth's keys), the only place
 * they are spelled.
 */
export const USERNAME_ERR = {
  INVALID_USERNAME_OR_PASSWORD: 'invalid username or password',
  EMAIL_NOT_VERIFIED: 'email not verified',
  USERNAME_IS_ALREADY_TAKEN: 'username is already taken. please try another.',
  USERNAME_TOO_SHORT: 'username is too short',
  USERNAME_TOO_LONG: 'username is too long',
  INVALID_USERNAME: 'username is invalid',
  INVALID_DISPLAY_USERNAME: 'display username is invalid',
} as const

export type UsernameErrorKey = keyof typeof USERNAME_ERR

/** The form field each error concerns. */
const FIELDS: Partial<Record<UsernameErrorKey, string>> = {
  INVALID_USERNAME_OR_PASSWORD: 'password',
  USERNAME_IS_ALREADY_TAKEN: 'username',
  USERNAME_TOO_SHORT: 'username',
  USERNAME_TOO_LONG: 'username',
  INVALID_USERNAME: 'username',
  INVALID_DISPLAY_USERNAME: 'displayUsername',
}

export const usernameError = (status: ErrorStatus, key: UsernameErrorKey): APIError =>
  new APIError(status, key, USERNAME_ERR[key], {}, FIELDS[key])
