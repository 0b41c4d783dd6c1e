import { signUpExposure } from './core/sign-up-gate.js'
import './schema.js' // the database tables (core + features), handed down to db/ as it loads: first, before any module that queries
import { configAuditSettled, watchConfigChanges } from './core/config-audit.js'
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import type { EventEmitter } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { type H3, serve } from 'h3'
import { type AuthContext, createAuthContext, systemClock } from './core/context.js'
import { OutageMonitor, watchOutages } from './core/outage.js'
import { recordAudit } from './core/audit.js'
import {
  DatabaseRateLimitStore,
  effectiveRateLimitStorage,
  MemoryRateLimitStore,
  OutageTolerantRateLimitStore,
  type RateLimitStore,
} from './core/rate-limit.js'
import './config-schema.js' // the whole config schema (core + features), handed down to config/ as it loads
import { ConfigError, ConfigStore } from './config/store.js'
import { configProblems } from './config-checks.js'
import { passwordHashQueue } from './crypto/hash-queue.js'
import { type EngineFlags, resolveEngine } from './db/engine.js'
import { maskUrlPassword } from './config/url-password.js'
import { type DB, migrationsFolder, openDatabase } from './db/index.js'
import { NewerDatabaseError, PRE_UPGRADE_SUFFIX, pendingMigrationsSqlite, refuseNewerSqlite } from './db/release.js'
import { SqliteDatabase } from './db/sqlite-driver.js'
import { packageVersion } from './version.js'
import type { SecondaryStorage } from './secondary-storage/redis.js'
import { SharedCaches } from './secondary-storage/shared-cache.js'
import { SecondaryStorageRateLimitStore } from './core/secondary-rate-limit.js'
import { features } from './features/index.js'
import { archiveName, createBackup } from './features/backup/archive.js'
import { attachFeatures } from './features-of.js'
import { createAuthApp, type DirectHandler } from './http/app.js'
import { allRoutes } from './routes.js'
import { OutboxMailer } from './mail/outbox.js'
import { findUserByEmail } from './core/users.js'
import { DEFAULT_SECRET, resolveSecret } from './secret.js'
import { configuredLogger, type Logger, logs, logWith } from './log.js'

export type { Logger } from './log.js'

export const consoleLogger: Logger = {
  info: (m) => console.log(m),
  warn: (m) => console.warn(`warning: ${m}`),
  error: (m, e) => console.error(m, e ?? ''),
}

import type { Gatehouse, GatehouseDatabase, GatehouseOptions } from './instance.js'
import { hostedPageURL } from './http/hosted-page-url.js'
import { forgetRunningServer, recordRunningServer } from './db/running-server.js'
export type { Gatehouse, GatehouseDatabase, GatehouseOptions, ListenAt } from './instance.js'

/** The config, secret and data directory of a server about to open its database. */
interface Prepared {
  options: GatehouseOptions
  logger: Logger
  store: ConfigStore
  secret: string
}

function prepare(options: GatehouseOptions): Prepared {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
  const store = new ConfigStore(
    options.dataDir ? join(options.dataDir, 'config.json') : null,
    (options.config ?? {}) as Record<string, unknown>,
    options.configSources,
  )
  // Without a logger of its own (the CLI), the server logs as `log.format` and `log.level` say.
  const logger = options.logger ?? configuredLogger(() => store.get().log)
  logConfigMigrations(store, logger, 0)
  const secret = resolveSecret(options.secret, options.dataDir)
  if (secret === DEFAULT_SECRET) {
    logger.warn('the default secret is in use: anyone can forge sessions. Set GATEHOUSE_SECRET to a long random value.')
  }
  if (options.dataDir) for (const feature of features) feature.beforeOpen?.(options.dataDir, logger)
  return { options, logger, store, secret }
}

