/**
 * Which database engine a process runs on, and the shared-state options that go with it:
 * `--database-url postgres://…` / GATEHOUSE_DATABASE_URL / config `database.url` selects
 * PostgreSQL (pool size: `--database-pool-size` / GATEHOUSE_DATABASE_POOL_SIZE / config
 * `database.poolSize`); without one, the data directory's SQLite file. `--redis-url redis://…` /
 * GATEHOUSE_REDIS_URL / config `secondaryStorage.url` adds Redis (or Valkey) as secondary storage.
 *
 * The flags are taken out of argv by the CLI entry (server/cli.ts) for every command at once, so
 * `serve`, `user`, `backup`, `restore`, `jwt` and `migrate` all accept them.
 */
import { ConfigError } from '../config/store.js'
import { maskUrlPassword } from '../config/url-password.js'

export const DEFAULT_POOL_SIZE = 10

export interface EngineFlags {
  databaseUrl?: string
  poolSize?: number
  redisUrl?: string
}

export type Engine = { kind: 'sqlite' } | { kind: 'postgres'; url: string; poolSize: number }

const POSTGRES_URL = /^postgres(ql)?:\/\//

export function checkDatabaseUrl(url: string, source: string): string {
  if (!POSTGRES_URL.test(url)) throw new ConfigError(`${source}: "${maskUrlPassword(url)}" is not a postgres:// (or postgresql://) URL`)
  try {
    new URL(url)
  } catch {
    throw new ConfigError(`${source}: "${maskUrlPassword(url)}" is not a valid URL`)
  }
  return url
}

export function checkRedisUrl(url: string, source: string): string {
  if (!/^(redis|rediss|valkey|valkeys):\/\//.test(url))
    throw new ConfigError(`${source}: "${maskUrlPassword(url)}" is not a redis:// (or rediss://) URL`)
  return url
}

function checkPoolSize(text: string, source: string): number {
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < 1 || n > 1000) throw new ConfigError(`${source}: "${text}" is not a pool size (1-1000)`)
  return n
}

/**
 * Removes --database-url, --database-pool-size and --redis-url (as `--x value` or `--x=value`)
 * from argv, reading GATEHOUSE_DATABASE_URL, GATEHOUSE_DATABASE_POOL_SIZE and GATEHOUSE_REDIS_URL
 * when the flags are absent. Throws ConfigError on a malformed value or a flag without a value.
 */
export function takeEngineFlags(argv: string[], env: NodeJS.ProcessEnv): { argv: string[]; flags: EngineFlags } {
  const names = { '--database-url': 'databaseUrl', '--database-pool-size': 'poolSize', '--redis-url': 'redisUrl' } as const
  const found: Partial<Record<(typeof names)[keyof typeof names], string>> = {}
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--') {
      rest.push(...argv.slice(i))
      break
    }
    const eq = arg.indexOf('=')
    const name = (eq > 0 ? arg.slice(0, eq) : arg) as keyof typeof names
    if (!Object.hasOwn(names, name)) {
      rest.push(arg)
      continue
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
      throw new ConfigError(`option '${name} <value>' argument missing`)
    found[names[name]] = value
  }
  const flags: EngineFlags = {}
  const url = found.databaseUrl ?? (env.GATEHOUSE_DATABASE_URL || undefined)
  if (url !== undefined) flags.databaseUrl = checkDatabaseUrl(url, found.databaseUrl ? '--database-url' : 'GATEHOUSE_DATABASE_URL')
  const pool = found.poolSize ?? (env.GATEHOUSE_DATABASE_POOL_SIZE || undefined)
  if (pool !== undefined) flags.poolSize = checkPoolSize(pool, found.poolSize ? '--database-pool-size' : 'GATEHOUSE_DATABASE_POOL_SIZE')
  const redis = found.redisUrl ?? (env.GATEHOUSE_REDIS_URL || undefined)
  if (redis !== undefined) flags.redisUrl = checkRedisUrl(redis, found.redisUrl ? '--redis-url' : 'GATEHOUSE_REDIS_URL')
  return { argv: rest, flags }
}

/** The engine of a process: flags and variables win over the config's `database` section. */
export function resolveEngine(flags: EngineFlags, config?: { url?: string | undefined; poolSize?: number | undefined }): Engine {
  const url = flags.databaseUrl ?? config?.url
  if (!url) return { kind: 'sqlite' }
  return {
    kind: 'postgres',
    url: flags.databaseUrl ? url : checkDatabaseUrl(url, 'config database.url'),
    poolSize: flags.poolSize ?? config?.poolSize ?? DEFAULT_POOL_SIZE,
  }
}

/**
 * The environment a tool command (user, backup, restore, jwt, oidc) runs with: the engine flags
 * taken out of argv become the variables they stand for, so every command resolves its engine the
 * same way (openToolContext), from flags, variables or the data directory's config.
 */
export function engineEnvironment(env: NodeJS.ProcessEnv, flags: EngineFlags): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env }
  if (flags.databaseUrl !== undefined) out.GATEHOUSE_DATABASE_URL = flags.databaseUrl
  if (flags.poolSize !== undefined) out.GATEHOUSE_DATABASE_POOL_SIZE = String(flags.poolSize)
  if (flags.redisUrl !== undefined) out.GATEHOUSE_REDIS_URL = flags.redisUrl
  return out
}
