import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The OIDC provider feature's own error codes and messages (Gatehouse's, no better-auth counterpart). */
export const OIDC_ERRORS = {
  CLIENT_NOT_FOUND: 'OIDC client not found',
  INVALID_REDIRECT_URI: 'Redirect URI must be an absolute URI without a fragment (http(s) or a custom scheme)',
  REDIRECT_URI_REQUIRED: 'At least one redirect URI is required',
  NAME_REQUIRED: 'Client name is required',
  INVALID_LOGO: 'Logo must be an http(s) URL',
  PUBLIC_CLIENT_HAS_NO_SECRET: 'A public client has no secret to rotate',
  UNKNOWN_ORGANIZATION: 'Unknown organization',
  UNKNOWN_TEAM: 'Unknown team',
  INTERACTION_NOT_FOUND: 'Sign-in request not found or expired',
  OIDC_DISABLED: 'The OpenID Connect provider is disabled',
  CONSENT_NOT_FOUND: 'This application is not connected to the account',
  INVALID_BACKCHANNEL_LOGOUT_URI:
    'Back-channel logout URI must be an absolute http(s) URI without a fragment (plain http only on this machine or the local network)',
  REDIRECT_HOST_NOT_ALLOWED: 'Redirect URI host is not allowed for self-registered clients',
  REGISTERED_REDIRECT_HTTP:
    'a self-registered client takes https redirect URIs, or plain http only on loopback (127.0.0.0/8, [::1], localhost)',
  REGISTERED_REDIRECT_SCHEME:
    'a private-use scheme redirect URI must be reverse-DNS style (com.example.app:/callback) and needs application_type native',
  REGISTRATION_CLIENT_LIMIT:
    'this initial access token has registered as many clients as oidcProvider.registration.maxClientsPerToken allows',
  REGISTRATION_TOKEN_NOT_FOUND: 'Registration token not found',
  PAIRWISE_NEEDS_ONE_HOST: 'A pairwise client’s redirect URIs must all name one host (its sector)',
  AUTHORIZATION_CODE_GRANT_REQUIRED: 'A client’s grant types include authorization_code (its response type is code)',
  PUBLIC_CLIENT_CREDENTIALS:
    'The client_credentials grant needs client authentication: a client with token_endpoint_auth_method none cannot have it',
} as const

export type OidcErrorCode = keyof typeof OIDC_ERRORS

/** The form field each error concerns (panel forms show it beside that field). */
const FIELDS: Partial<Record<OidcErrorCode, string>> = {
  INVALID_REDIRECT_URI: 'redirectUris',
  PAIRWISE_NEEDS_ONE_HOST: 'redirectUris',
  REDIRECT_URI_REQUIRED: 'redirectUris',
  NAME_REQUIRED: 'name',
  AUTHORIZATION_CODE_GRANT_REQUIRED: 'grantTypes',
  PUBLIC_CLIENT_CREDENTIALS: 'grantTypes',
  INVALID_LOGO: 'logo',
  INVALID_BACKCHANNEL_LOGOUT_URI: 'backchannelLogoutUri',
  UNKNOWN_ORGANIZATION: 'allowedOrganizations',
  UNKNOWN_TEAM: 'allowedTeams',
}

export const oidcError = (status: ErrorStatus, code: OidcErrorCode): APIError =>
  new APIError(status, code, OIDC_ERRORS[code], {}, FIELDS[code])
