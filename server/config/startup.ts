/**
 * Keys set at start-up (issue 50 §3): what the `--config` file and the flags or GATEHOUSE_*
 * variables that stand for config keys set, each with where it came from. They win over the
 * stored layer the panel edits, so every view that edits a key shows them read-only with this
 * source, leaves them out of its saves, and the panel refuses a save that names one (409
 * SET_AT_STARTUP): stored, it would not take effect. The one rule of "is this path set at
 * start-up" is `startupKeyFor`.
 */

type Json = Record<string, unknown>

const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A key (dotted path down to a leaf; an array is one leaf) set at start-up, and by what (`--config /etc/gatehouse.json`, `GATEHOUSE_RATE_LIMIT`). */
export interface StartupKey {
  path: string
  source: string
}

/**
 * Where each part of the start-up layer came from, in the order it was merged (a later entry wins
 * for the paths under it): `path` '' for the whole layer (the config file).
 */
export type StartupSources = ReadonlyArray<{ path: string; source: string }>

/** What a key of the start-up layer is said to come from when its caller named no source (tests, a library user). */
export const UNNAMED_STARTUP_SOURCE = 'a start-up option'

/**
 * Every path a layer or a patch names, down to its leaves. An empty object names nothing, unless
 * `emptyObjects` (a patch's `{ database: {} }` still names `database` for the checks of what may be saved).
 */
export function leafPaths(value: Json, prefix = '', emptyObjects = false): string[] {
  return Object.entries(value).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k
    if (isPlainObject(v)) return Object.keys(v).length > 0 || !emptyObjects ? leafPaths(v, path, emptyObjects) : [path]
    return v === undefined ? [] : [path]
  })
}

/** Whether `path` is `under` or lies below it ('' is above everything). */
const within = (path: string, under: string) => under === '' || path === under || path.startsWith(`${under}.`)

/** The start-up layer's keys, each with the source of the last part of the layer that set it. */
export function startupKeysOf(layer: Json, sources: StartupSources): StartupKey[] {
  return leafPaths(layer).map((path) => ({
    path,
    source: sources.findLast((s) => within(path, s.path))?.source ?? UNNAMED_STARTUP_SOURCE,
  }))
}

/** The start-up key a path names, is under or holds (saving `ldap` would touch `ldap.baseDN`), if any. */
export function startupKeyFor(keys: readonly StartupKey[], path: string): StartupKey | undefined {
  return keys.find((k) => within(k.path, path) || within(path, k.path))
}
