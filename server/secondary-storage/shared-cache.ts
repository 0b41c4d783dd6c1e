/**
 * Caches shared by every instance through the secondary storage (Redis/Valkey), under the rule of
 * the in-memory caches (server/core/session-cache.ts): an entry counts only while nothing the
 * caches watch has changed since it was read, whoever wrote (an instance, the CLI, SQL by hand).
 * With it, a session one instance has looked up is answered by the others from Redis instead of
 * another join on PostgreSQL.
 *
 * The rule across processes rests on one shared value, the epoch:
 * - every instance replaces the epoch with a new random value each time its LISTEN connection
 *   receives a change notification (`bump`, wired to the PostgreSQL change signal's `onChange`,
 *   which also fires after a lost connection came back);
 * - a reader first makes its own change signal current (the `sync()` barrier: every notification
 *   committed before the request has been received, so its bump has been queued), waits for its
 *   queued bumps to reach Redis (`current`), then reads the epoch and the entry;
 * - an entry is stored with the epoch read before the database read that produced it, and is a hit
 *   only when that tag equals the epoch the reader just read.
 * A write W committed before a request reaches instance R: R's bump for W lands after W's commit, so
 * any entry read from the database before W's commit was tagged with an epoch that was current
 * before R's bump, never the one R reads. Random values (not a counter) mean an epoch lost with a
 * Redis restart or eviction can never come back and validate an old entry. When Redis cannot be
 * trusted (a bump failed and still fails, Redis is down), the shared cache is skipped and the
 * database answers: it only ever saves a query.
 *
 * Only on PostgreSQL: SQLite is one file on one machine, and its change signal (data_version,
 * total_changes) has no notification to bump the epoch on.
 */
import { randomUUID } from 'node:crypto'
import type { SecondaryStorage } from './redis.js'

const EPOCH_KEY = 'cache:epoch'

export class SharedChangeEpoch {
  /** The bumps sent or waiting, in order. */
  private chain: Promise<void> = Promise.resolve()
  /** A bump is queued and not sent yet: a further change joins it (it will be sent after that change). */
  private queued = false
  /** The last bump failed: no entry may be trusted until one succeeds. */
  private failed = false

  constructor(private readonly storage: SecondaryStorage) {}

  /** A watched table changed (a notification this instance received): replace the epoch. */
  bump(): void {
    if (this.queued) return
    this.queued = true
    this.chain = this.chain.then(async () => {
      this.queued = false
      await this.replace()
    })
  }

  private async replace(): Promise<boolean> {
    try {
      await this.storage.set(EPOCH_KEY, randomUUID())
      this.failed = false
      return true
    } catch {
      this.failed = true
      return false
    }
  }

  /**
   * The epoch now, once every bump queued so far has reached Redis; null when Redis cannot be
   * trusted (a bump that failed fails again, or the read fails).
   */
  async current(): Promise<string | null> {
    await this.chain
    if (this.failed && !(await this.replace())) return null
    try {
      const epoch = await this.storage.get(EPOCH_KEY)
      if (epoch !== null) return epoch
      // Never set, or lost (a Redis restart, an eviction): start a new one. A value set meanwhile
      // by another instance is as good; the second read answers whichever was set last.
      await this.storage.set(EPOCH_KEY, randomUUID())
      return await this.storage.get(EPOCH_KEY)
    } catch {
      return null
    }
  }
}

/**
 * The key that marks a Date in the JSON below. It holds U+0000, which no value read from the
 * database can hold (PostgreSQL text refuses it, and storableParam replaces it on the way in), so a
 * user's own JSON field can never be taken for a date.
 */
const DATE_MARK = '\u0000date'

/** JSON that keeps Date values (the rows' timestamps) as dates. */
function serialize(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    const raw = this[key]
    return raw instanceof Date ? { [DATE_MARK]: raw.getTime() } : v
  })
}

function deserialize(text: string): unknown {
  return JSON.parse(text, (_key, v) => (v && typeof v === 'object' && typeof v[DATE_MARK] === 'number' ? new Date(v[DATE_MARK]) : v))
}

interface Entry {
  /** The epoch read before the database read that produced `v`. */
  e: string
  v: unknown
}

/** One namespace of the shared cache (keys `cache:<namespace>:<key>`). */
export class SharedCache<V> {
  constructor(
    private readonly storage: SecondaryStorage,
    private readonly epoch: SharedChangeEpoch,
    private readonly namespace: string,
  ) {}

  private keyOf(key: string): string {
    return `cache:${this.namespace}:${key}`
  }

  /**
   * Call after the change signal's `sync()`. Answers the entry when it is current, and the epoch
   * to tag a value read from the database now (null: do not use the shared cache this time).
   */
  async lookup(key: string): Promise<{ hit: V | undefined; epoch: string | null }> {
    const [epoch, raw] = await Promise.all([this.epoch.current(), this.storage.get(this.keyOf(key)).catch(() => null)])
    if (epoch === null || raw === null) return { hit: undefined, epoch }
    try {
      const entry = deserialize(raw) as Entry
      return { hit: entry.e === epoch ? (entry.v as V) : undefined, epoch }
    } catch {
      return { hit: undefined, epoch }
    }
  }

  /** Stores a value read from the database after `lookup` answered `epoch`; failures only lose the entry. */
  store(key: string, value: V, epoch: string, ttlSeconds: number): void {
    if (ttlSeconds < 1) return
    const entry: Entry = { e: epoch, v: value }
    this.storage.set(this.keyOf(key), serialize(entry), Math.floor(ttlSeconds)).catch(() => {})
  }
}

/** The shared caches of one server: one epoch, a namespace per cache. */
export class SharedCaches {
  readonly epoch: SharedChangeEpoch
  private readonly namespaces = new Map<string, SharedCache<unknown>>()

  constructor(private readonly storage: SecondaryStorage) {
    this.epoch = new SharedChangeEpoch(storage)
  }

  namespace<V>(name: string): SharedCache<V> {
    let cache = this.namespaces.get(name)
    if (!cache) {
      cache = new SharedCache<unknown>(this.storage, this.epoch, name)
      this.namespaces.set(name, cache)
    }
    return cache as SharedCache<V>
  }
}
