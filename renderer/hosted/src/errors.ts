import { useEffect } from 'react'
import { ApiError } from './api'

/**
 * Which form field an API refusal concerns, by its better-auth code (the wire body is
 * `{code, message}` only). Forms show the message beside that field; codes not listed here are
 * shown above the form.
 */
const FIELD_OF_CODE: Record<string, string> = {
  INVALID_EMAIL_OR_PASSWORD: 'password',
  INVALID_USERNAME_OR_PASSWORD: 'password',
  INVALID_PASSWORD: 'password',
  PASSWORD_TOO_SHORT: 'password',
  PASSWORD_TOO_LONG: 'password',
  PASSWORD_COMPROMISED: 'password',
  PASSWORD_TOO_COMMON: 'password',
  INVALID_EMAIL: 'email',
  EMAIL_NOT_VERIFIED: 'email',
  USER_ALREADY_EXISTS: 'email',
  USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL: 'email',
  USERNAME_IS_ALREADY_TAKEN: 'username',
  USERNAME_TOO_SHORT: 'username',
  USERNAME_TOO_LONG: 'username',
  INVALID_USERNAME: 'username',
  INVALID_CODE: 'code',
  INVALID_BACKUP_CODE: 'code',
  OTP_HAS_EXPIRED: 'code',
  TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE: 'code',
}

export interface FormErrors {
  /** Message per field name. */
  fields: Record<string, string>
  /** A refusal that concerns no single field. */
  form: string | null
}

export const NO_ERRORS: FormErrors = { fields: {}, form: null }

/**
 * Splits a failure into field and form messages. `rename` maps the API's field names to the
 * form's (the sign-in form has one "email or username" field). A VALIDATION_ERROR names its field
 * in the message's path (`[body.email] ...`).
 */
export function errorsOf(error: unknown, rename: Record<string, string> = {}): FormErrors {
  if (!(error instanceof ApiError)) return { fields: {}, form: 'Something went wrong. Please try again.' }
  let field = FIELD_OF_CODE[error.code]
  if (!field && error.code === 'VALIDATION_ERROR') field = /^\[body\.([A-Za-z]+)/.exec(error.message)?.[1]
  if (field) return { fields: { [rename[field] ?? field]: error.message }, form: null }
  return { fields: {}, form: error.message }
}

/**
 * aria-invalid for a field: Mantine's PasswordInput does not set it on its inner input (TextInput
 * does), so password fields pass it explicitly.
 */
export const invalid = (errors: FormErrors, field: string): true | undefined => (errors.fields[field] ? true : undefined)

/**
 * A refusal that names a field is announced by moving focus to that field (the first one marked
 * aria-invalid), whose error message is its description: a screen reader reads both, and a
 * keyboard user is where the correction goes. Without this, the submit button's loading state
 * dropped focus to the page body and nothing was announced. Refusals of the whole form are
 * FormAlert's role=alert.
 */
export function useFocusOnInvalid(errors: FormErrors): void {
  useEffect(() => {
    if (Object.keys(errors.fields).length === 0) return
    const frame = requestAnimationFrame(() => document.querySelector<HTMLElement>('form [aria-invalid="true"]')?.focus())
    return () => cancelAnimationFrame(frame)
  }, [errors])
}
