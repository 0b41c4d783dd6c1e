import { statSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The order test files start in (vitest.config.ts `sequence.sequencer`): longest first across all
 * projects, so the run does not end on one long file while the other workers sit idle (issue 39:
 * the suite under 15 minutes). Vitest's own order runs the projects one after the other (panel,
 * postgres, sqlite) and, on a machine without its results cache (a fresh clone, CI), the largest
 * files first: tests/runtime/other-runtimes.test.ts, a short file that runs twelve suites again on
 * two runtimes, then started near the end and made the run's tail.
 *
 * A file's weight is its duration in the last run (vitest's results cache). Without one: the
 * seconds measured for the long files below (an order only: a stale figure costs nothing but a
 * later start), else an estimate from the file's size (a Chromium file, `panel` project, costs
 * about five times as much a byte as an API suite: medians of the 2026-11-27 run).
 */
const LONG_FILES_MS: Record<string, number> = {
  'tests/runtime/other-runtimes.test.ts': 130_000,
  'tests/panel/panel-a11y-light.test.ts': 90_000,
  'tests/panel/panel-a11y-dark.test.ts': 90_000,
  'tests/cli/import-users-bad-input.test.ts': 100_000,
  'tests/panel/panel-admins.test.ts': 75_000,
  'tests/panel/panel-product.test.ts': 65_000,
  'tests/features/hosted-pages/hosted-pages.test.ts': 55_000,
  'tests/multi/instances.test.ts': 50_000,
  'tests/cli/crash.test.ts': 50_000,
}
const MS_PER_BYTE = { panel: 1.5, other: 0.3 }

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const weight = (spec: TestSpecification): number => {
      const path = relative(root, spec.moduleId)
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`)
      if (cached) return cached.duration
      const known = LONG_FILES_MS[path]
      if (known !== undefined) return known
      return statSync(spec.moduleId).size * (spec.project.name === 'panel' ? MS_PER_BYTE.panel : MS_PER_BYTE.other)
    }
    const weights = new Map(files.map((spec) => [spec, weight(spec)]))
    return [...files].sort((a, b) => (weights.get(b) ?? 0) - (weights.get(a) ?? 0))
  }
}
