import { createHmac } from 'node:crypto'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import type { GatehouseConfig } from '../config/schema.js'
import type { ConfigStore } from '../config/store.js'
import type { Logger } from '../log.js'
import { mapSecrets } from '../config/secret-paths.js'
import { urlPassword } from '../config/url-password.js'
import { queryAuditEvents, recordAudit } from './audit.js'
import type { AuthContext } from './context.js'
import { findUserById } from './user-store.js'
import { panelCaller } from './panel-caller.js'

/**
 * Configuration changes leave a trail (issue 31 §2): one `config.changed` audit event per change
 * of the effective configuration, naming who (the panel's caller, else the operator), when, and
 * the changed keys with their old and new values, secrets masked:
 *
 * - a change made while the server runs (the panel's views, anything calling ConfigStore.update):
 *   `via: panel` inside a panel operation (its caller is the actor), else `via: server`;
 * - a change found at start (config.json edited by hand, `--config`, flags or environment
 *   variables: the command line): the effective config is compared with the last one this data
 *   directory audited (`config.audited.json`, mode 0600), `via: start`, the OS account as actor;
 * - config.json edited by hand and reloaded (SIGHUP, `gatehouse reload`): `via: reload`, the OS
 *   account as actor;
 * - a change another instance made (PostgreSQL's shared config) was audited by that instance.
 *
 * Secrets (the fields the config schema marks `secret()`, plain or sealed, and the password of a
 * URL) are never written: the known file keeps a keyed digest of them, the event says `"(secret)"`.
 */

export const CONFIG_CHANGED = 'config.changed'
const KNOWN_FILE = 'config.audited.json'
const MASK = '(secret)'
const MAX_VALUE = 500
const DIGEST = /^hmac:[\w-]+$/
const URL_DIGEST = / hmac:[\w-]+$/

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The config in the form the log and the known file may hold: every secret field the schema marks
 * (config/secret.ts), plain or sealed, wherever it is (an object, a record, an element of an
 * array such as `genericOAuth.config`), as a keyed digest; a URL's password replaced by `***`
 * plus its digest.
 */
function auditable(config: unknown, key: string): unknown {
  const digest = (value: unknown) => `hmac:${createHmac('sha256', key).update(JSON.stringify(value)).digest('base64url').slice(0, 16)}`
  const urls = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const found = urlPassword(value)
      return found ? `${found.masked} ${digest(found.password)}` : value
    }
    if (Array.isArray(value)) return value.map(urls)
    if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, urls(v)]))
    return value
  }
  return urls(mapSecrets(config, (value) => (value === undefined || value === null ? value : digest(value))))
}

/** Dotted path → value of the auditable config's leaves (arrays whole). */
export function auditableLeaves(config: unknown, key: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const walk = (value: unknown, prefix: string) => {
    if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k)
    else if (value !== undefined) out[prefix] = value
  }
  walk(auditable(config, key), '')
  return out
}

export interface ConfigChange {
  key: string
  from: unknown
  to: unknown
}

/** How a leaf shows in an event: digests of secrets become "(secret)" (inside arrays too), long values are cut. */
function shown(value: unknown): unknown {
  if (value === undefined) return null
  const unmasked = (v: unknown): unknown => {
    if (typeof v === 'string') return DIGEST.test(v) ? MASK : v.replace(URL_DIGEST, '')
    if (Array.isArray(v)) return v.map(unmasked)
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unmasked(x)]))
    return v
  }
  const out = unmasked(value)
  const json = JSON.stringify(out)
  return json.length > MAX_VALUE ? `${json.slice(0, MAX_VALUE)}…` : out
}

/** The keys whose (masked) values differ between two leaf maps, with both values as the log shows them. */
export function diffLeaves(before: Record<string, unknown>, after: Record<string, unknown>): ConfigChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  return keys
    .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
    .map((key) => ({ key, from: shown(before[key]), to: shown(after[key]) }))
}

const pending = new WeakMap<AuthContext, Promise<void>>()

/** Resolves once every config change so far is in the audit log (the panel answers after it). */
export function configAuditSettled(ctx: AuthContext): Promise<void> {
  return pending.get(ctx) ?? Promise.resolve()
}

const osAccount = (): string => {
  try {
    return userInfo().username
  } catch {
    return 'unknown'
  }
}

/**
 * Audits the start-up difference, then every later change of `store`. Returns the function that
 * stops watching.
 */
