import type { Clock } from './context.js'

/**
 * The one outbox engine (issue 51 §6): mail (server/mail/outbox.ts) and OIDC back-channel logout
 * (server/features/oidc-provider/backchannel.ts) are queue definitions over it. A definition brings
 * its store (the SQL over its own table, in its store module), its deliver function, its lease,
 * time limit, backoff and max age; the rules below are written here once:
 *
 * - **Claim and lease.** A lane claims due rows of one destination in one statement that counts the
 *   attempt and leases them to this instance for `leaseMs` (the store re-checks each row it changes,
 *   so of several instances on one database one claims a row). A row whose lease lapsed (its
 *   instance stopped mid-delivery) is due again, for any instance. A delivery's time limit is shorter
 *   than the lease, so a live instance always records its outcome first.
 * - **Isolation.** Each destination is served by its own lane (at most one per instance), lanes run
 *   side by side, and every delivery is cut off at `timeoutMs` (whether or not the deliver function
 *   honours its signal): a destination that never answers costs its own lane one time limit per
 *   attempt and delays no other destination.
 * - **Backoff.** With a backoff, the first failure in a claimed batch marks the destination failing;
 *   the batch's failed rows and every other due row of the destination wait for one retry time,
 *   `retryDelay(how long it has been failing)`, unattempted, and the lane ends. Without one (mail),
 *   a failure is the row's own and final (an operator retries it), and the lane goes on.
 * - **Max age.** A run first gives up (`expire`) rows queued longer than `maxAgeMs()` and reports
 *   them per destination.
 * - **Runs.** A run serves every due destination whose lane is not running here already; one that
 *   is running is told to look again before it ends, so a row queued meanwhile is not left behind.
 *   Runs may overlap. `wake()` schedules one soon (never in the caller's turn), `poll(ms)` one every
 *   `ms`; `stop(graceMs)` claims nothing more, lets deliveries in flight finish for `graceMs`, then
 *   cuts them off without recording them (their lease hands them to the next start).
 *
 * The clock is injected (tests move it by hand), and so is the time limit's timer (`timer`).
 */

export interface OutboxBackoff {
  /** The first retry's delay. */
  firstMs: number
  /** The longest delay. */
  maxMs: number
}

/** The retry delay of a destination failing for `failingMs`: `firstMs`, then as long as it has been failing, at most `maxMs`. */
export const retryDelay = (failingMs: number, backoff: OutboxBackoff): number =>
  Math.min(Math.max(backoff.firstMs, failingMs), backoff.maxMs)

/** The SQL of one queue over its own table (its store module). */
export interface OutboxStore<Row> {
  /** Destinations with rows due now and not leased (at most `limit`). */
  dueDestinations(now: Date, limit: number): Promise<string[]>
  /**
   * Claims up to `limit` due rows of `destination` for `leaseMs` from `now`, counting the attempt,
   * in one statement that re-checks each row it changes (a row is claimed by one instance).
   */
  claim(destination: string, claim: { now: Date; leaseMs: number; limit: number }): Promise<Row[]>
  /** Delivered: done. */
  sent(row: Row, at: Date): Promise<void>
  /** Not delivered: due again at `retryAt`, or (null) failed for good. Ends the lease. */
  failed(row: Row, failure: { at: Date; error: string; retryAt: Date | null }): Promise<void>
  /** The destination is gone (its target resolved to null): the row is dropped. */
  drop(row: Row): Promise<void>
  /** With a backoff: the other due rows of a failing destination wait for `retryAt`, unattempted. */
  postpone?(destination: string, failure: { now: Date; retryAt: Date; error: string }): Promise<void>
  /** With a backoff: marks the destination failing (since its first failure, kept); since when it fails. */
  failing?(destination: string, failure: { at: Date; error: string }): Promise<Date | null>
  /** With a max age: gives up the rows queued before `before` and never delivered; their destinations, one per row. */
  expire?(before: Date): Promise<string[]>
}

