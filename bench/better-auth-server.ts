/**
 * The benchmark peer: better-auth itself, configured like Gatehouse's defaults (email and
 * password on, better-sqlite3 on a file, rate limiting off, the bearer plugin as Gatehouse's
 * `bearer.enabled` default), served by node:http.
 * Usage: node bin/run-ts.js bench/better-auth-server.ts <port> <sqlite file>
 */
import { createServer } from 'node:http'
import Database from 'better-sqlite3'
import { betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import { toNodeHandler } from 'better-auth/node'
import { bearer } from 'better-auth/plugins'

const port = Number(process.argv[2] ?? 4390)
const file = process.argv[3] ?? ':memory:'
const sqlite = new Database(file)
sqlite.pragma('journal_mode = WAL')
const options = {
  database: sqlite,
  baseURL: `http://127.0.0.1:${port}`,
  secret: 'bench-secret-0123456789-abcdefghijklmnop',
  emailAndPassword: { enabled: true },
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
  plugins: [bearer()],
}
const { runMigrations } = await getMigrations(options)
await runMigrations()
const auth = betterAuth(options)
createServer(toNodeHandler(auth)).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/api/auth`))