export function watchConfigChanges(ctx: AuthContext, store: ConfigStore, dataDir: string | null, logger: Logger): () => void {
  const file = dataDir ? join(dataDir, KNOWN_FILE) : null
  const leavesOf = (config: GatehouseConfig) => auditableLeaves(config, ctx.secret)
  const remember = (leaves: Record<string, unknown>) => {
    if (!file) return
    try {
      writeFileSync(`${file}.tmp`, `${JSON.stringify(leaves, null, 2)}\n`, { mode: 0o600 })
      renameSync(`${file}.tmp`, file)
    } catch (error) {
      logger.warn(`could not write ${file}: ${(error as Error).message}`)
    }
  }
  const record = (changes: ConfigChange[], detail: Json) => {
    const write = recordAudit(ctx, {
      type: CONFIG_CHANGED,
      target: [...new Set(changes.map((c) => c.key.split('.')[0]))].join(',').slice(0, 200),
      detail: { ...detail, keys: changes.map((c) => c.key), changes },
    }).catch((error: Error) => logger.warn(`configuration change not audited: ${error.message}`))
    pending.set(
      ctx,
      (pending.get(ctx) ?? Promise.resolve()).then(() => write),
    )
  }

  let known = leavesOf(store.get())
  if (file && existsSync(file)) {
    try {
      const before = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
      const changes = diffLeaves(before, known)
      if (changes.length > 0) record(changes, { via: 'start', actor: `os:${osAccount()}` })
    } catch (error) {
      logger.warn(`${file} unreadable, the configuration found at start is taken as known: ${(error as Error).message}`)
    }
  }
  remember(known)

  return store.onChange((next, _previous, origin) => {
    const leaves = leavesOf(next)
    const changes = diffLeaves(known, leaves)
    known = leaves
    if (changes.length === 0) return
    remember(leaves)
    if (origin === 'shared') return
    // A reload (SIGHUP) applies a hand edit of config.json: the operator's, as at start.
    record(changes, origin === 'reload' ? { via: 'reload', actor: `os:${osAccount()}` } : { via: panelCaller() ? 'panel' : 'server' })
  })
}

/** How many recent configuration changes are searched for the last one of a field. */
const RECENT_CHANGES = 200

/**
 * Who last changed a configuration field, and when, from the trail above: the panel's admin (by
 * email), the operator (`os:<account>` at start), or the server; `someone` when the trail no longer
 * holds it. A change of a parent key (`ldap` replaced whole) counts for its fields. `within`: for a
 * list kept whole (`genericOAuth.config`), whether a change of `path` from one value to the other
 * touched what is asked about (one provider's field); a value cut for the log counts.
 */
export async function lastConfigChange(
  ctx: AuthContext,
  path: string,
  within?: (from: unknown, to: unknown) => boolean,
): Promise<{ by: string; at: number | null }> {
  const { events } = await queryAuditEvents(ctx, { type: CONFIG_CHANGED }, { limit: RECENT_CHANGES })
  for (const event of events) {
    const detail = (typeof event.detail === 'string' ? JSON.parse(event.detail) : event.detail) as {
      keys?: string[]
      changes?: ConfigChange[]
    } | null
    const touched = (detail?.keys ?? []).some((key) => key === path || key.startsWith(`${path}.`) || path.startsWith(`${key}.`))
    if (!touched) continue
    const change = within ? detail?.changes?.find((c) => c.key === path) : undefined
    const cut = (v: unknown) => typeof v === 'string' && v.endsWith('…')
    if (within && change && !cut(change.from) && !cut(change.to) && !within(change.from, change.to)) continue
    return changedBy(ctx, event)
  }
  return { by: 'someone', at: null }
}

/**
 * Who made a change, and when, as its audit event says: the panel's admin (by email), the caller
 * named in `detail.actor` (`os:<account>`, `recovery-link`), the command line, or the server.
 */
export async function changedBy(
  ctx: AuthContext,
  event: { actorUserId: string | null; detail: unknown; createdAt: Date },
): Promise<{ by: string; at: number }> {
  const detail = (typeof event.detail === 'string' ? JSON.parse(event.detail) : event.detail) as { actor?: string; via?: string } | null
  const person = event.actorUserId ? await findUserById(ctx, event.actorUserId) : undefined
  const by =
    person?.email ??
    detail?.actor ??
    (detail?.via === 'panel' ? 'the operator (panel)' : detail?.via === 'cli' ? 'the command line' : 'the server')
  return { by, at: event.createdAt.getTime() }
}
