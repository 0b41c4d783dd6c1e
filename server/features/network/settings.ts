import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { ConfigError } from '../../config/store.js'
import { lanAddresses, proposeBaseURLs } from './system.js'

/**
 * Where the API listens, as the Network panel stores it: `network.json` in the data directory
 * (mode 0600), read at start-up by `gatehouse serve` and the desktop app. It is kept apart from
 * config.json because it is a start-up setting of the listener, not of better-auth: the panel
 * applies it by restarting the HTTP listener only. Flags and GATEHOUSE_* variables win over it.
 */
export const DEFAULT_PORT = 4280
export const LOOPBACK_HOST = '127.0.0.1'
export const ALL_INTERFACES_HOST = '0.0.0.0'

export const networkSettingsSchema = z
  .object({
    /** loopback: this machine only; lan: other machines too. */
    listen: z.enum(['loopback', 'lan']).default('loopback'),
    /** With lan: the interface name to bind (its IPv4 address); null binds every interface. */
    interface: z.string().min(1).max(100).nullable().default(null),
    port: z.number().int().min(1).max(65535).default(DEFAULT_PORT),
    /** The public URL apps use; null: proposed from the address the API listens on. */
    baseURL: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .nullable()
      .default(null),
  })
  .strict()
export type NetworkSettings = z.infer<typeof networkSettingsSchema>

/** The Network panel's file in the data directory (backups carry it: backup/archive.ts). */
export const NETWORK_FILE = 'network.json'
export const networkFile = (dataDir: string) => join(dataDir, NETWORK_FILE)

export function readNetworkSettings(dataDir: string): NetworkSettings {
  const file = networkFile(dataDir)
  if (!existsSync(file)) return networkSettingsSchema.parse({})
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    throw new ConfigError(`network settings ${file}: not valid JSON (${(e as Error).message})`)
  }
  const parsed = networkSettingsSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new ConfigError(`network settings ${file}: ${issue?.path.join('.') || 'value'}: ${issue?.message}`)
  }
  return parsed.data
}

export function writeNetworkSettings(dataDir: string, settings: NetworkSettings): void {
  const file = networkFile(dataDir)
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 })
  chmodSync(tmp, 0o600)
  renameSync(tmp, file)
}

/** Start-up values from flags or GATEHOUSE_* variables: they win over the stored settings. */
export interface NetworkOverrides {
  host?: { value: string; source: string }
  port?: { value: number; source: string }
  baseURL?: { value: string; source: string }
}

export interface ResolvedNetwork {
  host: string
  port: number
  /** Origin apps use (undefined: http://HOST:PORT, the core default). */
  baseURL?: string
}

/** The IPv4 address of a named interface, or a ConfigError naming what exists. */
export function interfaceAddress(name: string): string {
  const found = lanAddresses().find((a) => a.interface === name && a.family === 'IPv4')
  if (!found) {
    const names = [...new Set(lanAddresses().map((a) => a.interface))]
    throw new ConfigError(`network: interface "${name}" has no IPv4 address now (available: ${names.join(', ') || 'none'})`)
  }
  return found.address
}

export function hostOf(settings: NetworkSettings): string {
  if (settings.listen === 'loopback') return LOOPBACK_HOST
  return settings.interface ? interfaceAddress(settings.interface) : ALL_INTERFACES_HOST
}

const isWildcard = (host: string) => host === '0.0.0.0' || host === '::'

/**
 * Host, port and base URL to listen with: overrides, then the stored settings. A wildcard host
 * without a base URL gets one proposed from the machine's LAN address (http://0.0.0.0:… is no
 * address a client can use).
 */
export function resolveNetwork(settings: NetworkSettings, overrides: NetworkOverrides): ResolvedNetwork {
  const host = overrides.host?.value ?? hostOf(settings)
  const port = overrides.port?.value ?? settings.port
  let baseURL = overrides.baseURL?.value ?? settings.baseURL ?? undefined
  if (!baseURL && isWildcard(host)) baseURL = proposeBaseURLs(port)[0]?.url
  return { host, port, ...(baseURL ? { baseURL: baseURL.replace(/\/+$/, '') } : {}) }
}
