import { PanelError } from '../../panel-frame/errors.js'

/**
 * The generic OAuth catalogue: better-auth 1.7's generic-oauth codes (error-codes.ts) and the
 * panel's own failures. Sign-in and callback errors are the social engine's (its catalogue).
 */
export const GENERIC_OAUTH_ERRORS = {
  INVALID_OAUTH_CONFIGURATION: 'Invalid OAuth configuration',
  TOKEN_URL_NOT_FOUND: 'Invalid OAuth configuration. Token URL not found.',
} as const

/** Why a discovery document could not be used: unreachable (network, DNS, timeout) or not a discovery document. */
export function discoveryProblem(url: string, probe: { problem: 'unreachable' | 'refused' | 'invalid'; reason: string }) {
  return probe.problem === 'unreachable'
    ? {
        status: 502,
        code: 'DISCOVERY_UNREACHABLE',
        message: `The discovery URL ${url} could not be reached (${probe.reason})`,
        field: 'discoveryUrl',
        fieldMessage: `unreachable (${probe.reason})`,
      }
    : {
        status: 502,
        code: 'DISCOVERY_INVALID',
        message: `The discovery URL ${url} did not answer with a discovery document (${probe.reason})`,
        field: 'discoveryUrl',
        fieldMessage: `not a discovery document (${probe.reason})`,
      }
}

export const genericOAuthPanelError = {
  /** The discovery document cannot be fetched or read: said beside the Discovery URL field. */
  discovery: (problem: ReturnType<typeof discoveryProblem>) =>
    new PanelError(problem.status, problem.code, problem.message, [{ path: problem.field, message: problem.fieldMessage }]),
  notFound: (id: string) => new PanelError(404, 'PROVIDER_NOT_FOUND', `No generic OAuth provider ${id}`),
  builtIn: (id: string) =>
    new PanelError(400, 'INVALID_CONFIG', `${id} is a built-in provider: set it up among the social providers`, [
      { path: 'providerId', message: 'a built-in provider' },
    ]),
  /** The config schema's complaint, moved onto the form field it names. */
  invalidConfig: (message: string, field: string, fieldMessage: string) =>
    new PanelError(400, 'INVALID_CONFIG', message, [{ path: field, message: fieldMessage }]),
}
