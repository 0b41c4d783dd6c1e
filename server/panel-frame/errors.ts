import type { AuthContext } from '../core/context.js'
import { type ConfigConflict, configConflicts } from '../core/config-conflicts.js'
import { leafPaths, type StartupKey, startupKeyFor } from '../config/startup.js'

/** A refusal raised by the panel layer itself (the domain raises APIError). */
export class PanelError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues?: Array<{ path: string; message: string }>,
  ) {
    super(message)
    this.name = 'PanelError'
  }
}

/**
 * 409 CONFLICT for a save over another admin's change: nothing saved; each issue names the field,
 * who changed it, when and to what, so the view shows theirs beside yours.
 */
export function configConflictError(changes: ConfigConflict[]): PanelError {
  const when = (at: number | null) => (at === null ? '' : ` at ${new Date(at).toISOString()}`)
  const issues = changes.map((c) => ({
    path: c.path,
    message: `changed by ${c.by}${when(c.at)} to ${JSON.stringify(c.theirs ?? null)} since you opened this view`,
  }))
  const first = changes[0] as ConfigConflict
  return new PanelError(
    409,
    'CONFLICT',
    `${first.path} was changed by ${first.by}${when(first.at)} since you opened this view: nothing was saved; reload to see their change`,
    issues,
  )
}

/** Refuses a configuration save (`patch`, with `base`: each changed field as the view read it) made over someone else's change. */
export async function refuseConflicts(
  ctx: AuthContext,
  patch: Record<string, unknown>,
  base: Record<string, unknown> | undefined,
): Promise<void> {
  const conflicts = await configConflicts(ctx, patch, base)
  if (conflicts.length > 0) throw configConflictError(conflicts)
}

/**
 * 409 SET_AT_STARTUP: a key a start-up option sets (the `--config` file, a flag, a GATEHOUSE_*
 * variable) wins over the stored layer, so stored it would not take effect (and the answer would
 * claim it did). The issue names the key and its source, shown beside the field.
 */
export function setAtStartupError(key: StartupKey): PanelError {
  return new PanelError(
    409,
    'SET_AT_STARTUP',
    `${key.path} is set at start-up by ${key.source}, which wins over the panel: change it where the server is started`,
    [{ path: key.path, message: `set at start-up by ${key.source}: change it where the server is started` }],
  )
}

/**
 * Refuses a configuration save whose patch names a key set at start-up (config/startup.ts): every
 * operation that stores configuration asks it before storing (issue 50 §3). `skip`: paths another
 * refusal answers first (the Settings view's secrets).
 */
export function refuseStartupKeys(keys: readonly StartupKey[], patch: Record<string, unknown>, skip?: (path: string) => boolean): void {
  if (keys.length === 0) return
  for (const path of leafPaths(patch)) {
    if (skip?.(path)) continue
    const key = startupKeyFor(keys, path)
    if (key) throw setAtStartupError(key)
  }
}
