import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { H3 } from 'h3'
import { serve } from 'h3'
import type { AuthContext, Clock } from './core/context.js'
import { createAuthContext, systemClock } from './core/context.js'
import { DatabaseRateLimitStore, MemoryRateLimitStore, type RateLimitStore } from './core/rate-limit.js'
import type { GatehouseConfigInput } from './config/schema.js'
import { ConfigStore } from './config/store.js'
import { passwordHashQueue } from './crypto/hash-queue.js'
import { assertEngineServable, resolveEngine } from './db/engine.js'
import { type Database_, openDatabase } from './db/index.js'
import { features } from './features/index.js'
import { createAuthApp } from './http/app.js'
import { allRoutes } from './http/routes/index.js'
import { OutboxMailer } from './mail/outbox.js'
import { DEFAULT_SECRET, resolveSecret } from './secret.js'

export interface Logger {
  info(message: string): void
  warn(message: string): void
  error(message: string, error?: unknown): void
}

export const consoleLogger: Logger = {
  info: (m) => console.log(m),
  warn: (m) => console.warn(`warning: ${m}`),
  error: (m, e) => console.error(m, e ?? ''),
}

export interface GatehouseOptions {
  /** Holds gatehouse.db, config.json and the generated secret. null: in-memory, nothing on disk. */
  dataDir: string | null
  port?: number
  host?: string
  /** Public origin the API is reached at; default http://HOST:PORT. */
  baseURL?: string
  secret?: string
  /** SMTP server for outgoing mail (--smtp-url / GATEHOUSE_SMTP_URL); wins over the config's mail.smtp. */
  smtpUrl?: string
  /** Overrides merged over the stored config (from --config and flags). */
  config?: GatehouseConfigInput | Record<string, unknown>
  clock?: Clock
  logger?: Logger
  /** Folder of the drizzle migrations, when the sources are bundled (the Electron app). */
  migrations?: string
}

export interface Gatehouse {
  app: H3
  ctx: AuthContext
  config: ConfigStore
  database: Database_
  /** Holds the database, config.json, the secret and backups/ (null: in-memory). */
  dataDir: string | null
  /**
   * Listens on host:port; resolves with the API URL. `at` moves the listener (the Network panel):
   * a new host, port or base URL (null: back to http://HOST:PORT). Call closeListener() first.
   */
  listen(at?: ListenAt): Promise<string>
  /** Stops the HTTP listener only (the database, mailer and jobs keep running). */
  closeListener(): Promise<void>
  /** Where the HTTP listener is bound now (null when it is not). */
  listening(): { host: string; port: number } | null
  close(): Promise<void>
}

export interface ListenAt {
  host?: string
  port?: number
  baseURL?: string | null
}

export function createGatehouse(options: GatehouseOptions): Gatehouse {
  const logger = options.logger ?? consoleLogger
  let host = options.host ?? '127.0.0.1'
  let port = options.port ?? 4280
  let baseURL = options.baseURL
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
  const store = new ConfigStore(
    options.dataDir ? join(options.dataDir, 'config.json') : null,
    (options.config ?? {}) as Record<string, unknown>,
  )
  const secret = resolveSecret(options.secret, options.dataDir)
  if (secret === DEFAULT_SECRET) {
    logger.warn('the default secret is in use: anyone can forge sessions. Set GATEHOUSE_SECRET to a long random value.')
  }
  assertEngineServable(resolveEngine({}, store.get().database))
  if (options.dataDir) for (const feature of features) feature.beforeOpen?.(options.dataDir, logger)
  const database = openDatabase(options.dataDir ? join(options.dataDir, 'gatehouse.db') : ':memory:', {
    migrations: options.migrations,
  })
  const origin = (baseURL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '')
  const clock = options.clock ?? systemClock
  const mailer = new OutboxMailer({ db: database.db, clock, config: () => store.get(), smtpUrl: options.smtpUrl, logger, secret })
  const ctx = createAuthContext(database, {
    config: () => store.get(),
    clock,
    secret,
    baseURL: `${origin}${store.get().basePath}`,
    mailer,
    features,
  })
  // Messages queued before a restart, or while SMTP was missing, go out as soon as they can.
  store.onChange(() => mailer.wake())
  // The hash queue is per process; its depth follows the live config.
  passwordHashQueue.maxPending = store.get().security.passwordHashQueue
  store.onChange((config) => {
    passwordHashQueue.maxPending = config.security.passwordHashQueue
  })
  mailer.wake()

  const memoryLimits = new MemoryRateLimitStore(() => ctx.clock.now())
  const databaseLimits = new DatabaseRateLimitStore(ctx)
  const rateLimitStore = (): RateLimitStore => (store.get().rateLimit.storage === 'memory' ? memoryLimits : databaseLimits)

  // A server has this data directory open: `gatehouse restore` refuses to write under it.
  const pidFile = options.dataDir ? join(options.dataDir, 'gatehouse.pid') : null
  if (pidFile) writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 })

  const stopFeatures = features
    .map((feature) => feature.start?.({ ctx, logger, dataDir: options.dataDir, migrationsFolder: database.migrationsFolder }))
    .filter((stop) => stop !== undefined)

  const app = createAuthApp({
    ctx,
    routes: allRoutes,
    rateLimitStore,
    onUnexpectedError: (error, path) => logger.error(`unexpected error on ${path}:`, error),
  })

  let server: ReturnType<typeof serve> | null = null
  let bound: { host: string; port: number } | null = null
  const closeListener = async () => {
    const current = server
    server = null
    bound = null
    if (current) await current.close(true)
  }
  return {
    app,
    ctx,
    config: store,
    database,
    dataDir: options.dataDir,
    async listen(at) {
      if (server) throw new Error('the HTTP listener is already running; close it first')
      if (at?.host !== undefined) host = at.host
      if (at?.port !== undefined) port = at.port
      if (at?.baseURL !== undefined) baseURL = at.baseURL ?? undefined
      const candidate = serve(app, {
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
      server = candidate
      const address = candidate.node?.server?.address()
      const actualPort = address && typeof address === 'object' ? address.port : port
      const listening = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`
      bound = { host, port: actualPort }
      // With port 0 the real port is known only now; the default base URL follows it.
      ctx.baseURL = `${(baseURL ?? listening).replace(/\/+$/, '')}${store.get().basePath}`
      return `${listening}${store.get().basePath}`
    },
    closeListener,
    listening: () => bound,
    async close() {
      await closeListener()
      for (const stop of stopFeatures) await stop()
      await mailer.close()
      database.close()
      try {
        if (pidFile && readFileSync(pidFile, 'utf8').trim() === String(process.pid)) rmSync(pidFile, { force: true })
      } catch {}
    },
  }
}
