import { PanelError } from '../../panel/errors.js'

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
  /** A key a start-up option sets (a flag, --config or the environment): stored, it would not take effect. */
  setAtStartup: (path: string) =>
    new PanelError(409, 'SET_AT_STARTUP', `${path} is set at start-up, which wins over the panel: change it where the server is started`, [
      { path, message: 'set at start-up: change it where the server is started' },
    ]),
  /**
   * A field this save changes was changed by someone else since the view read it (a stale view would
   * put their change back): nothing is saved. Each issue names the field, who changed it, when, and
   * to what, so the view shows theirs beside yours.
   */
  conflict: (changes: Array<{ path: string; by: string; at: number | null; theirs: unknown }>) => {
    const when = (at: number | null) => (at === null ? '' : ` at ${new Date(at).toISOString()}`)
    const issues = changes.map((c) => ({
      path: c.path,
      message: `changed by ${c.by}${when(c.at)} to ${JSON.stringify(c.theirs) ?? 'nothing'} since you opened this view`,
    }))
    const first = changes[0] as (typeof changes)[number]
    return new PanelError(
      409,
      'CONFLICT',
      `${first.path} was changed by ${first.by}${when(first.at)} since you opened this view: nothing was saved; reload to see their change`,
      issues,
    )
  },
  /** The config schema's complaints; the message is the first one's. */
  invalidConfig: (issues: Array<{ path: string; message: string }>) => {
    const first = issues[0] ?? { path: '', message: 'invalid' }
    return new PanelError(400, 'INVALID_CONFIG', `${first.path}: ${first.message}`, issues)
  },
}
