import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { defineFeature } from '../../feature.js'
import { currentOutage, outageAnswer } from '../../core/outage.js'
import { defineRoute } from '../../http/route.js'
import { healthErrors } from './errors.js'

/** How long the readiness check waits for the database to take a write. */
const WRITE_PROBE_MS = 1_000

/** Migrations each server's build ships, by its context. */
const expected = new WeakMap<object, number>()

/**
 * `GET /ready`: the readiness answer for load balancers and orchestrators, beside the liveness
 * answer `GET /ok`. 200 `{"ready": true}` when every migration this build ships is applied and the
 * database takes a write; otherwise 503 with `{code, message}` (MIGRATIONS_PENDING,
 * DATABASE_NOT_WRITABLE), or for a known outage (server/core/outage.ts) `{code, message, cause}`
 * with Retry-After (DATABASE_UNAVAILABLE, STORAGE_FULL). Migrations run before the listener opens, so a starting server is not
 * reachable at all; a database migrated by no one (or rolled back by hand) answers 503. The
 * probes are the storage port's (SQLite and PostgreSQL each answer them their own way).
 */
export const healthFeature = defineFeature({
  id: 'health',
  errors: healthErrors,
  start({ ctx, migrationsFolder }) {
    const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }
    expected.set(ctx, journal.entries.length)
    return undefined
  },
  routes: [
    defineRoute({
      method: 'GET',
      path: '/ready',
      handler: async ({ ctx, response }) => {
        try {
          const migrations = expected.get(ctx)
          if (migrations === undefined || (await ctx.storage.appliedMigrations()) < migrations) {
            response.status = 503
            return healthErrors.MIGRATIONS_PENDING
          }
          if (!(await ctx.storage.acceptsWrites(WRITE_PROBE_MS))) {
            response.status = 503
            return healthErrors.DATABASE_NOT_WRITABLE
          }
          return { ready: true }
        } catch (error) {
          // A known outage names its cause (DATABASE_UNAVAILABLE, STORAGE_FULL) with the cause the
          // driver gave; anything else stays an internal error.
          const outage = outageAnswer(ctx, error)
          if (!outage) throw error
          response.status = 503
          for (const [k, v] of Object.entries(outage.headers)) response.headers.set(k, v)
          return { code: outage.code, message: outage.message, cause: currentOutage(ctx)?.cause ?? null }
        }
      },
    }),
  ],
})
