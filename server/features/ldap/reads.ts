import type { GatehouseConfig } from '../../config/schema.js'
import type { AuthContext } from '../../core/context.js'
import { ChangeGuardedCache } from '../../core/session-cache.js'
import type { UserRow } from '../../core/sessions.js'
import type { Storage } from '../../db/storage.js'
import { indexesOf } from './directory-index.js'
import { findUser, findUserByUid } from './store.js'

/**
 * The reads of binds and of the bound person (who is asking, at each operation), cached in memory
 * under the session cache's rule (core's ChangeGuardedCache on
 * `ctx.storage.changeSignal({ ownWrites: true })`): an answer is served only while the database has
 * not changed at all since it was read, so a rename, a role, a ban, a revoked app password, a lock
 * or a deleted user committed by this process, another process on the SQLite file, or another
 * instance on PostgreSQL (LISTEN/NOTIFY, with `sync()` awaited at the start of each operation:
 * `begin`) is what the next LDAP request sees. Any write anywhere empties it: these are one row
 * each, read again in microseconds. The directory itself (everyone, their groups) is the index of
 * directory-index.ts, which follows only what the directory shows. A configuration change (base
 * DN, the group rule) starts over too. Rows handed out are shared: never mutated.
 *
 * Clock-dependent rules (a ban's expiry) are applied by the caller at each operation, never cached.
 */

/** Past this many entries the cache starts over (binds of thousands of people, remembered one by one). */
const MAX_ENTRIES = 20_000

type Value = UserRow | UserRow[] | string[] | null | object

export class DirectoryReads {
  private readonly cache: ChangeGuardedCache<Value>
  /** The configuration the entries were read under; another one starts a new generation of keys. */
  private config: GatehouseConfig | null = null
  private generation = 0

  constructor(private readonly ctx: AuthContext) {
    // A value read while the database changed may predate the change: the cache stores only what
    // was read since its mark, even when another connection's lookup was the one that noticed it.
    this.cache = new ChangeGuardedCache<Value>(ctx.storage.changeSignal({ ownWrites: true }), MAX_ENTRIES)
  }

  /**
   * Once at the start of each operation: on PostgreSQL, every commit made before it (by any
   * instance) is reflected in the change signal. (A new configuration is noticed at each lookup.)
   */
  async begin(): Promise<void> {
    // One barrier: the cache's signal and the index's are the same storage's, and a PostgreSQL
    // `sync()` makes every signal of it current (two calls at once would cost two round trips,
    // the second waiting for the first: storage's coalesced barrier).
    if (this.cache.sync) await this.cache.sync()
    else await indexesOf(this.ctx).begin()
  }

  /** The cache key of `key` under the current configuration. */
  private key(key: string): string {
    const config = this.ctx.config()
    if (config !== this.config) {
      // ChangeGuardedCache has no clear of its own: the old generation's keys are never read again
      // (they go with the next write, or when the cache is full).
      this.config = config
      this.generation++
    }
    return `${this.generation}\0${key}`
  }

  /** A cached value, or the one `read` returns (kept unless the database changed meanwhile). */
  async cached<T extends Value>(key: string, read: () => Promise<T>): Promise<T> {
    const k = this.key(key)
    const hit = this.cache.get(k)
    if (hit !== undefined) return hit as T
    const since = this.cache.mark()
    const value = await read()
    // Under the key it was looked up with: read under that configuration.
    this.cache.set(k, value, since)
    return value
  }

  /** The cache's generation, after asking the signal (a mark to pass to `rememberSince`). */
  mark(): number {
    return this.cache.mark()
  }

  /** Synchronous lookup of something `rememberSince` stored (the bind memo). */
  peek<T extends Value>(key: string): T | undefined {
    return this.cache.get(this.key(key)) as T | undefined
  }

  /** Stores a value computed from reads made after `mark`; dropped if the database changed since then. */
  rememberSince(mark: number, key: string, value: Value): void {
    this.cache.set(this.key(key), value, mark)
  }

  user(id: string): Promise<UserRow | null> {
    return this.cached(`id:${id}`, async () => (await findUser(this.ctx, id)) ?? null)
  }

  /** The user whose uid is `uid` (lower-cased). */
  byUid(uid: string): Promise<UserRow | null> {
    const value = uid.trim().toLowerCase()
    return this.cached(`uid:${value}`, async () => (await findUserByUid(this.ctx, value)) ?? null)
  }
}

const reads = new WeakMap<Storage, DirectoryReads>()

/** The directory's read cache of this server (one per storage, shared by every connection). */
export function readsOf(ctx: AuthContext): DirectoryReads {
  let found = reads.get(ctx.storage)
  if (!found) {
    found = new DirectoryReads(ctx)
    reads.set(ctx.storage, found)
  }
  return found
}
