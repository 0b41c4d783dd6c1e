import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import type pg from 'pg'
import { backupErrors } from './errors.js'
import { SqliteDatabase } from '../../db/sqlite-driver.js'

/**
 * All of the backup feature's SQL. An archive holds a SQLite file whatever the engine: on SQLite a
 * copy of the database file (VACUUM INTO), on PostgreSQL the logical export of every table into a
 * new SQLite file (server/db/pg/copy.ts, the copy `gatehouse migrate` makes the other way); the
 * checks (integrity_check, the file's own tables and migration journal) read that file, so these
 * functions take the driver.
 */

/** Rows per table (SQLite's own tables left out), sorted by name. */
export function rowCounts(sqlite: Database.Database): Record<string, number> {
  const tables = sqlite
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .pluck()
    .all() as string[]
  const counts: Record<string, number> = {}
  for (const table of tables) {
    counts[table] = sqlite
      .prepare(`SELECT count(*) FROM "${table.replaceAll('"', '""')}"`)
      .pluck()
      .get() as number
  }
  return counts
}

/** How many migrations the database has applied (drizzle's journal table); 0 for an empty file. */
export function appliedMigrations(sqlite: Database.Database): number {
  const exists = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  if (!exists) return 0
  return sqlite.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number
}

/** The migrations this build ships (its schema version is their count). */
export function knownMigrations(folder: string): string[] {
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ tag: string }> }
  return journal.entries.map((entry) => entry.tag)
}

/** PRAGMA integrity_check: 'ok' or the first problems it names. */
export function integrityCheck(sqlite: Database.Database): string {
  const rows = sqlite.prepare('PRAGMA integrity_check').pluck().all() as string[]
  return rows.join('; ')
}

/** Where a backup reads the data: the SQLite file, or the PostgreSQL database (its URL, or a running server's pool). */
export type BackupDatabase =
  | { sqliteFile: string }
  /** earlierSchema: the pre-upgrade backup of a database this build is about to migrate (server/db/pg/copy.ts). */
  | { postgres: string | pg.Pool; earlierSchema?: boolean }

/**
 * An online, consistent copy of the live database into `destination`, a new SQLite file; the
 * source keeps serving reads and writes meanwhile.
 * - SQLite: VACUUM INTO on a connection of its own, one read transaction (WAL: it waits for no
 *   writer and no writer waits for it), so the copy is the database as of its start. Not the
 *   backup API on the server's connection: its steps fail while that connection is inside a write
 *   transaction (SQLITE_LOCKED, retried at the next turn of the event loop), and under steady
 *   sign-ups one is nearly always open, so a backup took minutes (issue 50 §9). Nor the backup API
 *   on a connection of its own: it restarts at every write the server makes.
 * - PostgreSQL: the logical export (server/db/pg/copy.ts), one REPEATABLE READ transaction.
 */
export async function snapshot(source: BackupDatabase, destination: string, migrationsFolder: string): Promise<void> {
  if ('postgres' in source) {
    // Loaded on demand: pg stays out of a SQLite server.
    const { CopyRefused, exportPostgresToSqlite } = await import('../../db/pg/copy.js')
    try {
      await exportPostgresToSqlite(source.postgres, destination, {
        sqliteMigrations: migrationsFolder,
        earlierSchema: source.earlierSchema,
      })
    } catch (error) {
      if (error instanceof CopyRefused) throw backupErrors.postgresExport(error.message)
      throw error
    }
  } else {
    const reader = openExisting(source.sqliteFile)
    try {
      reader.prepare('VACUUM INTO ?').run(destination)
    } finally {
      reader.close()
    }
  }
  // One self-contained file: rollback journal instead of WAL, nothing beside it.
  const copy = new SqliteDatabase(destination)
  try {
    copy.pragma('journal_mode = DELETE')
  } finally {
    copy.close()
  }
}

/** The connection pool of a server on PostgreSQL (drizzle's node-postgres handle holds it). */
export const poolOf = (db: unknown): pg.Pool => (db as { $client: pg.Pool }).$client

/** Opens a database file that must exist (read-write: WAL readers need the -shm file). */
export const openExisting = (file: string): Database.Database => {
  const sqlite = new SqliteDatabase(file, { fileMustExist: true })
  sqlite.pragma('busy_timeout = 5000')
  return sqlite
}
