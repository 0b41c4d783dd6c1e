import type { Logger } from '../../server/gatehouse.js'

/*
 * The warnings and errors test servers log, apart from tests/helpers/server.ts so that the setup
 * file every test file runs (tests/setup/server-log.ts) loads no server code: a unit test that
 * starts no server does not pay for importing one. server.ts re-exports these.
 */

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
