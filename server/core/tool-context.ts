import { join, resolve } from 'node:path'
import { ConfigError, ConfigStore } from '../config/store.js'
import { openDatabase } from '../db/index.js'
import { createLogMailer } from '../mail/types.js'
import { resolveSecret } from '../secret.js'
import { type AuthContext, createAuthContext, systemClock } from './context.js'

/**
 * A domain context for a command-line tool (`gatehouse user`, `jwt`, `oidc client`) on a data
 * directory (`--data-dir`, else GATEHOUSE_DATA_DIR, else ./data), with or without a running
 * server: its database, its stored config and its secret. No features' hooks, no outbox: mail is
 * only written to `log` (the CLI's stderr). An unreadable config.json is answered as `{ error }`
 * for the command to print (exit code 2).
 */
export function openToolContext(
  dataDirFlag: string | undefined,
  options: { env?: NodeJS.ProcessEnv; log: (line: string) => void },
): { ctx: AuthContext; close(): void } | { error: string } {
  const env = options.env ?? process.env
  const dataDir = resolve(dataDirFlag ?? (env.GATEHOUSE_DATA_DIR || './data'))
  let store: ConfigStore
  try {
    store = new ConfigStore(join(dataDir, 'config.json'))
  } catch (e) {
    if (e instanceof ConfigError) return { error: e.message }
    throw e
  }
  const database = openDatabase(join(dataDir, 'gatehouse.db'))
  const ctx = createAuthContext(database, {
    config: () => store.get(),
    clock: systemClock,
    secret: resolveSecret(env.GATEHOUSE_SECRET || undefined, dataDir),
    baseURL: `http://127.0.0.1${store.get().basePath}`,
    mailer: createLogMailer(options.log),
  })
  return { ctx, close: () => database.close() }
}
