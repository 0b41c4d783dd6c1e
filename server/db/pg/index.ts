/**
 * The PostgreSQL engine of a process, for the composition root (openGatehouse) and the CLI's
 * tool contexts (openToolContext), loaded on demand when the engine resolves to PostgreSQL.
 *
 * It rebinds the table exports of server/db/schema.ts to the pg-core mirror (before any query),
 * opens the pool (migrations applied under the advisory lock) and starts listening for changes.
 */
import type { Engine } from '../engine.js'
import { bindTables } from '../schema.js'
import { type ChangeSignal, listenForChanges } from './change-signal.js'
import { pgSchema } from './schema.js'
import { openPostgres, type PostgresDatabase, postgresStorage } from './storage.js'

export interface PostgresEngine {
  database: PostgresDatabase
  changes: ChangeSignal
  close(): Promise<void>
}

export async function openPostgresEngine(
  engine: Extract<Engine, { kind: 'postgres' }>,
  options: { onChange?: (table: string) => void } = {},
): Promise<PostgresEngine> {
  bindTables(pgSchema, 'postgres')
  const database = await openPostgres(engine.url, { poolSize: engine.poolSize })
  const changes = await listenForChanges(engine.url, options.onChange).catch(async (error) => {
    await database.close()
    throw error
  })
  // The caches' change signal answers from the listener (server/db/storage.ts ChangeSignal).
  database.storage = postgresStorage(database.db, { changes })
  return {
    database,
    changes,
    async close() {
      await changes.close()
      await database.close()
    },
  }
}
