import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../../server/core/context.js'
import type { GatehouseConfigInput } from '../../server/config/schema.js'
import { createGatehouse, type Gatehouse, type Logger } from '../../server/gatehouse.js'

/** A clock the test moves by hand: expiry is tested without sleeping. */
export class TestClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 1, 12, 0, 0)) {}
  now(): number {
    return this.t
  }
  advance(ms: number): void {
    this.t += ms
  }
  advanceSeconds(s: number): void {
    this.t += s * 1000
  }
}

export interface LoggedEntry {
  level: 'warn' | 'error'
  message: string
  error?: unknown
}

/**
 * Everything a test server logged at warn or error level. `tests/setup/server-log.ts` (a vitest
 * setup file, so every test file gets it) fails a test that leaves an entry nobody allowed.
 */
export const serverLog = {
  entries: [] as LoggedEntry[],
  allowed: [] as { level: LoggedEntry['level']; pattern: RegExp; seen: number }[],
  /** Warnings every test may leave: logged by design on a server without SMTP. */
  alwaysAllowed: [/^no SMTP server configured/] as RegExp[],
  /**
   * Declares a warning the current test expects (cleared after each test). Matching entries do
   * not fail the test.
   */
  allowWarning(pattern: RegExp): void {
    serverLog.allowed.push({ level: 'warn', pattern, seen: 0 })
  },
  /** Declares an error the current test provokes on purpose (cleared after each test). */
  allowError(pattern: RegExp): void {
    serverLog.allowed.push({ level: 'error', pattern, seen: 0 })
  },
  /** Removes and returns the entries no allowance covers. */
  takeUnexpected(): LoggedEntry[] {
    const unexpected = serverLog.entries.filter((entry) => {
      if (entry.level === 'warn' && serverLog.alwaysAllowed.some((p) => p.test(entry.message))) return false
      const allowance = serverLog.allowed.find((a) => a.level === entry.level && a.pattern.test(entry.message))
      if (allowance) allowance.seen++
      return !allowance
    })
    serverLog.entries = []
    return unexpected
  },
}

/** The logger every test server gets: nothing printed, warnings and errors kept in `serverLog`. */
export const silentLogger: Logger & { errors: unknown[]; warnings: string[] } = {
  errors: [],
  warnings: [],
  info() {},
  warn(m) {
    silentLogger.warnings.push(m)
    serverLog.entries.push({ level: 'warn', message: m })
  },
  error(m, e) {
    silentLogger.errors.push(e ?? m)
    serverLog.entries.push({ level: 'error', message: m, error: e })
  },
}

export interface TestServer {
  /** http://127.0.0.1:PORT */
  origin: string
  /** origin + /api/auth */
  base: string
  dataDir: string
  clock: TestClock
  gatehouse: Gatehouse
  close(): Promise<void>
}

export interface TestServerOptions {
  config?: GatehouseConfigInput
  clock?: TestClock
  secret?: string
  dataDir?: string
  /** Keep the data directory after close (restart tests). */
  keepData?: boolean
  /** Public URL the server believes it is reached at (e.g. https://… for secure cookies). */
  baseURL?: string
}

/** The real server on a loopback port with a real SQLite file in a temporary directory. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'gatehouse-test-'))
  const clock = options.clock ?? new TestClock()
  const gatehouse = createGatehouse({
    dataDir,
    port: 0,
    host: '127.0.0.1',
    baseURL: options.baseURL,
    secret: options.secret ?? 'test-secret-0123456789-abcdefghijkl',
    config: { rateLimit: { enabled: false }, ...options.config },
    clock,
    logger: silentLogger,
  })
  const base = await gatehouse.listen()
  const origin = new URL(base).origin
  return {
    origin,
    base,
    dataDir,
    clock,
    gatehouse,
    async close() {
      await gatehouse.close()
      if (!options.keepData) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
