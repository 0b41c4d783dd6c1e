import { wholeConfigSchema } from '../../config/schema.js'
import { configProblems } from '../../config-checks.js'
import { DROP, holdsSecret, isSecretPath, mapSecrets, urlPassword } from '../../config/secret-paths.js'
import { lastConfigChange } from '../../core/config-audit.js'
import type { PanelEnv } from '../../panel/env.js'
import { settingsError } from './errors.js'

type Json = Record<string, unknown>
type Issue = { path: string; message: string }

const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Keys read once when the server starts. */
export const RESTART_REQUIRED = ['basePath']

/**
 * The config as the renderer may see it: no secret field (config/secret.ts marks them; their
 * views have write-only fields), no URL's password (scheme://user:password@host → scheme://user@host).
 */
export function withoutSecrets(value: Json): Json {
  const urls = (v: unknown): unknown => {
    if (typeof v === 'string') return urlPassword(v)?.withoutPassword ?? v
    if (Array.isArray(v)) return v.map(urls)
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, urls(x)]))
    return v
  }
  return urls(mapSecrets(value, () => DROP)) as Json
}

/** Dotted paths of the leaves where `a` and `b` differ (arrays compare whole). */
export function differingPaths(a: unknown, b: unknown, prefix = ''): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    return [...keys].flatMap((k) => differingPaths(a[k], b[k], prefix ? `${prefix}.${k}` : k))
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix]
}

/** Every path named by a patch, down to its leaves. */
function leafPaths(value: Json, prefix = ''): string[] {
  return Object.entries(value).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k
    return isPlainObject(v) && Object.keys(v).length > 0 ? leafPaths(v, path) : [path]
  })
}

/** The value at a dotted path (undefined where a part is missing). */
function at(value: unknown, path: string): unknown {
  let here = value
  for (const key of path.split('.')) {
    if (!isPlainObject(here)) return undefined
    here = here[key]
  }
  return here
}

/** Equal as JSON, whatever the key order (a stored layer read back from PostgreSQL's jsonb); absent is null. */
const sameJson = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b)
const canonical = (v: unknown): string =>
  JSON.stringify(v ?? null, (_k, x: unknown) =>
    isPlainObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  )

/**
 * The fields a save changes that changed since the view read them: a field of `base` (dotted path →
 * the value the view was shown) that the patch touches, whose value in the effective configuration
 * (as views see it, secrets left out) is no longer that one. A field the patch changes without
 * naming it in `base` is not checked (callers that send no base: the API as before).
 */
export function staleFields(effective: Json, patch: Json, base: Json): string[] {
  const touched = leafPaths(patch)
  return Object.keys(base).filter(
    (path) =>
      touched.some((leaf) => leaf === path || leaf.startsWith(`${path}.`) || path.startsWith(`${leaf}.`)) &&
      !sameJson(at(effective, path), base[path]),
  )
}

/** The Settings view: the config store's merge and schema, applied live. */
export const settingsPanel = (env: PanelEnv) => {
  const store = env.gatehouse.config

  /** Where start-up options (--config, flags, environment) mask the stored layer. */
  const overridden = (): string[] => {
    const storedOnly = wholeConfigSchema().safeParse(store.storedLayer())
    if (!storedOnly.success) return []
    return differingPaths(storedOnly.data, env.gatehouse.ctx.config()).filter((p) => !isSecretPath(p))
  }

  const check = async (patch: Json): Promise<Issue[]> => {
    const fixed = overridden()
    for (const path of leafPaths(patch)) {
      // Saved, it would not take effect (and the answer would claim it did): a start-up option wins.
      const startup = fixed.find((p) => p === path || p.startsWith(`${path}.`) || path.startsWith(`${p}.`))
      if (startup) throw settingsError.setAtStartup(startup)
      if (holdsSecret(path)) throw settingsError.secretNotEditableHere(path)
      if (RESTART_REQUIRED.includes(path)) throw settingsError.restartRequired(path)
    }
    // The same merge and schema as the change itself (ConfigStore.update).
    const issues = store.problems(patch)
    if (issues.length > 0) return issues
    // Then what the schema cannot see: the base URL and the cookie domain, roles and organizations.
    const next = store.candidate(patch)
    return next ? await configProblems(env.gatehouse.ctx, next) : []
  }

  return {
    'settings.get'() {
      return {
        effective: withoutSecrets(env.gatehouse.ctx.config() as Json),
        stored: withoutSecrets(store.storedLayer()),
        overridden: overridden(),
        restartRequired: RESTART_REQUIRED,
      }
    },

    async 'settings.validate'({ patch }: { patch: Json }) {
      const issues = await check(patch)
      return { valid: issues.length === 0, issues }
    },

    async 'settings.update'({ patch, base }: { patch: Json; base?: Json }) {
      // Only what this admin changed, and only over what they saw: another admin's change since is
      // never silently put back by a stale view.
      const stale = base ? staleFields(withoutSecrets(env.gatehouse.ctx.config() as Json), patch, base) : []
      if (stale.length > 0) {
        const effective = withoutSecrets(env.gatehouse.ctx.config() as Json)
        const changes = await Promise.all(
          stale.map(async (path) => ({ path, theirs: at(effective, path), ...(await lastConfigChange(env.gatehouse.ctx, path)) })),
        )
        throw settingsError.conflict(changes)
      }
      const issues = await check(patch)
      if (issues.length > 0) throw settingsError.invalidConfig(issues)
      // ConfigStore validates again, writes the file atomically and notifies listeners: live.
      const next = store.update(patch)
      // On PostgreSQL, written for the other instances before the answer leaves.
      await store.flushed()
      return { effective: withoutSecrets(next as Json), overridden: overridden() }
    },
  }
}
