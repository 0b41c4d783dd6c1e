import { APIError } from './errors.js'
import { classifyOutage, NOT_WRITABLE, type OutageCode } from '../db/outage-codes.js'

export { classifyOutage, type OutageCode } from '../db/outage-codes.js'

/**
 * Known outages of the storage (issue 31 §6): PostgreSQL unreachable, SQLite's disk full. A
 * request that meets one is not an internal error: it answers 503 with `Retry-After` and a stable
 * code; the cause is logged once when the outage starts and once when it ends (a probe checks every
 * second while it lasts), not with a stack per request; `/ready` and the panel's overview name it.
 * Which errors are outages is db/outage-codes.ts's (the storage classes ask it too).
 */
export const OUTAGE_MESSAGES: Record<OutageCode, string> = {
  DATABASE_UNAVAILABLE: 'The database is unavailable. Please try again later.',
  STORAGE_FULL: 'The storage is full. Please try again later.',
  DATABASE_NOT_WRITABLE: 'The database cannot be written. Please try again later.',
}

/** Seconds a client is told to wait (Retry-After). */
export const OUTAGE_RETRY_AFTER_SECONDS = 5
const PROBE_EVERY_MS = 1_000

export interface Outage {
  code: OutageCode
  message: string
  /** What the driver said (e.g. "connect ECONNREFUSED 127.0.0.1:5432", "database or disk is full"). */
  cause: string
  /** Epoch ms (wall clock) of the first failure. */
  since: number
}

const describe = (error: unknown): string => {
  let current: unknown = error
  // The innermost driver message says the most (drizzle's wrapper repeats the query).
  while (current instanceof Error && current.cause instanceof Error) current = current.cause
  if (current instanceof AggregateError && current.errors[0] instanceof Error) current = current.errors[0]
  return current instanceof Error ? current.message || String((current as { code?: unknown }).code ?? current.name) : String(current)
}

export interface OutageLogger {
  warn(message: string): void
  error(message: string, error?: unknown): void
  info(message: string): void
}

export class OutageMonitor {
  private outage: Outage | null = null
  private timer: NodeJS.Timeout | undefined
  private probing = false
  private stopped = false

  constructor(
    /** Resolves true once the storage takes a write again. */
    private readonly probe: () => Promise<boolean>,
    private readonly logger: OutageLogger,
  ) {}

  current(): Outage | null {
    return this.outage
  }

  /** Notes an error: a known outage starts (logged once) or goes on. Returns its code, or null. */
  note(error: unknown): OutageCode | null {
    const code = classifyOutage(error)
    if (!code || this.stopped) return code
    if (!this.outage) {
      this.outage = { code, message: OUTAGE_MESSAGES[code], cause: describe(error), since: Date.now() }
      this.logger.error(`storage outage (${code}): ${this.outage.cause}; answering 503 until it is over`)
      this.schedule()
    }
    return code
  }

  /** The answer for a request that met a known outage, or null for any other error. */
  answer(error: unknown): APIError | null {
    const code = this.note(error)
    return code ? outageError(code) : null
  }

  private schedule(): void {
    if (this.timer || this.stopped) return
    this.timer = setInterval(() => void this.check(), PROBE_EVERY_MS)
    this.timer.unref()
  }

  private async check(): Promise<void> {
    if (this.probing || !this.outage) return
    this.probing = true
    try {
      const ok = await this.probe().catch(() => false)
      if (ok && this.outage) {
        const seconds = Math.round((Date.now() - this.outage.since) / 1000)
        this.logger.warn(`storage outage (${this.outage.code}) over after ${seconds} s: the storage takes writes again`)
        this.outage = null
        clearInterval(this.timer)
        this.timer = undefined
      }
    } finally {
      this.probing = false
    }
  }

  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
    this.timer = undefined
  }
}

export function outageError(code: OutageCode): APIError {
  return new APIError(503, code, OUTAGE_MESSAGES[code], { 'retry-after': String(OUTAGE_RETRY_AFTER_SECONDS) })
}

/**
 * Keyed by the server's AuthContext. Typed as any object: the storage port imports this module,
 * and the context names the storage port, so naming the context here would be an import cycle.
 */
const monitors = new WeakMap<object, OutageMonitor>()

/** The composition root gives each server's context its monitor. */
export function watchOutages(ctx: object, monitor: OutageMonitor): void {
  monitors.set(ctx, monitor)
}

/** The 503 answer for a known outage met while serving `ctx` (noted on its monitor), or null. */
export function outageAnswer(ctx: object, error: unknown): APIError | null {
  const monitor = monitors.get(ctx)
  if (monitor) return monitor.answer(error)
  const code = classifyOutage(error)
  return code ? outageError(code) : null
}

/** The outage `ctx`'s storage is in, if any. */
export function currentOutage(ctx: object): Outage | null {
  return monitors.get(ctx)?.current() ?? null
}

/** What a start-up fault of the storage says about its cause, by code. */
const FAULT_CAUSES: Record<string, string> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted (an immutable file or directory?)',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  SQLITE_FULL: 'the disk is full (SQLITE_FULL)',
  SQLITE_CANTOPEN: 'cannot be opened (SQLITE_CANTOPEN)',
}

/**
 * The one line a command prints (exit 2) when the data directory or the database cannot be written
 * at start (issue 50 §9): the path and the cause, no stack. Null for any other error.
 */
export function storageFaultLine(error: unknown): string | null {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const { code, path } = current as { code?: unknown; path?: unknown }
    if (typeof code === 'string') {
      const known = FAULT_CAUSES[code] ?? (NOT_WRITABLE(code) || code.startsWith('SQLITE_CANTOPEN') ? `${current.message} (${code})` : null)
      if (known) return `${typeof path === 'string' ? path : 'the data directory'}: ${known}`
    }
    current = (current as { cause?: unknown }).cause
  }
  return null
}