/** One warning per configuration migration applied from `from` on (server/config/migrations.ts). */
function logConfigMigrations(store: ConfigStore, logger: Logger, from: number): void {
  for (const m of store.migrations.slice(from)) {
    const where =
      m.where === 'file'
        ? `config.json rewritten (the previous file is ${m.backup})`
        : m.where === 'overrides'
          ? 'applied in memory to the --config file and flags: edit them as it says'
          : 'applied to the configuration shared on PostgreSQL'
    for (const change of m.changes) logger.warn(`configuration migrated for ${m.release} (${m.note}): ${change}; ${where}`)
  }
}

/** Pre-upgrade backups kept in the data directory's backups/ folder (older ones are deleted). */
export const PRE_UPGRADE_KEEP = 3

/**
 * `gatehouse serve` on a data directory whose database lacks some of this build's migrations (an
 * upgrade): a backup of it as it is, before they are applied (issue 50 §7), named
 * `gatehouse-backup-<time>-pre-upgrade.tar.gz`, the last PRE_UPGRADE_KEEP kept. It carries the
 * config as it was before a configuration migration (its .bak), so the previous release restores
 * exactly what it ran on. A database a newer release migrated is refused first (no backup).
 */
async function preUpgradeBackup(prepared: Prepared): Promise<void> {
  const { options, logger, store, secret } = prepared
  if (!options.dataDir) return
  const file = join(options.dataDir, 'gatehouse.db')
  if (!existsSync(file)) return
  const folder = options.migrations ?? migrationsFolder
  const backups = join(options.dataDir, 'backups')
  const sqlite = new SqliteDatabase(file, { fileMustExist: true })
  try {
    sqlite.pragma('busy_timeout = 5000')
    refuseNewerSqlite(sqlite, folder, file, backups)
    const { applied, pending } = pendingMigrationsSqlite(sqlite, folder)
    if (applied === 0 || pending === 0) return
    const now = Date.now()
    const out = join(backups, archiveName(now, 'manual').replace(/\.tar\.gz$/, PRE_UPGRADE_SUFFIX))
    const configBackup = store.migrations.find((m) => m.where === 'file')?.backup ?? undefined
    await createBackup(
      {
        database: { sqliteFile: file },
        dataDir: options.dataDir,
        secret,
        migrationsFolder: folder,
        version: packageVersion(),
        now,
        configFile: configBackup,
      },
      out,
    )
    prunePreUpgradeBackups(backups)
    logger.info(
      `Pre-upgrade backup written: ${out} (schema version ${applied}, ${pending} migration${pending === 1 ? '' : 's'} to apply); to go back: gatehouse restore ${out} --data-dir ${options.dataDir}`,
    )
  } finally {
    sqlite.close()
  }
}

/**
 * The same on PostgreSQL: before `serve` applies this build's pg migrations to a database an
 * earlier release migrated, the logical export of it (at its own schema: a SQLite file the earlier
 * release restores, into SQLite or PostgreSQL) into the data directory's backups/ folder, the last
 * PRE_UPGRADE_KEEP kept. Several instances starting together each write one; the migrations then
 * run once, under the advisory lock.
 */
async function preUpgradeBackupPostgres(prepared: Prepared, url: string): Promise<void> {
  const { options, logger, store, secret } = prepared
  if (!options.dataDir) return
  const { postgresSchemaState } = await import('./db/pg/copy.js')
  const state = await postgresSchemaState(url).catch(() => null)
  // Unreachable: opening it says so, with the reason; a new or newer database: nothing to keep.
  if (!state || state.applied === 0 || state.pending === 0) return
  const backups = join(options.dataDir, 'backups')
  const now = Date.now()
  const out = join(backups, archiveName(now, 'manual').replace(/\.tar\.gz$/, PRE_UPGRADE_SUFFIX))
  const made = await createBackup(
    {
      database: { postgres: url, earlierSchema: true },
      dataDir: options.dataDir,
      secret,
      migrationsFolder,
      version: packageVersion(),
      now,
      configFile: store.migrations.find((m) => m.where === 'file')?.backup ?? undefined,
    },
    out,
  )
  prunePreUpgradeBackups(backups)
  logger.info(
    `Pre-upgrade backup written: ${out} (schema version ${made.manifest.schemaVersion}, ${state.pending} PostgreSQL migration${state.pending === 1 ? '' : 's'} to apply); to go back: gatehouse restore ${out} --data-dir ${options.dataDir} --database-url ${maskUrlPassword(url)}`,
  )
}

