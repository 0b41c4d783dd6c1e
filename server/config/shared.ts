/**
 * The configuration shared by every instance on one PostgreSQL database: the stored layer (what
 * the control panel edits; config.json on a SQLite install) lives in the one-row table
 * "gatehouseConfig" (pg migration 0005_shared_config). Flags, variables and `--config` stay per
 * process, on top of it, as on SQLite.
 *
 * - At start: an empty table is seeded with this instance's stored layer (its data directory's
 *   config.json: the install `gatehouse migrate --to` copied); otherwise the table wins and the
 *   data directory's config.json is rewritten to follow it.
 * - A panel edit on any instance is written to the table (ConfigStore.shareWith); the table's
 *   trigger notifies every instance (gatehouse_change), which reads the row and applies it live
 *   (ConfigStore.replaceStored): no restart.
 */
import { sql } from 'drizzle-orm'
import type { PgDB } from '../db/pg/storage.js'
import type { Logger } from '../log.js'
import type { ConfigStore } from './store.js'

export const SHARED_CONFIG_TABLE = 'gatehouseConfig'

type Json = Record<string, unknown>

async function readShared(db: PgDB): Promise<Json | undefined> {
  const { rows } = await db.execute<{ config: Json }>(sql`select "config" from "gatehouseConfig" where "id" = 1`)
  return rows[0]?.config
}

/** Seeds or loads the shared layer, then keeps it in step both ways. Returns the reload to call when the table changed. */
export async function shareConfig(store: ConfigStore, db: PgDB, logger: Logger): Promise<() => Promise<void>> {
  await db.execute(
    sql`insert into "gatehouseConfig" ("id", "config", "updatedAt") values (1, ${JSON.stringify(store.storedLayer())}::jsonb, now()) on conflict ("id") do nothing`,
  )
  const reload = async (): Promise<void> => {
    const mark = store.sharedMark()
    const shared = await readShared(db)
    if (!shared) return
    try {
      store.replaceStored(shared, mark)
    } catch (error) {
      // Written by a newer or older build whose schema differs: keep serving the current config.
      logger.warn(`shared configuration not applied: ${(error as Error).message}`)
    }
  }
  await reload()
  store.shareWith(async (stored) => {
    await db.execute(
      sql`insert into "gatehouseConfig" ("id", "config", "updatedAt") values (1, ${JSON.stringify(stored)}::jsonb, now()) on conflict ("id") do update set "config" = excluded."config", "updatedAt" = excluded."updatedAt"`,
    )
  })
  return reload
}
