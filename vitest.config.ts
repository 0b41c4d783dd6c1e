import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'tests/**/*.test.tsx'],
    environment: 'node',
    // Fails any test whose server logged an error or an undeclared warning (tests/helpers/server.ts).
    setupFiles: ['tests/setup/server-log.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // scrypt is CPU-bound (≈130 ms a hash): two workers match this machine's two cores.
    maxWorkers: 2,
  },
})