/** Deletes pre-upgrade backups beyond the last PRE_UPGRADE_KEEP. */
function prunePreUpgradeBackups(backups: string): void {
  const older = readdirSync(backups)
    .filter((n) => n.endsWith(PRE_UPGRADE_SUFFIX))
    .sort()
  for (const name of older.slice(0, Math.max(0, older.length - PRE_UPGRADE_KEEP))) rmSync(join(backups, name), { force: true })
}

function openSqliteDatabase(options: GatehouseOptions): GatehouseDatabase {
  const file = options.dataDir ? join(options.dataDir, 'gatehouse.db') : ':memory:'
  const opened = openDatabase(file, { migrations: options.migrations })
  return { dialect: 'sqlite', ...opened, location: file }
}

/**
 * A server on the data directory's SQLite database (synchronous: the desktop app and most tests).
 * A config whose `database.url` selects PostgreSQL is refused here: `openGatehouse` opens that.
 */
export function createGatehouse(options: GatehouseOptions): Gatehouse {
  const prepared = prepare(options)
  if (resolveEngine({}, prepared.store.get().database).kind === 'postgres') {
    throw new ConfigError(
      'config database.url selects PostgreSQL: open this server with openGatehouse (gatehouse serve), not createGatehouse',
    )
  }
  return assemble(prepared, openSqliteDatabase(options), null)
}

/**
 * A server on the engine the flags (`--database-url`, `--redis-url` and their variables) or the
 * config's `database.url` / `secondaryStorage.url` select: PostgreSQL (migrations applied under an
 * advisory lock, LISTEN/NOTIFY for the caches) and optionally Redis/Valkey, else SQLite.
 */
export async function openGatehouse(options: GatehouseOptions & { engine?: EngineFlags }): Promise<Gatehouse> {
  const prepared = prepare(options)
  const config = prepared.store.get()
  const engine = resolveEngine(options.engine ?? {}, config.database)
  const redisUrl = options.engine?.redisUrl ?? config.secondaryStorage.url
  let secondary: (SecondaryStorage & { client: unknown }) | null = null
  if (redisUrl) {
    // Loaded on demand: ioredis stays out of a server that does not use it.
    const { redisSecondaryStorage } = await import('./secondary-storage/redis.js')
    secondary = await redisSecondaryStorage(redisUrl).catch((error: Error) => {
      throw new ConfigError(`secondary storage ${maskUrlPassword(redisUrl)}: ${error.message}`)
    })
  }
  try {
    if (engine.kind === 'sqlite') {
      await preUpgradeBackup(prepared)
      return assemble(prepared, openSqliteDatabase(options), secondary)
    }
    await preUpgradeBackupPostgres(prepared, engine.url)
    const { openPostgresEngine } = await import('./db/pg/index.js')
    const { SHARED_CONFIG_TABLE, shareConfig } = await import('./config/shared.js')
    const { ANY_TABLE } = await import('./db/pg/change-signal.js')
    let reloadConfig: (() => Promise<void>) | null = null
    // Redis beside PostgreSQL: caches shared by the instances, their epoch moved by every change
    // this instance is told of (server/secondary-storage/shared-cache.ts).
    const sharedCaches = secondary ? new SharedCaches(secondary) : undefined
    const onChange = (table: string) => {
      sharedCaches?.epoch.bump()
      // ANY_TABLE: the listener was disconnected and may have missed the config's notification.
      if ((table !== SHARED_CONFIG_TABLE && table !== ANY_TABLE) || !reloadConfig) return
      reloadConfig().catch((error: Error) => prepared.logger.warn(`shared configuration not reloaded: ${error.message}`))
    }
    const pg = await openPostgresEngine(engine, { onChange }).catch((error: Error) => {
      if (error instanceof NewerDatabaseError) throw error
      throw new ConfigError(`database ${maskUrlPassword(engine.url)}: ${error.message}`)
    })
    try {
      const before = prepared.store.migrations.length
      reloadConfig = await shareConfig(prepared.store, pg.database.db, prepared.logger)
      logConfigMigrations(prepared.store, prepared.logger, before)
    } catch (error) {
      await pg.close()
      throw error
    }
    return assemble(
      prepared,
      {
        dialect: 'postgres',
        db: pg.database.db as unknown as DB,
        storage: pg.database.storage,
        sqlite: null,
        location: maskUrlPassword(engine.url),
        migrationsFolder: pg.database.migrationsFolder,
        close: () => pg.close(),
      },
      secondary,
      sharedCaches,
    )
  } catch (error) {
    await secondary?.close()
    throw error
  }
}

