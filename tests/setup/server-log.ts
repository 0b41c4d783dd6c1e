import { afterAll, afterEach } from 'vitest'
import { type LoggedEntry, serverLog } from '../helpers/server-log.js'

/**
 * Registered for every test file (vitest.config.ts `setupFiles`): a test fails when a server
 * started through tests/helpers/server.ts logged an error, or a warning the test did not declare
 * with `serverLog.allowWarning(/…/)` / `serverLog.allowError(/…/)`. A failing background job
 * (outbox, audit) or an unexpected 500 cannot pass unseen.
 */
const describe = (entries: LoggedEntry[]): string =>
  entries
    .map(
      (e) =>
        `${e.level}: ${e.message}${e.error === undefined ? '' : ` ${e.error instanceof Error ? (e.error.stack ?? e.error.message) : String(e.error)}`}`,
    )
    .join('\n')

afterEach(() => {
  const unexpected = serverLog.takeUnexpected()
  serverLog.allowed = []
  if (unexpected.length > 0)
    throw new Error(
      `the server logged ${unexpected.length} unexpected entr${unexpected.length === 1 ? 'y' : 'ies'}:\n${describe(unexpected)}`,
    )
})

// Entries logged after the last test ended (background jobs still running at close).
afterAll(() => {
  const unexpected = serverLog.takeUnexpected()
  if (unexpected.length > 0) throw new Error(`the server logged after the last test:\n${describe(unexpected)}`)
})
