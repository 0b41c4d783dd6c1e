import { join } from 'node:path'
import type { ConfigStore } from '../config/store.js'
import { openDatabase } from '../db/index.js'
import { createLogMailer } from '../mail/types.js'
import { resolveSecret } from '../secret.js'
import { type AuthContext, systemClock } from './context.js'

/**
 * A domain context for a command-line tool (`gatehouse user`, `jwt`, `oidc client`) on a data
 * directory, with or without a running server: its database, its stored config and its secret.
 * No features' hooks, no outbox: mail is only written to `log` (the CLI's stderr).
 */
export function openToolContext(
  dataDir: string,
  store: ConfigStore,
  options: { env?: NodeJS.ProcessEnv; log: (line: string) => void },
): { ctx: AuthContext; close(): void } {
  const database = openDatabase(join(dataDir, 'gatehouse.db'))
  const env = options.env ?? process.env
  const ctx: AuthContext = {
    get db() {
      return this.storage.db
    },
    storage: database.storage,
    sqlite: database.sqlite,
    config: () => store.get(),
    clock: systemClock,
    secret: resolveSecret(env.GATEHOUSE_SECRET || undefined, dataDir),
    baseURL: `http://127.0.0.1${store.get().basePath}`,
    mailer: createLogMailer(options.log),
  }
  return { ctx, close: () => database.close() }
}
