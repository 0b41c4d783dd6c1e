import type { ProviderProblem } from '../../core/oauth-providers.js'
import { APIError, ERR, type ErrorStatus } from '../../core/errors.js'
import { PanelError } from '../../panel-frame/errors.js'

/**
 * The social sign-in catalogue: better-auth's codes and messages (api/routes/sign-in.ts,
 * account.ts, oauth2/link-account.ts of better-auth 1.7) for /sign-in/social, /link-social,
 * /get-access-token, /refresh-token and /account-info, and the Providers view's own failures.
 * The only place these messages are spelled (better-auth's base messages come from the core
 * catalogue, ERR). The wire body stays `{code, message}`; `field` names the input concerned.
 */
export const SOCIAL_ERRORS = {
  PROVIDER_NOT_FOUND: ERR.PROVIDER_NOT_FOUND,
  /** better-auth passes the code as the message (BetterAuthError("CLIENT_ID_AND_SECRET_REQUIRED")). */
  CLIENT_ID_AND_SECRET_REQUIRED: 'CLIENT_ID_AND_SECRET_REQUIRED',
  INVALID_TOKEN: ERR.INVALID_TOKEN,
  ID_TOKEN_NOT_SUPPORTED: ERR.ID_TOKEN_NOT_SUPPORTED,
  FAILED_TO_GET_USER_INFO: ERR.FAILED_TO_GET_USER_INFO,
  USER_EMAIL_NOT_FOUND: ERR.USER_EMAIL_NOT_FOUND,
  ACCOUNT_NOT_FOUND: ERR.ACCOUNT_NOT_FOUND,
  /** Apple's key set could not be fetched (SPEC §1: "Keys not found", bad request). */
  KEYS_NOT_FOUND: 'Keys not found',
  LINKING_NOT_ALLOWED: 'Account linking is not allowed',
  FAILED_TO_GET_A_VALID_ACCESS_TOKEN: 'Failed to get a valid access token',
  REFRESH_TOKEN_NOT_FOUND: 'Refresh token not found',
  FAILED_TO_REFRESH_ACCESS_TOKEN: 'Failed to refresh access token',
  UNABLE_TO_CREATE_VERIFICATION: 'Unable to create verification',
} as const

export type SocialErrorCode = keyof typeof SOCIAL_ERRORS

const STATUS: Record<SocialErrorCode, ErrorStatus> = {
  PROVIDER_NOT_FOUND: 404,
  CLIENT_ID_AND_SECRET_REQUIRED: 500,
  INVALID_TOKEN: 401,
  ID_TOKEN_NOT_SUPPORTED: 404,
  FAILED_TO_GET_USER_INFO: 401,
  USER_EMAIL_NOT_FOUND: 401,
  ACCOUNT_NOT_FOUND: 400,
  KEYS_NOT_FOUND: 400,
  LINKING_NOT_ALLOWED: 400,
  FAILED_TO_GET_A_VALID_ACCESS_TOKEN: 400,
  REFRESH_TOKEN_NOT_FOUND: 400,
  FAILED_TO_REFRESH_ACCESS_TOKEN: 400,
  UNABLE_TO_CREATE_VERIFICATION: 500,
}

/** The request field each error concerns (the body's names), where there is one. */
const FIELDS: Partial<Record<SocialErrorCode, string>> = {
  PROVIDER_NOT_FOUND: 'provider',
  CLIENT_ID_AND_SECRET_REQUIRED: 'provider',
  INVALID_TOKEN: 'idToken',
  ID_TOKEN_NOT_SUPPORTED: 'idToken',
  USER_EMAIL_NOT_FOUND: 'idToken',
  KEYS_NOT_FOUND: 'idToken',
  ACCOUNT_NOT_FOUND: 'accountId',
  LINKING_NOT_ALLOWED: 'provider',
  REFRESH_TOKEN_NOT_FOUND: 'accountId',
}

/** An error of the catalogue, with a status override where better-auth answers one code two ways. */
export function socialError(code: SocialErrorCode, status: ErrorStatus = STATUS[code]): APIError {
  return new APIError(status, code, SOCIAL_ERRORS[code], {}, FIELDS[code])
}

// ---------------------------------------------------------------- errors that name the provider

