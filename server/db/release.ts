import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { packageVersion } from '../version.js'

/**
 * Rollback refused (issue 50 §7). A database remembers the newest Gatehouse release that migrated
 * it (`__gatehouse_release`, beside drizzle's journal, on both engines), and a build whose newest
 * migration is older than the database's refuses to open it, with one line naming both releases and
 * schema versions and the backup `gatehouse serve` took before the upgrade.
 */

/** The bookkeeping table: one row, the release that last opened (and migrated) the database. */
export const RELEASE_TABLE = '__gatehouse_release'

/** A database migrated by a newer Gatehouse than this one. */
export class NewerDatabaseError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'NewerDatabaseError'
  }
}

export interface JournalEntry {
  tag: string
  when: number
}

/** The migrations this build ships, from its journal (the schema version is their count). */
export function journalOf(migrationsFolder: string): JournalEntry[] {
  return (JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: JournalEntry[] }).entries
}

/** The pre-upgrade backups' names: `gatehouse-backup-<time>-pre-upgrade.tar.gz` in the data dir's backups/ folder. */
export const PRE_UPGRADE_SUFFIX = '-pre-upgrade.tar.gz'

/** The newest pre-upgrade backup in `backupsDir`, or null. */
export function newestPreUpgradeBackup(backupsDir: string): string | null {
  if (!existsSync(backupsDir)) return null
  const names = readdirSync(backupsDir)
    .filter((n) => n.endsWith(PRE_UPGRADE_SUFFIX))
    .sort()
  const newest = names[names.length - 1]
  return newest ? join(backupsDir, newest) : null
}

/** The one-line refusal: both releases, both schema versions, and the way back. */
export function newerDatabaseMessage(options: {
  location: string
  applied: number
  release: string | null
  known: number
  restore: string
}): string {
  const by = options.release ? `Gatehouse ${options.release}` : 'a newer Gatehouse'
  return `the database ${options.location} was migrated by ${by} (schema version ${options.applied}); this is Gatehouse ${packageVersion()} (schema version ${options.known}), which cannot run on it: start ${by} again, or go back with ${options.restore} (docs/UPGRADING.md)`
}

/**
 * SQLite: refuses (NewerDatabaseError) a database carrying a migration newer than this build's
 * newest; `backupsDir` names the pre-upgrade backup in the message.
 */
export function refuseNewerSqlite(sqlite: Database.Database, migrationsFolder: string, location: string, backupsDir: string | null): void {
  const journal = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  if (!journal) return
  const known = journalOf(migrationsFolder)
  const newest = Math.max(0, ...known.map((e) => e.when))
  const newer = sqlite.prepare('SELECT count(*) FROM __drizzle_migrations WHERE created_at > ?').pluck().get(newest) as number
  if (newer === 0) return
  const applied = sqlite.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number
  const hasRelease = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(RELEASE_TABLE)
  const release = hasRelease
    ? (sqlite.prepare(`SELECT version FROM ${RELEASE_TABLE} WHERE id = 1`).pluck().get() as string | undefined)
    : undefined
  const backup = backupsDir ? newestPreUpgradeBackup(backupsDir) : null
  const dataDir = backupsDir ? join(backupsDir, '..') : '<data dir>'
  throw new NewerDatabaseError(
    newerDatabaseMessage({
      location,
      applied,
      release: release ?? null,
      known: known.length,
      restore: `gatehouse restore ${backup ?? '<the backup taken before the upgrade>'} --data-dir ${dataDir}`,
    }),
  )
}

/** SQLite: records this release as the one that last migrated the database (after the migrations). */
export function recordReleaseSqlite(sqlite: Database.Database): void {
  sqlite.exec(`CREATE TABLE IF NOT EXISTS ${RELEASE_TABLE} (id integer PRIMARY KEY CHECK (id = 1), version text NOT NULL)`)
  const version = packageVersion()
  const current = sqlite.prepare(`SELECT version FROM ${RELEASE_TABLE} WHERE id = 1`).pluck().get()
  if (current === version) return
  sqlite
    .prepare(`INSERT INTO ${RELEASE_TABLE} (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version`)
    .run(version)
}

/** How many of this build's migrations the database still lacks (0 for a database with no journal yet: a fresh one). */
export function pendingMigrationsSqlite(sqlite: Database.Database, migrationsFolder: string): { applied: number; pending: number } {
  const journal = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  if (!journal) return { applied: 0, pending: 0 }
  const last = (sqlite.prepare('SELECT max(created_at) FROM __drizzle_migrations').pluck().get() as number | null) ?? 0
  const applied = sqlite.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number
  return { applied, pending: journalOf(migrationsFolder).filter((e) => e.when > last).length }
}
