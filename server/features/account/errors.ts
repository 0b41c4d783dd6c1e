import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The account feature's messages (SPEC §8, better-auth's BASE_ERROR_CODES), the only place they are spelled. */
export const ACCOUNT_ERR = {
  EMAIL_CAN_NOT_BE_UPDATED: 'Email can not be updated',
  NO_FIELDS_TO_UPDATE: 'No fields to update',
  CHANGE_EMAIL_DISABLED: 'Change email is disabled',
  EMAIL_IS_THE_SAME: 'Email is the same',
  COULDNT_UPDATE_YOUR_EMAIL: "Couldn't update your email",
  PASSWORD_ALREADY_SET: 'User already has a password set',
  USER_ALREADY_HAS_PASSWORD: 'User already has a password. Provide that to delete the account.',
  SESSION_EXPIRED: 'Session expired. Re-authenticate to perform this action.',
  FAILED_TO_UNLINK_LAST_ACCOUNT: "You can't unlink your last account",
} as const

export type AccountErrorKey = keyof typeof ACCOUNT_ERR

/** The form field each error concerns. */
const FIELDS: Partial<Record<AccountErrorKey, string>> = {
  EMAIL_CAN_NOT_BE_UPDATED: 'email',
  EMAIL_IS_THE_SAME: 'newEmail',
  COULDNT_UPDATE_YOUR_EMAIL: 'newEmail',
  PASSWORD_ALREADY_SET: 'newPassword',
  USER_ALREADY_HAS_PASSWORD: 'password',
}

export const accountError = (status: ErrorStatus, key: AccountErrorKey, field: string | undefined = FIELDS[key]): APIError =>
  new APIError(status, key, ACCOUNT_ERR[key], {}, field)
