import { APIError, ERR, type ErrorStatus } from '../../core/errors.js'

/** @better-auth/api-key's error codes and messages (src/error-codes.ts), the only place they are spelled. */
export const API_KEY_ERRORS = {
  INVALID_METADATA_TYPE: 'metadata must be an object or undefined',
  REFILL_AMOUNT_AND_INTERVAL_REQUIRED: 'refillAmount is required when refillInterval is provided',
  REFILL_INTERVAL_AND_AMOUNT_REQUIRED: 'refillInterval is required when refillAmount is provided',
  USER_BANNED: 'User is banned',
  UNAUTHORIZED_SESSION: 'Unauthorized or invalid session',
  KEY_NOT_FOUND: 'API Key not found',
  KEY_DISABLED: 'API Key is disabled',
  KEY_EXPIRED: 'API Key has expired',
  USAGE_EXCEEDED: 'API Key has reached its usage limit',
  EXPIRES_IN_IS_TOO_SMALL: 'The expiresIn is smaller than the predefined minimum value.',
  EXPIRES_IN_IS_TOO_LARGE: 'The expiresIn is larger than the predefined maximum value.',
  INVALID_PREFIX_LENGTH: 'The prefix length is either too large or too small.',
  INVALID_NAME_LENGTH: 'The name length is either too large or too small.',
  METADATA_DISABLED: 'Metadata is disabled.',
  RATE_LIMIT_EXCEEDED: 'Rate limit exceeded.',
  NO_VALUES_TO_UPDATE: 'No values to update.',
  KEY_DISABLED_EXPIRATION: 'Custom key expiration values are disabled.',
  INVALID_API_KEY: 'Invalid API key.',
  INVALID_REFERENCE_ID_FROM_API_KEY: 'The reference id from the API key is invalid.',
  SERVER_ONLY_PROPERTY: "The property you're trying to set can only be set from the server auth instance only.",
  FAILED_TO_UPDATE_API_KEY: 'Failed to update API key',
  NAME_REQUIRED: 'API Key name is required.',
  ORGANIZATION_ID_REQUIRED: 'Organization ID is required for organization-owned API keys.',
  USER_NOT_MEMBER_OF_ORGANIZATION: 'You are not a member of the organization that owns this API key.',
  INSUFFICIENT_API_KEY_PERMISSIONS: 'You do not have permission to perform this action on organization API keys.',
} as const

export type ApiKeyErrorCode = keyof typeof API_KEY_ERRORS

export const apiKeyError = (status: ErrorStatus, code: ApiKeyErrorCode, headers?: Record<string, string>): APIError =>
  new APIError(status, code, API_KEY_ERRORS[code], headers)

/** The per-key rate limit's refusal: better-auth's code RATE_LIMITED with the wait in milliseconds. */
export const rateLimited = (tryAgainInMs: number): APIError =>
  new APIError(429, 'RATE_LIMITED', API_KEY_ERRORS.RATE_LIMIT_EXCEEDED, {
    'x-retry-after': String(Math.ceil(tryAgainInMs / 1000)),
  })

/**
 * The panel's owner field names no user (an id or an email nobody has): the field's own error,
 * not the wire's UNAUTHORIZED_SESSION, which reads as an expired panel session (issue 31 §3).
 */
export const ownerNotFound = (): APIError => new APIError(400, 'USER_NOT_FOUND', ERR.USER_NOT_FOUND, {}, 'userId')
