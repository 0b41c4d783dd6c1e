import { APIError, ERR, type ErrorStatus } from '../../core/errors.js'

/**
 * The admin plugin's messages (SPEC §8) with current better-auth's codes: the only place they are
 * spelled. Messages core already owns (user not found, user already exists) come from its catalogue.
 */
export const ADMIN_ERR = {
  FAILED_TO_CREATE_USER: ERR.FAILED_TO_CREATE_USER,
  USER_ALREADY_EXISTS: ERR.USER_ALREADY_EXISTS,
  YOU_CANNOT_BAN_YOURSELF: 'You cannot ban yourself',
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: 'You are not allowed to change users role',
  YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS: 'You are not allowed to create users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS: 'You are not allowed to list users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS: 'You are not allowed to list users sessions',
  YOU_ARE_NOT_ALLOWED_TO_BAN_USERS: 'You are not allowed to ban users',
  YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS: 'You are not allowed to impersonate users',
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS: 'You are not allowed to revoke users sessions',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS: 'You are not allowed to delete users',
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD: 'You are not allowed to set users password',
  YOU_ARE_NOT_ALLOWED_TO_GET_USER: 'You are not allowed to get user',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS: 'You are not allowed to update users',
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL: 'You are not allowed to update users email',
  YOU_CANNOT_REMOVE_YOURSELF: 'You cannot remove yourself',
  YOU_CANNOT_IMPERSONATE_ADMINS: 'You cannot impersonate admins',
  YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE: 'You are not allowed to set a non-existent role value',
  NO_DATA_TO_UPDATE: 'No data to update',
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER: 'Password cannot be updated through update-user. Use the set-user-password endpoint instead',
  USER_ID_CANNOT_BE_UPDATED: 'User id cannot be updated',
  YOU_ARE_NOT_IMPERSONATING_ANYONE: 'You are not impersonating anyone',
  FAILED_TO_FIND_USER: 'Failed to find user',
  FAILED_TO_FIND_ADMIN_SESSION: 'Failed to find admin session',
  USER_NOT_FOUND: ERR.USER_NOT_FOUND,
  INVALID_PERMISSION_CHECK: 'invalid permission check. no permission(s) were passed.',
  /** has-permission naming a userId that does not exist (better-auth's lower-case message). */
  PERMISSION_SUBJECT_NOT_FOUND: 'user not found',
  USER_ID_OR_ROLE_IS_REQUIRED: 'user id or role is required',
  INVALID_ROLE_TYPE: 'Invalid role type',
  INVALID_BAN_EXPIRES: '[body.data.banExpires] Invalid date',
  INVALID_NAME: '[body.data.name] Invalid input: expected string',
  SESSION_NOT_FOUND: ERR.SESSION_NOT_FOUND,
  /** A mail whose link lands on a hosted page (an administrator's reset or verification mail) while they are off. */
  HOSTED_PAGES_DISABLED:
    'The link in this mail opens a hosted page, and hosted pages are off (hostedPages.enabled): turn them on, or have the user ask for the mail from your app',
  /** The set-up link is a magic link: its verify route is served only while magic-link sign-in is on. */
  SET_UP_LINK_NEEDS_MAGIC_LINK:
    'The set-up link signs the user in with a magic link, and magic-link sign-in is off (magicLink.enabled): turn it on to send one',
  /** The set-up link opens the two-factor page: nothing to set up while two-factor is off. */
  SET_UP_LINK_NEEDS_TWO_FACTOR:
    'The set-up link opens the two-factor set-up page, and two-factor is off (twoFactor.enabled): turn it on to send one',
} as const

export type AdminErrorKey = keyof typeof ADMIN_ERR

/** Where better-auth's wire code differs from the catalogue key. */
const CODES: Partial<Record<AdminErrorKey, string>> = {
  INVALID_PERMISSION_CHECK: 'INVALID_PERMISSION_CHECK_NO_PERMISSIONS_WERE_PASSED',
  PERMISSION_SUBJECT_NOT_FOUND: 'USER_NOT_FOUND',
  INVALID_BAN_EXPIRES: 'VALIDATION_ERROR',
  INVALID_NAME: 'VALIDATION_ERROR',
}

/** The input field each error concerns (forms show the message beside it); absent: the form as a whole. */
const FIELDS: Partial<Record<AdminErrorKey, string>> = {
  USER_ALREADY_EXISTS: 'email',
  YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE: 'role',
  INVALID_ROLE_TYPE: 'role',
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: 'role',
  INVALID_BAN_EXPIRES: 'banExpires',
  INVALID_NAME: 'name',
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER: 'password',
}

export const adminError = (status: ErrorStatus, key: AdminErrorKey): APIError =>
  new APIError(status, CODES[key] ?? key, ADMIN_ERR[key], {}, FIELDS[key])

/**
 * Runs a check on one input (a core rule such as the email syntax or the password length) and
 * names that input on the error it throws, so the panel form shows it beside the field.
 */
export async function onField<T>(field: string, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check()
  } catch (e) {
    // The check names its own input (email-password's policy says 'password'); here the input is `field`.
    if (e instanceof APIError && e.field !== field) throw new APIError(e.status, e.code, e.message, e.headers, field)
    throw e
  }
}
