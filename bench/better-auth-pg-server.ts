/**
 * The PostgreSQL benchmark peer: better-auth 1.7 on PostgreSQL through its Kysely adapter (a `pg`
 * Pool passed as `database`), email and password on, the admin plugin (for list-users), rate
 * limiting off, served by node:http. Creates its tables with better-auth's own getMigrations.
 * Usage: node bin/run-ts.js bench/better-auth-pg-server.ts <port> <postgres://… url> [pool size]
 */
import { createServer } from 'node:http'
import { betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import { toNodeHandler } from 'better-auth/node'
import { admin } from 'better-auth/plugins'
import pg from 'pg'

const port = Number(process.argv[2] ?? 4391)
const url = process.argv[3]
if (!url) throw new Error('usage: better-auth-pg-server.ts <port> <postgres://… url> [pool size]')
const pool = new pg.Pool({ connectionString: url, max: Number(process.argv[4] ?? 10) })
const options = {
  database: pool,
  baseURL: `http://127.0.0.1:${port}`,
  secret: 'bench-secret-0123456789-abcdefghijklmnop',
  emailAndPassword: { enabled: true },
  plugins: [admin()],
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
}
const { runMigrations } = await getMigrations(options)
await runMigrations()
const auth = betterAuth(options)
createServer(toNodeHandler(auth)).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/api/auth`))
