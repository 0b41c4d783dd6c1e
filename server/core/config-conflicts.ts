import { withoutSecrets } from '../config/secret-paths.js'
import { lastConfigChange } from './config-audit.js'
import type { AuthContext } from './context.js'

/**
 * Saves that never undo another admin's change (issue 50 §1): a view sends the fields it changed
 * and, in `base`, each as it read them (dotted path → value). A field whose value in the effective
 * configuration (as views see it, secrets left out) is no longer the one read was changed by
 * someone else meanwhile: the save is refused with who, when and their value, so the view can show
 * theirs beside yours. Fields the patch changes without naming them in `base` are not checked
 * (callers that send no base, the API as before).
 */

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface ConfigConflict {
  path: string
  /** Who changed it (an admin's email, `os:<account>` at start, `the server`, or `someone`). */
  by: string
  at: number | null
  /** The value now in effect. */
  theirs: unknown
}

/** The value at a dotted path (undefined where a part is missing). */
function valueAt(value: unknown, path: string): unknown {
  let here = value
  for (const key of path.split('.')) {
    if (!isPlainObject(here)) return undefined
    here = here[key]
  }
  return here
}

/** Every path a patch names, down to its leaves (an empty object is a leaf). */
function leafPaths(value: Json, prefix = ''): string[] {
  return Object.entries(value).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k
    return isPlainObject(v) && Object.keys(v).length > 0 ? leafPaths(v, path) : [path]
  })
}

/** Equal as JSON whatever the key order (a layer read back from PostgreSQL's jsonb); absent is null. */
const canonical = (v: unknown): string =>
  JSON.stringify(v ?? null, (_k, x: unknown) =>
    isPlainObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  )

/** The fields of `base` the patch touches whose effective value is no longer the one read. */
export function staleFields(effective: Json, patch: Json, base: Json): string[] {
  const touched = leafPaths(patch)
  return Object.keys(base).filter(
    (path) =>
      touched.some((leaf) => leaf === path || leaf.startsWith(`${path}.`) || path.startsWith(`${leaf}.`)) &&
      canonical(valueAt(effective, path)) !== canonical(base[path]),
  )
}

/** The conflicts of a save over the configuration in effect now; none without a base. */
export async function configConflicts(ctx: AuthContext, patch: Json, base: Json | undefined): Promise<ConfigConflict[]> {
  if (!base) return []
  const effective = withoutSecrets(ctx.config() as unknown as Json)
  const stale = staleFields(effective, patch, base)
  return Promise.all(stale.map(async (path) => ({ path, theirs: valueAt(effective, path), ...(await lastConfigChange(ctx, path)) })))
}