export interface OutboxQueue<Row, Target> {
  store: OutboxStore<Row>
  /** How long a claim is this instance's. */
  leaseMs: number
  /** One delivery's time limit (shorter than the lease). */
  timeoutMs: number
  /** Rows a lane claims (and delivers side by side) at a time. */
  batch: number
  /** Destinations one run serves at once (64 by default). */
  maxLanes?: number
  /** Null: a failure is final (the row's own), no retry by the engine. */
  backoff: OutboxBackoff | null
  /** Rows queued longer than this (ms) are given up; null or absent: kept. */
  maxAgeMs?(): number | null
  /** Nothing is delivered while this says so (mail without an SMTP server): rows wait, due. */
  paused?(): boolean
  /** What a destination's rows are delivered to (read after each claim); null: the destination is gone and its rows are dropped. */
  target(destination: string): Promise<Target | null>
  /** Delivers one row; rejects when it was not delivered. `signal` fires at the time limit or when the engine stops. */
  deliver(row: Row, target: Target, signal: AbortSignal): Promise<void>
  /** The time limit's timer (replaceable so tests fire it themselves). */
  timer?(ms: number): AbortSignal
  /** After each row's outcome is recorded: null when it was delivered, else the error. */
  settled?(row: Row, target: Target, error: string | null): void | Promise<void>
  /** A destination failed (with a backoff): its rows wait until `retryAt`. */
  failing?(destination: string, failure: { error: string; retryAt: Date }): void
  /** A claimed batch went through without a failure (clear a failing mark). */
  recovered?(destination: string, target: Target): Promise<void>
  /** Rows given up past the max age, per destination. */
  expired?(destination: string, count: number, maxAgeMs: number): void
  /** A run failed (the database busy or closing). */
  runFailed?(error: unknown): void
}

/** One line for an error, its cause's message added (fetch's "fetch failed: connect ECONNREFUSED …"), at most 300 characters. */
export const errorText = (error: unknown): string =>
  (error instanceof Error
    ? error.cause instanceof Error
      ? `${error.message}: ${error.cause.message}`
      : error.message
    : String(error)
  ).slice(0, 300)

type Outcome = { error: null } | { error: string } | { stopped: true }

/** Rejects when `signal` fires, whether or not `work` honours it. */
function bounded(signal: AbortSignal, work: () => Promise<void>): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<void>((resolve, reject) => {
    const cut = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('delivery cut off'))
    signal.addEventListener('abort', cut, { once: true })
    Promise.resolve()
      .then(work)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', cut))
  })
}

export class Outbox<Row, Target> {
  /** Destinations whose lane runs in this instance now, each with "look again before ending". */
  private readonly lanes = new Map<string, { again: boolean }>()
  private readonly running = new Set<Promise<unknown>>()
  private readonly stopSignal = new AbortController()
  private stopped = false
  private scheduled: { cancel(): void } | null = null
  private poller: NodeJS.Timeout | null = null
  private idleWaiters: Array<() => void> = []

  constructor(
    private readonly queue: OutboxQueue<Row, Target>,
    private readonly options: { clock: Clock; wakeDelayMs?: number },
  ) {
    if (queue.timeoutMs >= queue.leaseMs) throw new Error('an outbox delivery time limit must be shorter than its lease')
  }

  /** One run: gives up rows past the max age, then serves every due destination not served here already. How many rows were delivered. */
  run(): Promise<number> {
    if (this.stopped) return Promise.resolve(0)
    const run = this.runOnce()
    this.track(run)
    return run
  }

  /** A run soon, never in the caller's turn (coalesced with one already scheduled). */
  wake(): void {
    if (this.stopped || this.scheduled) return
    const go = (): void => {
      this.scheduled = null
      this.run().catch((error: unknown) => this.queue.runFailed?.(error))
    }
    const delay = this.options.wakeDelayMs ?? 0
    if (delay > 0) {
      const timer = setTimeout(go, delay)
      timer.unref()
      this.scheduled = { cancel: () => clearTimeout(timer) }
    } else {
      const immediate = setImmediate(go)
      this.scheduled = { cancel: () => clearImmediate(immediate) }
    }
  }

  /** A run every `ms` (retries, rows queued by another instance or before a restart). */
  poll(ms: number): void {
    if (this.stopped || this.poller) return
    this.poller = setInterval(() => void this.run().catch((error: unknown) => this.queue.runFailed?.(error)), ms)
    this.poller.unref()
  }

