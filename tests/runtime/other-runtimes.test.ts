import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { warnSkipped } from '../helpers/engines.js'
import { findRuntime, NESTED_RUNTIME, RUNTIME_MAJORS } from '../helpers/runtimes.js'

/**
 * README names Node 22 LTS and 24 LTS as the supported runtime of the OpenID Connect provider
 * (oidc-provider 9 supports only those), while the checkout — and so the rest of `npm test` — may
 * run on Node 20. This file runs the OpenID Connect suites, the bundle tests and the bench smoke
 * again on each of them, as a nested Vitest run on that runtime (its own better-sqlite3 build,
 * tests/runtime/better-sqlite3-hook.mjs), and fails with that run's output when any test fails.
 * `node bin/install-runtimes.js` installs them from the npm registry (`.ci/run` does); without
 * them this file says loudly that it skipped. Inside a nested run it does nothing (no recursion).
 */

/** The focused subset: what depends on the runtime (oidc-provider, the bundle, the token endpoint's speed). */
const SUITES_ON_EVERY_RUNTIME = [
  'tests/features/oidc-provider/conformance/basic-op.test.ts',
  'tests/features/oidc-provider/conformance/rp-initiated-logout.test.ts',
  'tests/features/oidc-provider/oidc-provider.api.test.ts',
  'tests/features/oidc-provider/oidc-token-fast.api.test.ts',
  'tests/features/oidc-provider/oidc-recipes.api.test.ts',
  'tests/features/social/oauth-oidc.api.test.ts',
  'tests/cli/oidc-client.test.ts',
  'tests/cli/oidc-crash.test.ts',
  'tests/cli/oidc-runtime.test.ts',
  'tests/features/oidc-provider/oidc-consumed-payload.test.ts',
  'tests/bundle/bundle.test.ts',
  'tests/runtime/bench-smoke.test.ts',
]

const root = join(import.meta.dirname, '..', '..')
const RUN_TIMEOUT_MS = 15 * 60_000

function runVitest(node: string, env: Record<string, string>): Promise<{ code: number | null; output: string; seconds: number }> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    // (vitest.config.ts gives a nested run a longer default test timeout.)
    // Two workers, not the config's four: this run shares the machine with the outer run's own
    // workers, and eight test processes on two cores pushed unrelated suites past their time bounds
    // on CI (four timeouts in the 2026-12-03 run, none alone).
    const args = ['run', '--project', 'sqlite', '--maxWorkers', '2', ...SUITES_ON_EVERY_RUNTIME]
    const child = spawn(node, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), ...args], {
      cwd: root,
      env: { ...process.env, ...env, FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString()
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the run did not finish within ${RUN_TIMEOUT_MS / 60_000} min:\n${output}`))
    }, RUN_TIMEOUT_MS)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output, seconds: Math.round((Date.now() - started) / 1000) })
    })
  })
}

for (const major of NESTED_RUNTIME ? [] : RUNTIME_MAJORS) {
  const runtime = findRuntime(major)
  const missing = typeof runtime === 'string' ? runtime : undefined
  warnSkipped(`tests/runtime/other-runtimes.test.ts on Node ${major} LTS (the OpenID Connect suites, bundle tests, bench smoke)`, missing)
  describe.skipIf(missing !== undefined)(`Node ${major} LTS`, () => {
    it(
      `the OpenID Connect suites, the bundle tests and the bench smoke pass on Node ${major}`,
      async () => {
        if (typeof runtime === 'string') return
        const { code, output, seconds } = await runVitest(runtime.node, runtime.env)
        console.log(`Node ${runtime.version}: ${SUITES_ON_EVERY_RUNTIME.length} paths in ${seconds} s`)
        // The nested run really ran on that runtime, every file passed and none was skipped.
        expect(output, output).toContain(`Tests running on ${runtime.version} (node${major})`)
        expect(code, output).toBe(0)
        const files = /Test Files\s+(.*)/.exec(output)?.[1] ?? ''
        expect(files, output).toMatch(/^\d+ passed \(\d+\)$/)
      },
      RUN_TIMEOUT_MS,
    )
  })
}
