import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ConfigError, ConfigStore, readJsonFile } from '../config/store.js'
import { maskUrlPassword } from '../config/url-password.js'
import { resolveEngine, takeEngineFlags } from '../db/engine.js'
import { openDatabase } from '../db/index.js'
import { createLogMailer } from '../mail/types.js'
import { resolveSecret } from '../secret.js'
import { type AuthContext, createAuthContext, systemClock } from './context.js'

/**
 * A domain context for a command-line tool (`gatehouse user`, `jwt`, `oidc client`) on a data
 * directory (`--data-dir`, else GATEHOUSE_DATA_DIR, else ./data), with or without a running
 * server: its stored config, its secret and its database, which is the data directory's SQLite
 * file or the PostgreSQL of GATEHOUSE_DATABASE_URL (the CLI turns `--database-url` into it) or of
 * config `database.url`. A write made here reaches every running instance at once: SQLite's
 * data_version and PostgreSQL's change notifications empty their caches. No features' hooks, no
 * outbox: mail is only written to `log` (the CLI's stderr). `configFile` (a command's `--config`)
 * is merged over the stored config as `serve --config` merges it, so the roles it declares
 * (`admin.roles`) are known. An unreadable config.json, `--config` file or an unreachable database
 * is answered as `{ error }` for the command to print (exit code 2).
 */
export interface ToolContext {
  ctx: AuthContext
  close(): Promise<void>
  /**
   * Removes what opening created (after close): the data directory when there was none, else the
   * secret and database files it did not hold. For a command that changed nothing (an import
   * refused or dry-run), so it leaves no trace. Nothing is removed once a server has started on
   * the directory meanwhile (its pid file).
   */
  discardCreated(): void
}

/** The files opening a tool context may create in an existing data directory. */
const CREATED_FILES = ['secret', 'gatehouse.db', 'gatehouse.db-wal', 'gatehouse.db-shm', 'gatehouse.db-journal']

function creationUndo(dataDir: string): () => void {
  const existed = existsSync(dataDir)
  const absentFiles = existed ? CREATED_FILES.filter((name) => !existsSync(join(dataDir, name))) : []
  return () => {
    if (existsSync(join(dataDir, 'gatehouse.pid'))) return
    if (!existed) rmSync(dataDir, { recursive: true, force: true })
    else for (const name of absentFiles) rmSync(join(dataDir, name), { force: true })
  }
}

export async function openToolContext(
  dataDirFlag: string | undefined,
  options: { env?: NodeJS.ProcessEnv; log: (line: string) => void; configFile?: string },
): Promise<ToolContext | { error: string }> {
  const env = options.env ?? process.env
  const dataDir = resolve(dataDirFlag ?? (env.GATEHOUSE_DATA_DIR || './data'))
  const discardCreated = creationUndo(dataDir)
  // A first command on a new install (say `user create` before the first start) creates it, as serve does.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  let store: ConfigStore
  let engine: ReturnType<typeof resolveEngine>
  try {
    const overrides = options.configFile ? readJsonFile(resolve(options.configFile), 'config file') : {}
    store = new ConfigStore(join(dataDir, 'config.json'), overrides)
    engine = resolveEngine(takeEngineFlags([], env).flags, store.get().database)
  } catch (e) {
    if (e instanceof ConfigError) {
      discardCreated()
      return { error: e.message }
    }
    throw e
  }
  const rest = {
    config: () => store.get(),
    clock: systemClock,
    secret: resolveSecret(env.GATEHOUSE_SECRET || undefined, dataDir),
    baseURL: `http://127.0.0.1${store.get().basePath}`,
    mailer: createLogMailer(options.log),
  }
  if (engine.kind === 'sqlite') {
    const database = openDatabase(join(dataDir, 'gatehouse.db'))
    return { ctx: createAuthContext(database, rest), close: async () => database.close(), discardCreated }
  }
  // Loaded on demand: node-postgres stays out of a SQLite tool's start-up.
  const { openPostgresEngine } = await import('../db/pg/index.js')
  try {
    const pg = await openPostgresEngine(engine)
    return { ctx: createAuthContext({ storage: pg.database.storage, sqlite: null }, rest), close: () => pg.close(), discardCreated }
  } catch (e) {
    discardCreated()
    return { error: `database ${maskUrlPassword(engine.url)}: ${(e as Error).message}` }
  }
}
