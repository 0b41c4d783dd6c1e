import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The app-password feature's refusals, the only place they are spelled. */
export const APP_PASSWORD_ERRORS = {
  APP_PASSWORD_NOT_FOUND: 'App password not found',
  TOO_MANY_APP_PASSWORDS: 'You have too many app passwords; revoke one you no longer use first',
} as const

export type AppPasswordErrorCode = keyof typeof APP_PASSWORD_ERRORS

export const appPasswordError = (status: ErrorStatus, code: AppPasswordErrorCode): APIError =>
  new APIError(status, code, APP_PASSWORD_ERRORS[code])
