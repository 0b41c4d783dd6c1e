import { createHmac } from 'node:crypto'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import type { GatehouseConfig } from '../config/schema.js'
import type { ConfigStore } from '../config/store.js'
import type { Logger } from '../log.js'
import { recordAudit } from './audit.js'
import type { AuthContext } from './context.js'
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
 * - a change another instance made (PostgreSQL's shared config) was audited by that instance.
 *
 * Secrets (`password`, `secret`, `clientSecret`, … and the password of a URL) are never written:
 * the known file keeps a keyed digest of them, the event says only `"(changed)"`.
 */

export const CONFIG_CHANGED = 'config.changed'
const KNOWN_FILE = 'config.audited.json'
const SECRET_KEY = /^(password|pass|secret|clientSecret|privateKey|apiKey|secretKey)$/i
const MASK = '(secret)'
const MAX_VALUE = 500

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** scheme://user:password@host: the password part (URL parsers' reading: last "@", first ":"), or null. */
function urlPassword(value: string): { masked: string; password: string } | null {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i.exec(value)
  const colon = match?.[2]?.indexOf(':') ?? -1
  if (!match || colon < 0) return null
  return {
    masked: `${match[1]}${match[2]?.slice(0, colon)}:***@${value.slice(match[0].length)}`,
    password: match[2]?.slice(colon + 1) ?? '',
  }
}

export const isSecretPath = (path: string): boolean => path.split('.').some((part) => SECRET_KEY.test(part))

/**
 * The config as leaves (dotted path → value; arrays whole) in the form the log and the known file
 * may hold: secrets as a keyed digest, a URL's password replaced by `***` plus its digest.
 */
export function auditableLeaves(config: unknown, key: string, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (isPlainObject(config)) {
    for (const [k, v] of Object.entries(config)) auditableLeaves(v, key, prefix ? `${prefix}.${k}` : k, out)
    return out
  }
  if (config === undefined) return out
  const digest = (value: unknown) => `hmac:${createHmac('sha256', key).update(JSON.stringify(value)).digest('base64url').slice(0, 16)}`
  if (isSecretPath(prefix)) out[prefix] = digest(config)
  else if (typeof config === 'string' && urlPassword(config)) {
    const found = urlPassword(config) as { masked: string; password: string }
    out[prefix] = `${found.masked} ${digest(found.password)}`
  } else out[prefix] = config
  return out
}

export interface ConfigChange {
  key: string
  from: unknown
  to: unknown
}

/** How a leaf shows in an event: digests of secrets become "(secret)", long values are cut. */
function shown(value: unknown): unknown {
  if (value === undefined) return null
  if (typeof value === 'string' && value.startsWith('hmac:')) return MASK
  if (typeof value === 'string' && / hmac:[\w-]+$/.test(value)) return value.replace(/ hmac:[\w-]+$/, '')
  const json = JSON.stringify(value)
  return json.length > MAX_VALUE ? `${json.slice(0, MAX_VALUE)}…` : value
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
    record(changes, { via: panelCaller() ? 'panel' : 'server' })
  })
}