/** better-auth derives the code from the message: "Provider nope is not supported." → PROVIDER_NOPE_IS_NOT_SUPPORTED. */
const codeOf = (message: string): string =>
  message
    .replace(/\.$/, '')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')

/** /get-access-token and /refresh-token for an account whose provider is not configured. */
export const providerNotSupported = (providerId: string): APIError => {
  const message = `Provider ${providerId} is not supported.`
  return new APIError(400, codeOf(message), message, {}, 'providerId')
}

export const refreshNotSupported = (providerId: string): APIError =>
  new APIError(
    400,
    'PROVIDER_DOES_NOT_SUPPORT_TOKEN_REFRESHING',
    `Provider ${providerId} does not support token refreshing.`,
    {},
    'providerId',
  )

/** /account-info for an account whose provider is not configured (better-auth 1.2's wording). */
export const accountProviderNotConfigured = (providerId: string): APIError =>
  new APIError(
    500,
    'PROVIDER_ACCOUNT_PROVIDER_NOT_CONFIGURED',
    `Provider account provider is ${providerId} but it is not configured`,
    {},
    'accountId',
  )

// ---------------------------------------------------------------- callback error codes

/**
 * The `error` parameter of the callback's redirects (SPEC §8) that Gatehouse itself raises (a
 * provider's own `error` is passed through as it came).
 */
export type CallbackErrorCode =
  | 'state_not_found'
  | 'state_mismatch'
  | 'please_restart_the_process'
  | 'no_code'
  | 'oauth_provider_not_found'
  | 'issuer_mismatch'
  | 'invalid_code'
  | 'unable_to_get_user_info'
  | 'email_not_found'
  | 'no_callback_url'
  | 'banned'
  | 'internal_server_error'
  | 'invalid_callback_request'
  | 'account_not_linked'
  | 'unable_to_link_account'
  | 'signup_disabled'
  /** signUp.mode "invitation" and the address is not invited (core/sign-up-gate.ts). */
  | 'invitation_required'
  | 'unable_to_create_user'
  | 'unable_to_create_session'
  | 'account_already_linked_to_different_user'
  | "email_doesn't_match"

/** A failed step of the OAuth flow; `code` is the `error` parameter of SPEC §8's redirects. */
export class OAuthFlowError extends Error {
  constructor(readonly code: CallbackErrorCode) {
    super(code)
    this.name = 'OAuthFlowError'
  }
}

/**
 * The same failure answered by an ID-token sign-in or link (no redirect to carry it): 401 with
 * the code in capitals and the words as message ("account not linked", as better-auth's
 * callback code reads).
 */
export const flowErrorToAPI = (e: OAuthFlowError): APIError =>
  new APIError(401, e.code.toUpperCase().replace(/[^A-Z0-9_]/g, ''), e.code.replace(/_/g, ' '), {}, 'idToken')

// ---------------------------------------------------------------- the Providers view

/** The Providers view's failures (panel operations providers.*); `issues` name the form fields. */
export const providerPanelError = {
  notFound: (id: string) => new PanelError(404, 'PROVIDER_NOT_FOUND', `Provider ${id} not found`),
  /** An offered provider that cannot be used now, in the offering feature's words (OAuthProviderSource.explain). */
  unavailable: (problem: ProviderProblem) =>
    new PanelError(problem.status, problem.code, problem.message, [{ path: problem.field, message: problem.fieldMessage }]),
  notAnEndpoint: (id: string, name: string) =>
    new PanelError(400, 'INVALID_CONFIG', `${name} is not an endpoint of ${id}`, [
      { path: `overrides.${name}`, message: `not an endpoint of ${id}` },
    ]),
  clientIdRequired: () =>
    new PanelError(400, 'INVALID_CONFIG', 'A client id is required to enable the provider', [
      { path: 'clientId', message: 'required to enable the provider' },
    ]),
  /** The config schema's complaint, moved onto the form field it names. */
  invalidConfig: (message: string, field: string, fieldMessage: string) =>
    new PanelError(400, 'INVALID_CONFIG', message, [{ path: field, message: fieldMessage }]),
  notConfigured: (name: string) => new PanelError(400, 'PROVIDER_NOT_CONFIGURED', `Set a client id for ${name} first`),
  secretRequired: () => new PanelError(400, 'CLIENT_ID_AND_SECRET_REQUIRED', 'A client secret is required first'),
}
