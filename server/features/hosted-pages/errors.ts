import { APIError } from '../../core/errors.js'

/** The hosted pages' error catalogue (their only messages spelled on the server). */
export const HOSTED_PAGES_ERRORS = {
  NOT_FOUND: 'Not Found',
  HOSTED_PAGES_NOT_BUILT: 'The hosted pages are not built. Run npm run build, then reload.',
} as const

export type HostedPagesErrorKey = keyof typeof HOSTED_PAGES_ERRORS

export const hostedPagesError = (status: 404 | 503, key: HostedPagesErrorKey): APIError =>
  new APIError(status, key, HOSTED_PAGES_ERRORS[key])
