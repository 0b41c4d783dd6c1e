import { PanelError } from '../../panel-frame/errors.js'

/**
 * The Settings view's refusals: the only place their messages are spelled. Each names the setting
 * it concerns in `issues` (dotted config paths), which the form shows beside that field.
 */
export const settingsError = {
  /** Secrets (provider client secrets, the SMTP password) are written in their own views. */
  secretNotEditableHere: (path: string) =>
    new PanelError(400, 'SECRET_NOT_EDITABLE_HERE', `${path} is set in its own view`, [{ path, message: 'set in its own view' }]),
  restartRequired: (path: string) =>
    new PanelError(400, 'RESTART_REQUIRED', `${path} is read at start-up: set it with --config and restart`, [
      { path, message: 'read at start-up: set it with --config and restart' },
    ]),
  /** A listener's new address cannot be bound (in use, not permitted, not an address here): nothing is stored. */
  listenerNotBound: (path: string, message: string) =>
    new PanelError(409, 'LISTENER_NOT_BOUND', `${message}; nothing was saved and the listener keeps serving`, [{ path, message }]),
  /** The config schema's complaints; the message is the first one's. */
  invalidConfig: (issues: Array<{ path: string; message: string }>) => {
    const first = issues[0] ?? { path: '', message: 'invalid' }
    return new PanelError(400, 'INVALID_CONFIG', `${first.path}: ${first.message}`, issues)
  },
}
