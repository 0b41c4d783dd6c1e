export {}
/**
 * A shorter run of one scenario, for iterating on a hot path:
 *   node bin/run-ts.js bench/quick.ts "GET /get-session"
 */
process.env.BENCH_ONLY = process.argv[2] ?? 'GET /get-session'
await import('./run.js')
