import type Database from 'better-sqlite3'

/**
 * A read cache for the session lookup behind every authenticated request.
 *
 * An entry is trusted only while the database has not changed at all since it was read:
 * `total_changes()` counts every row this connection inserted, updated or deleted, and
 * `PRAGMA data_version` changes when another connection (the CLI on the same data directory, SQL
 * run on the file) commits. Both are read on every lookup, so a demotion, ban, revocation or
 * deletion made by any process is seen by the very next request. Any write anywhere empties the
 * cache. That is conservative on purpose: a revoked session, a ban or an expiry change can never
 * be served stale, while read-heavy traffic (apps polling get-session) skips the join.
 */
export class ChangeGuardedCache<V> {
  private readonly entries = new Map<string, V>()
  private readonly state: Database.Statement<[], [number, number]>
  private changesSeen = -1
  private versionSeen = -1

  constructor(
    sqlite: Database.Database,
    private readonly maxEntries = 10_000,
  ) {
    // One statement for both counters: pragma_data_version is the table-valued form of the pragma.
    this.state = sqlite.prepare<[], [number, number]>('select total_changes(), data_version from pragma_data_version').raw()
  }

  /**
   * Empties the cache when the database changed since the last look. `total_changes()` touches no
   * table; `data_version` reads a counter of the connection's pager (no table either), so both
   * are cheap enough for every request.
   */
  private check(): void {
    const [changes, version] = this.state.get() as [number, number]
    if (changes !== this.changesSeen || version !== this.versionSeen) {
      this.entries.clear()
      this.changesSeen = changes
      this.versionSeen = version
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
