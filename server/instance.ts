/**
 * The types of a running server (gatehouse.ts builds it). In a module of their own so that panel
 * handlers and features can name the server without importing the composition root, which imports
 * every feature.
 */
import type Database from 'better-sqlite3'
import type { H3 } from 'h3'
import type { GatehouseConfigInput } from './config/schema.js'
import type { ConfigStore } from './config/store.js'
import type { StartupSources } from './config/startup.js'
import type { AuthContext, Clock } from './core/context.js'
import type { DB } from './db/index.js'
import type { Storage } from './db/storage.js'
import type { Logger } from './log.js'

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
  /** Where each part of `config` came from (the `--config` file, a flag, a GATEHOUSE_* variable), as the panel names it. */
  configSources?: StartupSources
  clock?: Clock
  logger?: Logger
  /** Folder of the drizzle migrations, when the sources are bundled (the Electron app). */
  migrations?: string
}

export interface Gatehouse {
  app: H3
  /** The server's logger (the CLI writes its own lines through it, so a json log stays json). */
  logger: Logger
  ctx: AuthContext
  config: ConfigStore
  database: GatehouseDatabase
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

/**
 * The database a server runs on: SQLite in the data directory (the default, and the desktop app's),
 * or PostgreSQL shared by several instances (`--database-url` / GATEHOUSE_DATABASE_URL / config
 * `database.url`). Everything above the storage port is the same on both.
 */
export interface GatehouseDatabase {
  dialect: 'sqlite' | 'postgres'
  /** The pool's (or connection's) handle; rules use `ctx.db`, which is the transaction's inside one. */
  db: DB
  storage: Storage
  /** SQLite only (null on PostgreSQL): the driver, for what is SQLite by nature (backups, the write probe). */
  sqlite: Database.Database | null
  /** Where the data is, for people: the SQLite file, or the PostgreSQL URL without its password. */
  location: string
  /** The migrations applied at open (their count is the schema version). */
  migrationsFolder: string
  close(): void | Promise<void>
}
