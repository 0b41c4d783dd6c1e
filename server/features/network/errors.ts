import { APIError } from '../../core/errors.js'

/**
 * The Network section's refusals: the only place their messages are spelled. (APIError, not the
 * panel's PanelError: this module is loaded while the panel service itself is being loaded.)
 */
export const networkErrors = {
  overridden: (field: string, source: string) =>
    new APIError(403, 'STARTUP_OVERRIDE', `${field} is set at start-up by ${source}; change it there (it wins over the panel)`),
  noInterface: (name: string, available: string[]) =>
    new APIError(400, 'UNKNOWN_INTERFACE', `Interface "${name}" has no IPv4 address now (available: ${available.join(', ') || 'none'})`),
  notListening: () => new APIError(503, 'NOT_LISTENING', 'The API listener is not running'),
  noDataDir: () => new APIError(400, 'NO_DATA_DIRECTORY', 'This server has no data directory to keep network settings in'),
}

export const portTakenMessage = (host: string, port: number) => `Port ${port} is already in use on ${host}`
