import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { migrate } from 'drizzle-orm/better-sqlite3/migrator'
import { recordReleaseSqlite, refuseNewerSqlite } from './release.js'
import { sqliteTables } from './schema.js'
import { SqliteDatabase } from './sqlite-driver.js'
import { closeChangeSignals, type Storage, sqliteStorage } from './storage.js'

export type { DB } from './handle.js'
import type { DB } from './handle.js'

export interface Database_ {
  db: DB
  sqlite: Database.Database
  /** The port store modules go through (transactions, the current handle). */
  storage: Storage
  /** The migrations applied at open (their count is the schema version). */
  migrationsFolder: string
  close(): void
}

/** From the package root, so it also holds when this module runs bundled (dist/server/*.mjs). */
export const migrationsFolder = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'server', 'db', 'migrations')

/**
 * Opens (creating if needed) the SQLite database, sets the pragmas every connection needs and
 * applies pending migrations. WAL with synchronous=FULL: a write acknowledged to a client is on
 * disk before the answer leaves, so it survives a killed process or a power cut.
 */
export function openDatabase(file: string, options: { migrations?: string } = {}): Database_ {
  // The tables the composition floor handed down (server/schema.ts); throws before they are.
  const tables = sqliteTables()
  try {
    return openDatabaseAt(file, tables, options)
  } catch (error) {
    // SQLite's errors name no file: the start-up fault line (core/outage.ts storageFaultLine) does.
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('SQLITE_') && (error as { path?: unknown }).path === undefined) {
      Object.assign(error as object, { path: file })
    }
    throw error
  }
}

function openDatabaseAt(file: string, tables: ReturnType<typeof sqliteTables>, options: { migrations?: string }): Database_ {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    // Password hashes and session tokens live here: owner only. SQLite gives the -wal and -shm
    // files the database file's permissions, so setting them before opening covers all three.
    closeSync(openSync(file, 'a', 0o600))
    chmodSync(file, 0o600)
  }
  const sqlite = new SqliteDatabase(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = FULL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  const db = drizzle({ client: sqlite, schema: tables })
  const folder = options.migrations ?? migrationsFolder
  try {
    // A database a newer Gatehouse migrated is refused before anything is written (issue 50 §7).
    refuseNewerSqlite(sqlite, folder, file, file === ':memory:' ? null : join(dirname(file), 'backups'))
    migrate(db, { migrationsFolder: folder })
    recordReleaseSqlite(sqlite)
  } catch (error) {
    sqlite.close()
    throw error
  }
  return {
    db,
    sqlite,
    storage: sqliteStorage(db, sqlite),
    migrationsFolder: folder,
    close() {
      if (sqlite.open) sqlite.close()
      closeChangeSignals(sqlite)
    },
  }
}
