import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { SqliteDatabase } from '../../db/sqlite-driver.js'

/**
 * All of the backup feature's SQL. SQLite-specific by nature: a backup here is a copy of the
 * database file (VACUUM INTO, integrity_check, the file's own tables and migration journal), so
 * these functions take the driver. A PostgreSQL storage implements its own backup later (pg_dump
 * or COPY) behind the same feature; nothing outside this module and the archive code touches it.
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

/**
 * An online, consistent copy of a live database; the source keeps serving reads and writes.
 * - 'backup' (the server's own connection): SQLite's backup API, in steps between which the event
 *   loop runs, with progress; writes made meanwhile through the same connection are carried into
 *   the copy, so it is the database as of the end of the backup.
 * - 'vacuum' (another process, the CLI): VACUUM INTO, one read transaction, so the copy is the
 *   database as of its start. The backup API would restart at every write the server makes and
 *   might never finish under steady load.
 */
export async function snapshot(
  source: Database.Database,
  destination: string,
  method: 'backup' | 'vacuum',
  progress?: (fraction: number) => void,
): Promise<void> {
  if (method === 'vacuum') {
    source.prepare('VACUUM INTO ?').run(destination)
    progress?.(1)
  } else {
    await source.backup(destination, {
      progress({ totalPages, remainingPages }) {
        progress?.(totalPages === 0 ? 1 : (totalPages - remainingPages) / totalPages)
        return 256
      },
    })
  }
  // One self-contained file: rollback journal instead of WAL, nothing beside it.
  const copy = new SqliteDatabase(destination)
  try {
    copy.pragma('journal_mode = DELETE')
  } finally {
    copy.close()
  }
}

/** Opens a database file that must exist (read-write: WAL readers need the -shm file). */
export const openExisting = (file: string): Database.Database => {
  const sqlite = new SqliteDatabase(file, { fileMustExist: true })
  sqlite.pragma('busy_timeout = 5000')
  return sqlite
}
