/**
 * Global setup of the `postgres` test project (vitest.config.ts): one throwaway PostgreSQL for the
 * whole run (tests/helpers/engines.ts), with a template database already migrated, so that each
 * test server gets a fresh database of its own in one CREATE DATABASE … TEMPLATE (tests/helpers/
 * server.ts) rather than a migration run.
 */
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { openPostgres } from '../../server/db/pg/storage.js'
import { startPostgres } from '../helpers/engines.js'

export const TEMPLATE_DATABASE = 'gatehouse_template'

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://… of the maintenance database of the run's PostgreSQL (superuser, loopback). */
    postgresAdminUrl: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres()
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`)
  await admin.end()
  const template = await openPostgres(server.url.replace(/\/postgres$/, `/${TEMPLATE_DATABASE}`), { poolSize: 1 })
  await template.close()
  project.provide('postgresAdminUrl', server.url)
  return () => server.stop()
}
