import type { ChangeSignal } from '../db/storage.js'

/**
 * A read cache for the session lookup behind every authenticated request.
 *
 * An entry is trusted only while the database has not changed at all since it was read: the
 * storage's change signal (`ctx.storage.changeSignal({ ownWrites: true })`; on SQLite
 * `total_changes()` and `PRAGMA data_version`) is asked on every lookup, so a demotion, ban,
 * revocation or deletion made by any process is seen by the very next request. Any write anywhere
 * empties the cache. That is conservative on purpose: a revoked session, a ban or an expiry change
 * can never be served stale, while read-heavy traffic (apps polling get-session) skips the join.
 * Lookups are synchronous: a hit awaits nothing.
 */
export class ChangeGuardedCache<V> {
  private readonly entries = new Map<string, V>()
  /**
   * PostgreSQL: await before `get` so that no commit of another instance made before this request
   * is missed (one shared round trip on the listening connection). Undefined on SQLite.
   */
  readonly sync: (() => Promise<void>) | undefined

  constructor(
    private readonly signal: ChangeSignal,
    private readonly maxEntries = 10_000,
  ) {
    this.sync = signal.sync
  }

  /** Empties the cache when the database changed since the last look. */
  private check(): void {
    if (this.signal.changed()) this.entries.clear()
  }

  get(key: string): V | undefined {
    this.check()
    return this.entries.get(key)
  }

  /**
   * Stores a value read after a `get` missed. If the database changed since that `get` (another
   * request or process committed while the value was being read), the value may predate the change
   * and is not stored: the next lookup reads again.
   */
  set(key: string, value: V): void {
    if (this.signal.changed()) {
      this.entries.clear()
      return
    }
    // A flood of distinct tokens cannot grow memory: past the bound, start over.
    if (this.entries.size >= this.maxEntries) this.entries.clear()
    this.entries.set(key, value)
  }
}