/**
 * Lets the auth app's direct routes (GET /get-session) answer before srvx's request listener,
 * which gets every other request as before. Done right after `serve()` returns, before the first
 * connection can be accepted.
 */
function putDirectRoutesFirst(server: EventEmitter, direct: DirectHandler): void {
  const listeners = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>
  server.removeAllListeners('request')
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (direct(req, res)) return
    for (const listener of listeners) listener.call(server, req, res)
  })
}

type Secondary = (SecondaryStorage & { client: unknown }) | null

/**
 * The auth context and its outbox mailer (each needs the other: the mailer reports deliveries to
 * ctx.events and asks ctx for account links), with the features attached and the mailer and
 * hash queue following the live config.
 */
function createContext(prepared: Prepared, database: GatehouseDatabase, origin: string, sharedCaches?: SharedCaches) {
  const { options, logger, store, secret } = prepared
  const clock = options.clock ?? systemClock
  const mailer = new OutboxMailer({
    db: database.db,
    dialect: database.dialect,
    clock,
    config: () => store.get(),
    smtpUrl: options.smtpUrl,
    logger,
    secret,
    delivered: (sent) => ctx.events.mailDelivery(sent),
    accountLink: async (to) =>
      ctx.config().hostedPages.enabled && (await findUserByEmail(ctx, to)) ? hostedPageURL(ctx, 'account') : null,
  })
  const ctx = createAuthContext(database, {
    config: () => store.get(),
    clock,
    secret,
    baseURL: `${origin}${store.get().basePath}`,
    mailer,
    sharedCaches,
  })
  attachFeatures(ctx, features)
  // Messages queued before a restart, or while SMTP was missing, go out as soon as they can.
  store.onChange(() => mailer.wake())
  // The hash queue is per process; its depth follows the live config.
  passwordHashQueue.maxPending = store.get().security.passwordHashQueue
  store.onChange((config) => {
    passwordHashQueue.maxPending = config.security.passwordHashQueue
  })
  mailer.wake()
  return { ctx, mailer }
}

/**
 * The rate-limit counters: in memory, in the database (falling back to memory during a storage
 * outage) or in the secondary storage, chosen per request from the live config; and the outage
 * monitor the database store reports to. Warns once about a storage choice that cannot work as
 * configured.
 */
