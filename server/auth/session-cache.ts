import type Database from 'better-sqlite3'

/**
 * A read cache for the session lookup behind every authenticated request.
 *
 * An entry is trusted only while the database has not changed at all since it was read:
 * `total_changes()` counts every row this connection inserted, updated or deleted, and
 * `PRAGMA data_version` changes when another connection (the CLI on the same data directory)
 * commits (seen within 250 ms). Any write anywhere empties the cache. That is conservative on purpose: a revoked
 * session, a ban or an expiry change can never be served stale, while read-heavy traffic (apps
 * polling get-session) skips the join.
 */
export class ChangeGuardedCache<V> {
  private readonly entries = new Map<string, V>()
  private readonly changes: Database.Statement
  private readonly version: Database.Statement
  private stamp = ''
  private version_ = 0
  private versionCheckedAt = Number.NEGATIVE_INFINITY

  constructor(
    sqlite: Database.Database,
    private readonly maxEntries = 10_000,
    /** How often another process's commits are looked for. */
    private readonly crossProcessCheckMs = 250,
  ) {
    this.changes = sqlite.prepare('select total_changes()').pluck()
    this.version = sqlite.prepare('pragma data_version').pluck()
  }

  /**
   * Empties the cache when the database changed since the last look. `total_changes()` touches no
   * table and is nearly free, so this connection's writes are seen at once; `data_version` opens
   * a read transaction, so another process's commits (the CLI) are looked for at most every
   * 250 ms.
   */
  private check(): void {
    const now = performance.now()
    if (now - this.versionCheckedAt >= this.crossProcessCheckMs) {
      this.versionCheckedAt = now
      this.version_ = Number(this.version.get())
    }
    const stamp = `${this.changes.get()}:${this.version_}`
    if (stamp !== this.stamp) {
      this.entries.clear()
      this.stamp = stamp
    }
  }

  get(key: string): V | undefined {
    this.check()
    return this.entries.get(key)
  }

  set(key: string, value: V): void {
    this.check()
    // A flood of distinct tokens cannot grow memory: past the bound, start over.
    if (this.entries.size >= this.maxEntries) this.entries.clear()
    this.entries.set(key, value)
  }
}
