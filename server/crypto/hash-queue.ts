import { AsyncLocalStorage } from 'node:async_hooks'
import { availableParallelism } from 'node:os'
import { idleOff } from '../idle-scope.js'

/**
 * Password hashing is the one expensive thing an auth server does (scrypt: ~130 ms and 32 MiB a
 * hash). Hashes run at most `concurrency` at a time (`hashConcurrency`: the machine's cores, at
 * most libuv's 4 threads, which also serve file I/O), and at most `maxPending` more may wait:
 * beyond that a request is refused at once instead of queueing for minutes, so an overload
 * degrades into fast 503s, not timeouts.
 *
 * Shared fairly between sources (issue 48 §2; docs/ARCHITECTURE.md "Password hashing"): a job
 * belongs to the source of the password check that asked for it (`hashSource`: an IPv4 address,
 * an IPv6 /64, set by core/throttle.ts around every sign-in, bind and password check), and
 *  - one source holds at most `perSource` jobs, waiting and running together: a quarter of the
 *    queue (4 running + 64 waiting: 17; on 2 cores 2 + 64, 17 too), never fewer than
 *    `concurrency`; its next one is refused at once (503 SERVER_BUSY, LDAP busy), whatever room
 *    the queue has for others;
 *  - a freed thread goes to the sources in turn (round robin), not to the oldest job: another
 *    source's job waits for at most one job of each source ahead of it, not for a flood's backlog.
 * Jobs without a source (sign-up, reset, an admin's change) are one source together, in the
 * rotation like the others and not capped (the global `maxPending` still bounds them).
 */
export class HashQueueFullError extends Error {
  constructor() {
    super('password hashing queue is full')
    this.name = 'HashQueueFullError'
  }
}

/** The source (core/rate-limit.ts rateLimitIdentity) the hashes started inside `run` are counted to. */
export const hashSource = idleOff(new AsyncLocalStorage<string>())

/** The source of the jobs that have none. */
const UNATTRIBUTED = ''

export class HashQueue {
  private running = 0
  private waitingCount = 0
  /** Jobs held per source, waiting and running. */
  private readonly held = new Map<string, number>()
  /** Waiting jobs per source; the map's order is the rotation (a source served goes to the back). */
  private readonly turns = new Map<string, Array<() => void>>()

  constructor(
    readonly concurrency: number,
    public maxPending: number,
  ) {}

  get pending(): number {
    return this.waitingCount
  }

  /** The most jobs one source may hold, waiting and running. */
  get perSource(): number {
    return Math.max(this.concurrency, Math.ceil((this.concurrency + this.maxPending) / 4))
  }

  /**
   * Whether a job of `source` would be refused now (its share held, or no room left): asked before
   * a password check writes its reservation (core/throttle.ts), so a flood past its share is
   * refused without a database write.
   */
  refuses(source: string = hashSource.getStore() ?? UNATTRIBUTED): boolean {
    if (source !== UNATTRIBUTED && (this.held.get(source) ?? 0) >= this.perSource) return true
    return this.running >= this.concurrency && this.waitingCount >= this.maxPending
  }

  async run<T>(task: () => Promise<T>, source: string = hashSource.getStore() ?? UNATTRIBUTED): Promise<T> {
    const held = this.held.get(source) ?? 0
    if (source !== UNATTRIBUTED && held >= this.perSource) throw new HashQueueFullError()
    if (this.running >= this.concurrency) {
      if (this.waitingCount >= this.maxPending) throw new HashQueueFullError()
      this.held.set(source, held + 1)
      this.waitingCount++
      await new Promise<void>((resolve) => {
        const line = this.turns.get(source)
        if (line) line.push(resolve)
        else this.turns.set(source, [resolve])
      })
    } else {
      this.running++
      this.held.set(source, held + 1)
    }
    try {
      return await task()
    } finally {
      const left = (this.held.get(source) ?? 1) - 1
      if (left > 0) this.held.set(source, left)
      else this.held.delete(source)
      const next = this.nextTurn()
      if (next) next()
      else this.running--
    }
  }

  /** The first job of the source whose turn it is; that source goes to the back of the rotation. */
  private nextTurn(): (() => void) | undefined {
    for (const [source, line] of this.turns) {
      const next = line.shift()
      this.turns.delete(source)
      if (line.length > 0) this.turns.set(source, line)
      this.waitingCount--
      return next
    }
    return undefined
  }
}

/**
 * How many hashes run at once: one per core, at most libuv's four threads. A hash is pure CPU, so
 * more at once than there are cores adds no throughput; it only makes each hash (and the sign-in
 * waiting for it) take longer and leaves the event loop one runnable thread among more (issue 48:
 * four hashes on two cores during a bind flood, HTTP p99 up to seconds; docs/BENCHMARKS.md).
 */
export const hashConcurrency = (cores: number = availableParallelism()): number => Math.max(1, Math.min(4, cores))

/** One queue per process: there is one thread pool per process. */
export const passwordHashQueue = new HashQueue(hashConcurrency(), 64)