function rateLimitStores(ctx: AuthContext, prepared: Prepared, database: GatehouseDatabase, secondary: Secondary) {
  const { store, logger } = prepared
  const memoryLimits = new MemoryRateLimitStore(() => ctx.clock.now())
  // Known storage outages answer 503 and are logged once each (server/core/outage.ts).
  const outages = new OutageMonitor(() => database.storage.acceptsWrites(1_000), logger)
  watchOutages(ctx, outages)
  const databaseLimits = new OutageTolerantRateLimitStore(new DatabaseRateLimitStore(ctx), memoryLimits, (e) => outages.note(e) !== null)
  const sharedLimits = secondary ? new SecondaryStorageRateLimitStore(secondary) : null
  const deployment = { dialect: database.dialect, secondaryStorage: sharedLimits !== null }
  const configuredStorage = store.get().rateLimit.storage
  if (configuredStorage === 'secondary-storage' && !sharedLimits) {
    logger.warn('rateLimit.storage is "secondary-storage" but no --redis-url is set: the counters are kept in the database')
  }
  if (configuredStorage === 'memory' && database.dialect === 'postgres') {
    logger.warn(
      'rateLimit.storage is "memory" on PostgreSQL: each instance counts on its own, so N instances allow N times the limit; leave it unset (or "database" / "secondary-storage") to share the counters',
    )
  }
  const rateLimitStore = (): RateLimitStore => {
    const storage = effectiveRateLimitStorage(store.get().rateLimit.storage, deployment)
    if (storage === 'memory') return memoryLimits
    if (storage === 'secondary-storage' && sharedLimits) return sharedLimits
    return databaseLimits
  }
  return { rateLimitStore, outages }
}

/** Who may create an account (issue 47 §2): said once at start while anyone who reaches the server can. */
function announceOpenSignUp(ctx: AuthContext, logger: Logger): void {
  const exposure = signUpExposure(ctx)
  if (exposure.open) {
    logger.info(
      `sign-up is open: anyone who reaches this server can create an account (${exposure.methods.join(', ')})${exposure.verificationRequired ? ', which must verify its email first' : exposure.appsRequireVerified ? ', which signs in at once and is vouched for to apps once its email is verified' : ', and email verification is not required'}; set signUp.mode to "invitation" or "closed" to restrict it`,
    )
  }
}

/**
 * Starts what runs beside the HTTP listener: the pid file, the features' jobs, the audit of the
 * configuration's migrations and changes. Returns what close() stops.
 */
function startBackground(ctx: AuthContext, prepared: Prepared, database: GatehouseDatabase, rateLimitStore: () => RateLimitStore) {
  const { options, logger, store } = prepared
  // A server has this data directory open: `gatehouse restore` refuses to write under it.
  // Beside it, the database it uses (no secrets): `gatehouse backup` refuses to read another one.
  const dataDir = options.dataDir ?? null
  if (dataDir)
    recordRunningServer(dataDir, database.dialect === 'sqlite' ? { sqliteFile: database.location } : { postgres: database.location })

  const stopFeatures = features
    .map((feature) =>
      feature.start?.({
        ctx,
        logger,
        dataDir: options.dataDir,
        migrationsFolder: database.migrationsFolder,
        onConfigChange: (listener) => store.onChange(() => listener()),
        rateLimitStore,
      }),
    )
    .filter((stop) => stop !== undefined)
  // Configuration migrations applied at start (logged by prepare): one audit event each.
  for (const m of store.migrations) {
    recordAudit(ctx, {
      type: 'config.migrated',
      target: m.where,
      detail: { release: m.release, note: m.note, changes: m.changes, backup: m.backup, actor: 'gatehouse' },
    }).catch((error: Error) => logger.warn(`configuration migration not audited: ${error.message}`))
  }
  // Every change of the effective config is audited, the one found at start included (issue 31 §2).
  const stopConfigAudit = watchConfigChanges(ctx, store, options.dataDir, logger)
  return { dataDir, stopFeatures, stopConfigAudit }
}

/**
 * The HTTP listener, which can be closed and opened again elsewhere (the Network panel): where
 * it listens follows the last `listen(at)`, and the default base URL follows the bound port.
 */
