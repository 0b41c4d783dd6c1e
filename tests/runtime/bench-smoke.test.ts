import { join } from 'node:path'
import { expect, it } from 'vitest'
import { freePort } from '../helpers/engines.js'
import { runNode } from '../helpers/process.js'

/**
 * The token endpoint's benchmark (bench/oidc.ts, docs/BENCHMARKS.md) still runs: one second per
 * scenario with two clients, on this runtime (tests/runtime/other-runtimes.test.ts runs it on
 * Node 22 and 24 too). How fast is the benchmark's business, not this test's: it asserts that
 * every scenario answered grants and that none failed (a rotating refresh that fails once breaks
 * its chain, so one failure shows).
 */

const root = join(import.meta.dirname, '..', '..')

it('bench/oidc.ts: rotating refreshes (RS256, EdDSA), client credentials and the bare anchor answer, none fails', async () => {
  const port = await freePort()
  // A short warm-up by count, printed window by window (BENCH_CURVE), then one second measured.
  const run = await runNode(
    [join(root, 'bin', 'run-ts.js'), join(root, 'bench', 'oidc.ts')],
    { BENCH_DURATION: '1', BENCH_CONCURRENCY: '2', BENCH_PORT: String(port), BENCH_WARMUP_REQUESTS: '20', BENCH_CURVE: '10' },
    60_000,
  )
  const { output } = run
  expect(run.code, output).toBe(0)
  const rows = output.split('\n').filter((line) => /^\| (refresh_token|client_credentials|bare:)/.test(line))
  expect(
    rows.map((row) => row.split(' | ')[0]),
    output,
  ).toEqual([
    '| refresh_token (rotating, RS256 ID token)',
    '| refresh_token (rotating, EdDSA ID token)',
    '| client_credentials',
    '| bare: refresh_token (rotating, RS256 ID token), node:http + SQLite',
  ])
  for (const row of rows) {
    const cells = row.split('|').map((cell) => cell.trim())
    // | grant | requests/s | CPU | per CPU-second | CPU per request | vs Keycloak | failed |
    expect(Number(cells[2]), row).toBeGreaterThan(0)
    expect(Number(cells[4]), row).toBeGreaterThan(0)
    expect(cells[7], row).toBe('0')
  }
  expect(output).toMatch(/RS256 refresh per CPU-second against the bare anchor: \d+\.\d\d×/)
  // Each scenario's warm-up curve: two windows of ten requests (a figure, or none under one /proc tick).
  const curves = output.split('\n').filter((line) => line.startsWith('warm-up of '))
  expect(curves, output).toHaveLength(4)
  for (const curve of curves)
    expect(curve, output).toMatch(/per CPU-second in windows of 10 requests: (\d+|under a tick), (\d+|under a tick)$/)
}, 90_000)
