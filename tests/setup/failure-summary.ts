/**
 * A reporter that ends the run's output with one line per failure (vitest.config.ts): CI keeps only
 * the tail of a run's output, where the default reporter prints its counts, so a failure's name and
 * first line of error must come last to be read there. Silent when everything passed.
 */
import { stripVTControlCharacters } from 'node:util'
import type { Reporter, SerializedError, TestModule } from 'vitest/node'

const firstLine = (text: string | undefined, max = 240): string => {
  const line = (text ?? '').split('\n').find((l) => l.trim()) ?? ''
  const plain = stripVTControlCharacters(line).trim()
  return plain.length > max ? `${plain.slice(0, max)}…` : plain
}

/** Where in a test file an error was raised: its first stack frame inside tests/ or server/. */
const whereOf = (error: { stack?: string } | undefined): string => {
  const frame = (error?.stack ?? '').split('\n').find((l) => /\/(tests|server)\/.*:\d+:\d+/.test(l) && !l.includes('node_modules'))
  const at = frame ? /((?:tests|server)\/[^):]+:\d+)/.exec(frame)?.[1] : undefined
  return at ? ` (${at})` : ''
}

export default class FailureSummary implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const lines: string[] = []
    for (const module of testModules) {
      const file = module.relativeModuleId
      for (const error of module.errors()) lines.push(`FAILED ${file} (the file itself): ${firstLine(error.message)}${whereOf(error)}`)
      for (const test of module.children.allTests('failed')) {
        const error = test.result().errors?.[0]
        lines.push(`FAILED ${file} › ${test.fullName}: ${firstLine(error?.message)}${whereOf(error)}`)
      }
    }
    for (const error of unhandledErrors) {
      const { VITEST_TEST_PATH: origin, VITEST_TEST_NAME: during } = error as { VITEST_TEST_PATH?: string; VITEST_TEST_NAME?: string }
      lines.push(
        `UNHANDLED${origin ? ` in ${origin}` : ''}${during ? ` during "${during}"` : ''}: ${firstLine(error.message ?? String(error))}${whereOf(error)}`,
      )
    }
    if (lines.length === 0) return
    process.stdout.write(`\nFailures, one line each (the details are above):\n${lines.join('\n')}\n`)
  }
}
