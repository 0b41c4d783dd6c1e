import { APIError, type ErrorStatus } from '../../core/errors.js'

/** Forward auth's answers to the proxy, spelled here only. */
export const FORWARD_AUTH_ERRORS = {
  MISSING_ORIGINAL_URL: 'The proxy did not send the original request URL',
  INVALID_ORIGINAL_URL: 'The original request URL is not a valid http(s) URL',
  UNTRUSTED_PROXY: 'Forwarding headers are accepted only from trusted proxies',
  UNAUTHORIZED: 'Sign-in required',
  SECOND_FACTOR_REQUIRED: 'This application requires a second factor',
  EMAIL_NOT_VERIFIED: 'Verify your email address to use this application',
  TWO_FACTOR_ENROLLMENT_REQUIRED: 'Set up a second factor to use this application',
  FORBIDDEN: 'You are not allowed to access this application',
} as const

export type ForwardAuthErrorKey = keyof typeof FORWARD_AUTH_ERRORS

export const forwardAuthError = (status: ErrorStatus, key: ForwardAuthErrorKey, headers?: Record<string, string>): APIError =>
  new APIError(status, key, FORWARD_AUTH_ERRORS[key], headers)
