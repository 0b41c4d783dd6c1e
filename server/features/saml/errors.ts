import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The SAML identity provider's messages, spelled here only (the hosted error page shows the refusals' words). */
export const SAML_ERRORS = {
  SP_NOT_FOUND: 'No such SAML service provider',
  SP_EXISTS: 'A service provider with this entityID is already registered',
  SP_FROM_CONFIG: 'This service provider is declared in the config file: change it there',
  INVALID_METADATA: 'The service provider metadata could not be read',
  METADATA_NO_ACS: 'The service provider metadata names no AssertionConsumerService with the HTTP-POST binding',
  METADATA_FETCH_FAILED: 'The service provider metadata could not be fetched',
  NAME_REQUIRED: 'A name is required',
  INVALID_NAME_ID_FORMAT: 'The NameID format must be email, persistent, persistent-shared or unspecified (or its full URN)',
  KEY_NOT_FOUND: 'No such SAML signing certificate',
  LAST_KEY: 'No certificate older than the signing one is published: nothing to retire',
  NEXT_KEY_PENDING:
    'A next signing certificate is already published and not signing yet: switch to it with `gatehouse saml cert rotate --activate` once the service providers have re-read the metadata',
  // Refusals of a request (shown on the hosted error page).
  MALFORMED_REQUEST: 'The application sent a SAML message that could not be read',
  XML_DTD_REFUSED: 'The SAML message carries a document type declaration, which is refused',
  UNKNOWN_SP: 'The application is not registered as a SAML service provider here',
  ACS_NOT_IN_METADATA: 'The application asked for an assertion consumer URL that is not in its metadata',
  UNSIGNED_REQUEST: 'The application must sign its requests and this one is not signed',
  BAD_SIGNATURE: "The request's signature does not verify with the application's certificate",
  DESTINATION_MISMATCH: 'The request was addressed to another destination',
  REQUEST_EXPIRED: 'The request is too old or not valid yet',
  REPLAYED_REQUEST: 'This request was already used',
  REQUEST_NOT_FOUND: 'The sign-in request is unknown or has expired: start again from the application',
  NOT_IN_ALLOWED_GROUPS: 'Your account is not in a group allowed to use this application',
  BANNED: 'Your account is banned',
  EMAIL_NOT_VERIFIED: 'Your email address is not verified: verify it, then start again from the application',
  NOT_ADMITTED: 'This account or session cannot sign in to applications now',
  NO_SLO: 'The application has no single logout service',
  RELAY_STATE_TOO_LONG: 'The application sent a RelayState longer than 1024 bytes, which is refused',
  TOO_MANY_PENDING_REQUESTS:
    'Too many sign-in requests from your network are waiting: finish one, or wait 10 minutes and start again from the application',
} as const

export type SamlErrorKey = keyof typeof SAML_ERRORS

export const samlError = (status: ErrorStatus, key: SamlErrorKey): APIError => new APIError(status, key, SAML_ERRORS[key])

/** A refused SAML message: the hosted error page shows `reason`; audited and logged as a warning. */
export class SamlRefusal extends Error {
  constructor(
    readonly reason: SamlErrorKey,
    readonly spEntityId: string | null = null,
  ) {
    super(SAML_ERRORS[reason])
  }
}
