import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { packageVersion } from '../version.js'
import { type AppliedConfigMigration, migrateConfig } from './migrations.js'
import { describeConfigError, type GatehouseConfig, wholeConfigSchema } from './schema.js'
import { type StartupKey, type StartupSources, startupKeysOf } from './startup.js'

/** A configuration problem the operator must fix: one line naming the field. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

type Json = Record<string, unknown>

const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Deep merge of plain objects; arrays and scalars from `over` replace those of `base`. */
export function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base }
  for (const [key, value] of Object.entries(over)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue
    const current = out[key]
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value
  }
  return out
}

/**
 * JSON Merge Patch (RFC 7386): objects merge key by key, `null` removes a key (its default, or a
 * start-up value, applies again), anything else replaces.
 */
export function applyMergePatch(base: Json, patch: Json): Json {
  const out: Json = { ...base }
  for (const [key, value] of Object.entries(patch)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue
    if (value === null) {
      delete out[key]
      continue
    }
    const current = out[key]
    out[key] = isPlainObject(value) ? applyMergePatch(isPlainObject(current) ? current : {}, value) : value
  }
  return out
}

export function readJsonFile(file: string, label: string): Json {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new ConfigError(`${label} ${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new ConfigError(`${label} ${file}: not valid JSON (${(e as Error).message})`)
  }
  if (!isPlainObject(value)) throw new ConfigError(`${label} ${file}: must contain a JSON object`)
  return value
}

function parse(value: Json, label: string): GatehouseConfig {
  const parsed = wholeConfigSchema().safeParse(value)
  if (!parsed.success) throw new ConfigError(`${label}: ${describeConfigError(parsed.error)}`)
  return parsed.data
}

/**
 * Told after every change: the new config, the one it replaced, and where the change came from
 * (`update`: this process, e.g. the panel; `shared`: another instance, already audited there).
 */
type Listener = (config: GatehouseConfig, previous: GatehouseConfig, origin: ChangeOrigin) => void

/**
 * `update`: this process (the panel, anything calling update()); `shared`: another instance, already
 * audited there; `reload`: the data directory's file re-read on SIGHUP (`gatehouse reload`).
 */
export type ChangeOrigin = 'update' | 'shared' | 'reload'

/**
 * Keys the server reads only at start: a change needs a restart. The panel refuses them
 * (RESTART_REQUIRED); a reload keeps their running value and says so.
 */
export const RESTART_ONLY_KEYS = ['basePath', 'database', 'secondaryStorage'] as const

/** What a reload of the config file did: the keys it applied, and those that wait for a restart. */
export interface ReloadOutcome {
  applied: string[]
  needsRestart: string[]
}

/**
 * The live configuration. Layers, later ones winning: SPEC defaults, the file stored in the data
 * directory (what the control panel edits), then `--config` and command-line/environment
 * overrides. Updates validate first and never write an invalid file.
 */
/** JSON with every object's keys sorted, so two equal layers compare equal whatever their key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  )
}

/** `config.json.<release>.bak`: the file as it was before this release rewrote it (never overwritten: `.1`, `.2`… after). */
function backupName(file: string): string {
  const base = `${file}.${packageVersion()}`
  if (!existsSync(`${base}.bak`)) return `${base}.bak`
  for (let n = 1; ; n++) if (!existsSync(`${base}.${n}.bak`)) return `${base}.${n}.bak`
}

/** Dotted paths of the leaves where two configurations differ (arrays compare whole). */
export function changedKeys(a: unknown, b: unknown, prefix = ''): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    return [...keys].sort().flatMap((k) => changedKeys(a[k], b[k], prefix ? `${prefix}.${k}` : k))
  }
  return canonicalJson(a) === canonicalJson(b) ? [] : [prefix]
}

/**
 * Whether the file would be taken by a reload (or a start), without applying anything: throws
 * ConfigError naming the problem.
 */
export function checkConfigFile(file: string): void {
  parse(migrateConfig(readJsonFile(file, 'config file')).layer, `config file ${file}`)
}

export class ConfigStore {
  private stored: Json
  private current: GatehouseConfig
  private readonly listeners = new Set<Listener>()
  /** Where the stored layer is shared with other instances (PostgreSQL: server/config/shared.ts). */
  private share: ((stored: Json) => Promise<void>) | null = null
  private sharing: Promise<void> = Promise.resolve()
  /** Local updates not yet written to the shared layer. */
  private unshared = 0
  /** Counts local updates: a reload that read the shared layer before one must not apply it. */
  private updates = 0

  /**
   * The configuration migrations applied while reading (server/config/migrations.ts): to the file
   * (`where: 'file'`, rewritten with the original kept as `backup`) or to the start-up layer
   * (`where: 'overrides'`: `--config` and flags, migrated in memory only). The server logs and audits them.
   */
  readonly migrations: Array<AppliedConfigMigration & { where: 'file' | 'overrides' | 'shared'; backup: string | null }> = []
  private readonly overrides: Json
  /**
   * Running values of restart-only keys a reload found changed in the file: they stay in effect
   * (the file keeps the edit for the next start).
   */
  private pinned: Json = {}

  constructor(
    private readonly file: string | null,
    overrides: Json = {},
    /** Where each part of `overrides` came from (the config file, a flag, a variable): config/startup.ts. */
    private readonly sources: StartupSources = [],
  ) {
    this.stored = file && existsSync(file) ? readJsonFile(file, 'config file') : {}
    if (file && existsSync(file)) {
      const migrated = migrateConfig(this.stored)
      if (migrated.applied.length > 0) {
        // Validated before anything is written: a file this build cannot read stays as it was.
        parse(migrated.layer, `config file ${file} (migrated)`)
        const backup = backupName(file)
        copyFileSync(file, backup)
        writeFileSync(`${file}.tmp`, `${JSON.stringify(migrated.layer, null, 2)}\n`, { mode: 0o600 })
        renameSync(`${file}.tmp`, file)
        this.stored = migrated.layer
        for (const m of migrated.applied) this.migrations.push({ ...m, where: 'file', backup })
      }
      parse(this.stored, `config file ${file}`)
    }
    const fromStartup = migrateConfig(overrides)
    for (const m of fromStartup.applied) this.migrations.push({ ...m, where: 'overrides', backup: null })
    this.overrides = fromStartup.layer
    this.current = parse(this.effective(this.stored), 'configuration')
  }

  /** The layers merged: the stored one, the running values a reload pinned, then the start-up overrides. */
  private effective(stored: Json): Json {
    return deepMerge(deepMerge(stored, this.pinned), this.overrides)
  }

  get(): GatehouseConfig {
    return this.current
  }

  /**
   * The keys start-up options set (`--config`, flags, GATEHOUSE_* variables), each with its source:
   * they win over the stored layer, so the panel shows them read-only and never stores them.
   */
  startupKeys(): StartupKey[] {
    return startupKeysOf(this.overrides, this.sources)
  }

  /** The stored layer only (what the panel shows as editable). */
  storedLayer(): Json {
    return structuredClone(this.stored)
  }

  /**
   * Applies a partial change as a JSON Merge Patch (`null` removes a key); throws ConfigError (and
   * changes nothing) if the result is invalid.
   */
  update(patch: Json): GatehouseConfig {
    const stored = applyMergePatch(this.stored, patch)
    parse(stored, 'configuration')
    const next = this.commit(stored, 'update')
    this.shareUpdate(stored)
    return next
  }

  /** Hands a local change to the shared layer (PostgreSQL), in order. */
  private shareUpdate(stored: Json): void {
    this.updates++
    if (this.share) {
      const share = this.share
      this.unshared++
      // In order: a later update never lands before an earlier one.
      this.sharing = this.sharing
        .catch(() => {})
        .then(() => share(stored))
        .finally(() => {
          this.unshared--
        })
      // A failed write reaches whoever awaits flushed(); nobody else must see an unhandled
      // rejection (in Node that ends the process: a config change during a database outage).
      this.sharing.catch(() => {})
    }
  }

  /**
   * Re-reads the data directory's file (SIGHUP, `gatehouse reload`): a hand edit applies as a panel
   * save would (validated first: an invalid file throws ConfigError and changes nothing; listeners
   * told; shared with other instances). A key of `restartOnly` whose value changed keeps its running
   * value until the next start. Flags, environment variables and `--config` are read at start only.
   */
  reloadFile(restartOnly: readonly string[] = RESTART_ONLY_KEYS): ReloadOutcome {
    if (!this.file) throw new ConfigError('no config file to reload: the server runs without a data directory')
    const label = `config file ${this.file}`
    // A file an earlier release wrote is read as this release reads it (rewritten at the next save).
    const layer = migrateConfig(existsSync(this.file) ? readJsonFile(this.file, 'config file') : {}).layer
    parse(layer, label)
    const wanted = parse(deepMerge(layer, this.overrides), label) as unknown as Json
    const running = this.current as unknown as Json
    const needsRestart = restartOnly.filter((key) => canonicalJson(wanted[key]) !== canonicalJson(running[key]))
    const before = this.current
    this.pinned = Object.fromEntries(needsRestart.map((key) => [key, running[key]]))
    if (canonicalJson(layer) === canonicalJson(this.stored)) return { applied: [], needsRestart }
    const next = this.commit(layer, 'reload', false)
    this.shareUpdate(layer)
    return { applied: changedKeys(before, next), needsRestart }
  }

  /**
   * Makes the stored layer current, writes it to the file atomically (unless it was just read from
   * there) and tells the listeners.
   */
  private commit(stored: Json, origin: ChangeOrigin, write = true): GatehouseConfig {
    const previous = this.current
    const next = parse(this.effective(stored), 'configuration')
    if (this.file && write) {
      const tmp = `${this.file}.tmp`
      writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 })
      renameSync(tmp, this.file)
    }
    this.stored = stored
    this.current = next
    for (const listener of this.listeners) listener(next, previous, origin)
    return next
  }

  /**
   * Shares the stored layer through `share` from now on (every update is handed to it, in order);
   * `flushed()` resolves once the last one is written.
   */
  shareWith(share: (stored: Json) => Promise<void>): void {
    this.share = share
  }

  /**
   * A mark to hand back to `replaceStored`: a layer read from the shared store after it is taken
   * is applied only if no local update was still being written when the mark was taken, none
   * happened since, and none is being written now. Otherwise the read may predate this instance's
   * own write (the notification of an earlier write of its own would bring back an older layer);
   * skipping it loses nothing, since the write that lands later notifies again.
   */
  sharedMark(): number {
    return this.unshared > 0 ? -1 : this.updates
  }

  /** Resolves when every update so far has been shared (rejects with the last sharing error). */
  flushed(): Promise<void> {
    return this.sharing
  }

  /**
   * Replaces the stored layer with one another instance wrote (the shared config changed): the
   * same validation as update(); the data directory's file follows it; listeners are told. A layer
   * equal to the current one changes nothing, and so does one read before a local update (see
   * sharedMark). Returns whether it applied.
   */
  replaceStored(shared: Json, mark?: number): boolean {
    if (mark !== undefined && (mark !== this.updates || this.unshared > 0)) return false
    // A layer an earlier release shared is read as this release reads it (the table follows at the next save).
    const migrated = migrateConfig(shared)
    const stored = migrated.layer
    for (const m of migrated.applied) this.migrations.push({ ...m, where: 'shared', backup: null })
    // Compared with keys sorted: PostgreSQL's jsonb gives them back in its own order.
    if (canonicalJson(stored) === canonicalJson(this.stored)) return false
    parse(stored, 'shared configuration')
    this.commit(stored, 'shared')
    return true
  }

  /**
   * What is wrong with a change, without applying it: the same merge and schema as update(), as a
   * list of `{path, message}` (empty when the change is valid).
   */
  problems(patch: Json): Array<{ path: string; message: string }> {
    const stored = applyMergePatch(this.stored, patch)
    for (const candidate of [stored, this.effective(stored)]) {
      const parsed = wholeConfigSchema().safeParse(candidate)
      if (!parsed.success) return parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }))
    }
    return []
  }

  /** The effective config `patch` would give (null when it is invalid: see problems). */
  candidate(patch: Json): GatehouseConfig | null {
    const parsed = wholeConfigSchema().safeParse(this.effective(applyMergePatch(this.stored, patch)))
    return parsed.success ? parsed.data : null
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}