  /** Resolves when no run is scheduled or under way (every lane has ended). */
  whenIdle(): Promise<void> {
    if (this.idle()) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Stops: no run starts and no lane claims again; deliveries in flight have `graceMs` to finish
   * (recorded as usual), then are cut off unrecorded (their rows stay leased, then any instance
   * takes them again). Resolves when every run has ended.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopped = true
    this.scheduled?.cancel()
    this.scheduled = null
    if (this.poller) clearInterval(this.poller)
    this.poller = null
    if (graceMs > 0 && !this.idle()) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([this.whenIdle(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))])
      clearTimeout(timer)
    }
    this.stopSignal.abort(new Error('the server is stopping'))
    await Promise.allSettled([...this.running])
    this.settle()
  }

  private idle(): boolean {
    return this.running.size === 0 && this.scheduled === null
  }

  private settle(): void {
    if (this.idle()) for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  private track(run: Promise<unknown>): void {
    this.running.add(run)
    const done = (): void => {
      this.running.delete(run)
      this.settle()
    }
    run.then(done, done)
  }

  private async runOnce(): Promise<number> {
    const { queue, options } = this
    if (queue.paused?.()) return 0
    const now = options.clock.now()
    const maxAge = queue.maxAgeMs?.() ?? null
    if (maxAge !== null && queue.store.expire) {
      const given = await queue.store.expire(new Date(now - maxAge))
      const counts = new Map<string, number>()
      for (const destination of given) counts.set(destination, (counts.get(destination) ?? 0) + 1)
      for (const [destination, count] of counts) queue.expired?.(destination, count, maxAge)
    }
    if (this.stopped) return 0
    const due = await queue.store.dueDestinations(new Date(now), queue.maxLanes ?? 64)
    const lanes: Promise<number>[] = []
    for (const destination of due) {
      const busy = this.lanes.get(destination)
      if (busy) busy.again = true
      else if (!this.stopped) lanes.push(this.lane(destination))
    }
    return (await Promise.all(lanes)).reduce((a, b) => a + b, 0)
  }

  /** One destination's deliveries, apart from every other destination's. How many were delivered. */
  private async lane(destination: string): Promise<number> {
    const { queue, options } = this
    const { store } = queue
    const state = { again: false }
    this.lanes.set(destination, state)
    let sent = 0
    try {
      for (;;) {
        if (this.stopped || queue.paused?.()) break
        state.again = false
        const rows = await store.claim(destination, { now: new Date(options.clock.now()), leaseMs: queue.leaseMs, limit: queue.batch })
        if (rows.length === 0) {
          if (state.again) continue
          break
        }
        const target = await queue.target(destination)
        if (target === null) {
          for (const row of rows) await store.drop(row)
          continue
        }
        const outcomes = await Promise.all(rows.map((row) => this.attempt(row, target)))
        const now = options.clock.now()
        const failed = outcomes.find((o): o is { error: string } => 'error' in o && o.error !== null)?.error
        let retryAt: Date | null = null
        if (failed !== undefined && queue.backoff) {
          const since = (await store.failing?.(destination, { at: new Date(now), error: failed })) ?? new Date(now)
          retryAt = new Date(now + retryDelay(now - since.getTime(), queue.backoff))
        }
        for (const [i, row] of rows.entries()) {
          const outcome = outcomes[i] as Outcome
          if ('stopped' in outcome) continue
          if (outcome.error === null) {
            await store.sent(row, new Date(now))
            sent++
          } else await store.failed(row, { at: new Date(now), error: outcome.error, retryAt })
          await queue.settled?.(row, target, outcome.error)
        }
        if (this.stopSignal.signal.aborted) break
        if (failed !== undefined && retryAt !== null) {
          await store.postpone?.(destination, { now: new Date(now), retryAt, error: failed })
          queue.failing?.(destination, { error: failed, retryAt })
          break
        }
        if (failed === undefined) await queue.recovered?.(destination, target)
        if (rows.length < queue.batch && !state.again) break
      }
    } finally {
      this.lanes.delete(destination)
    }
    return sent
  }

  /** One delivery under its time limit and the engine's stop. */
  private async attempt(row: Row, target: Target): Promise<Outcome> {
    const { queue } = this
    const limit = (queue.timer ?? ((ms: number) => AbortSignal.timeout(ms)))(queue.timeoutMs)
    const signal = AbortSignal.any([limit, this.stopSignal.signal])
    try {
      await bounded(signal, () => queue.deliver(row, target, signal))
      return { error: null }
    } catch (error) {
      if (this.stopSignal.signal.aborted) return { stopped: true }
      return { error: errorText(error) }
    }
  }
}