function httpListener(
  ctx: AuthContext,
  prepared: Prepared,
  served: { app: H3; direct: DirectHandler },
  at: { host: string; port: number; baseURL: string | undefined },
): Pick<Gatehouse, 'listen' | 'closeListener' | 'listening'> {
  const { store } = prepared
  let { host, port, baseURL } = at
  let server: ReturnType<typeof serve> | null = null
  let bound: { host: string; port: number } | null = null
  const closeListener = async () => {
    const current = server
    server = null
    bound = null
    if (current) await current.close(true)
  }
  return {
    async listen(at) {
      if (server) throw new Error('the HTTP listener is already running; close it first')
      if (at?.host !== undefined) host = at.host
      if (at?.port !== undefined) port = at.port
      if (at?.baseURL !== undefined) baseURL = at.baseURL ?? undefined
      const candidate = serve(served.app, {
        port,
        hostname: host,
        silent: true,
        gracefulShutdown: false,
        // Slow or oversized clients are cut off by the listener itself (slowloris, header floods).
        node: { maxHeaderSize: 16 * 1024, headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 },
      })
      try {
        await candidate.ready()
      } catch (error) {
        // A taken port (EADDRINUSE) or a missing address: nothing stays half-open.
        await candidate.close(true).catch(() => {})
        throw error
      }
      // What features started that must work for the server to be up (the LDAP listener): one line naming the field.
      for (const feature of features) {
        try {
          await feature.ready?.(ctx)
        } catch (error) {
          await candidate.close(true).catch(() => {})
          throw new ConfigError((error as Error).message)
        }
      }
      server = candidate
      if (candidate.node?.server) putDirectRoutesFirst(candidate.node.server, served.direct)
      const address = candidate.node?.server?.address()
      const actualPort = address && typeof address === 'object' ? address.port : port
      const listening = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`
      bound = { host, port: actualPort }
      // With port 0 the real port is known only now; the default base URL follows it.
      ctx.baseURL = `${(baseURL ?? listening).replace(/\/+$/, '')}${store.get().basePath}`
      // What the schema cannot see (the base URL outside the cookie domain, a role named like an
      // organization) refuses to serve, one line naming the field.
      const issue = (await configProblems(ctx, store.get()))[0]
      if (issue) {
        await closeListener()
        throw new ConfigError(`configuration: ${issue.path}: ${issue.message}`)
      }
      return `${listening}${store.get().basePath}`
    },
    closeListener,
    listening: () => bound,
  }
}

function assemble(prepared: Prepared, database: GatehouseDatabase, secondary: Secondary, sharedCaches?: SharedCaches): Gatehouse {
  const { options, logger, store } = prepared
  const host = options.host ?? '127.0.0.1'
  const port = options.port ?? 4280
  const baseURL = options.baseURL
  const origin = (baseURL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '')
  const { ctx, mailer } = createContext(prepared, database, origin, sharedCaches)
  const { rateLimitStore, outages } = rateLimitStores(ctx, prepared, database, secondary)
  announceOpenSignUp(ctx, logger)
  const { dataDir, stopFeatures, stopConfigAudit } = startBackground(ctx, prepared, database, rateLimitStore)

  const { app, direct } = createAuthApp({
    ctx,
    routes: allRoutes,
    rateLimitStore,
    onUnexpectedError: (error, path, fields) => logWith(logger, 'error', `unexpected error on ${path}`, fields, error),
    // A line per answered request at debug level; an expected refusal (4xx) is never an error.
    requestLog: { enabled: () => logs(logger, 'debug'), answered: (fields) => logWith(logger, 'debug', 'request answered', fields) },
  })
  const listener = httpListener(ctx, prepared, { app, direct }, { host, port, baseURL })
  return {
    app,
    logger,
    ctx,
    config: store,
    database,
    dataDir: options.dataDir,
    ...listener,
    async close() {
      try {
        await listener.closeListener()
        outages.stop()
        for (const stop of stopFeatures) await stop()
        stopConfigAudit()
        await configAuditSettled(ctx)
        // A config change still being written to the shared table lands before the pool closes.
        await store.flushed().catch(() => {})
        await mailer.close()
        await database.close()
        await secondary?.close()
      } finally {
        // Even when a step above failed: a pid file left behind would name a process that is gone
        // (or, once its pid is reused, another one) to backup, restore and migrate.
        if (dataDir) forgetRunningServer(dataDir)
      }
    },
  }
}
