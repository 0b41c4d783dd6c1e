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
  /** How many times the cache was emptied for a change: a read begun in an earlier one may predate it. */
  private generation = 0
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

  /** Empties the cache when the database changed since the last look (whoever looked). */
  private check(): void {
    if (this.signal.changed()) {
      this.entries.clear()
      this.generation++
    }
  }

  get(key: string): V | undefined {
    this.check()
    return this.entries.get(key)
  }

  /**
   * The generation now (the signal asked first): take it right after a `get` missed, before
   * reading what `set` will store.
   */
  mark(): number {
    this.check()
    return this.generation
  }

  /**
   * Stores a value read since `mark()` answered `mark`. If the database changed since then —
   * noticed here, or by any other lookup meanwhile (another request may have asked the signal while
   * this value was being read, so the signal alone no longer says so) — the value may predate the
   * change and is not stored: the next lookup reads again.
   */
  set(key: string, value: V, mark: number): void {
    this.check()
    if (this.generation !== mark) return
    // A flood of distinct tokens cannot grow memory: past the bound, start over.
    if (this.entries.size >= this.maxEntries) this.entries.clear()
    this.entries.set(key, value)
  }
}
