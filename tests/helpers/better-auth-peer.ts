import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Database from 'better-sqlite3'
import { type BetterAuthOptions, betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import { toNodeHandler } from 'better-auth/node'
import { admin, bearer, organization, twoFactor, username } from 'better-auth/plugins'
import { startTestServer, type TestServer, type TestServerOptions } from './server.js'

/** A real better-auth answering on loopback, for the differential tests to ask the same steps. */
export interface BetterAuthPeer {
  /** `http://127.0.0.1:<port>/api/auth` */
  base: string
  origin: string
  server: Server
  /** Its database (an in-memory SQLite), for tests that move time by editing rows. */
  sqlite: Database.Database
  close(): Promise<void>
}

/**
 * Starts better-auth with email and password on, rate limits, telemetry and logging off, on an
 * in-memory SQLite migrated for `plugins` (pass the plugins whose columns Gatehouse always has:
 * organization with teams, admin, username, twoFactor, and bearer where the test signs in).
 */
export async function startBetterAuthPeer(
  secret: string,
  plugins: NonNullable<BetterAuthOptions['plugins']>,
  extra: Partial<BetterAuthOptions> = {},
): Promise<BetterAuthPeer> {
  const sqlite = new Database(':memory:')
  let handler: ((req: never, res: never) => void) | null = null
  const server = createServer((req, res) => (handler ? handler(req as never, res as never) : res.end()))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const options = {
    database: sqlite,
    baseURL: origin,
    secret,
    emailAndPassword: { enabled: true },
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    logger: { disabled: true },
    ...extra,
    plugins,
  }
  const { runMigrations } = await getMigrations(options)
  await runMigrations()
  handler = toNodeHandler(betterAuth(options)) as never
  return {
    base: `${origin}/api/auth`,
    origin,
    server,
    sqlite,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
        sqlite.close()
      }),
  }
}

/**
 * The plugins Gatehouse always ships (their user and session columns): organization with teams,
 * admin, username, twoFactor, and bearer (Gatehouse's bearer switch is on by default); then `more`.
 */
export const shippedPlugins = (...more: NonNullable<BetterAuthOptions['plugins']>): NonNullable<BetterAuthOptions['plugins']> => [
  organization({ teams: { enabled: true } }),
  admin(),
  username(),
  twoFactor(),
  bearer(),
  ...more,
]

export interface DifferentialPair {
  peer: BetterAuthPeer
  gatehouse: TestServer
  /** better-auth's base URL and Gatehouse's, for the same scenario. */
  theirs: string
  ours: string
  close(): Promise<void>
}

/** better-auth with the shipped plugins and `more` (its origin check on) and Gatehouse with `config`, on one secret. */
export async function startDifferentialPair(
  secret: string,
  more: NonNullable<BetterAuthOptions['plugins']>,
  config: TestServerOptions['config'],
): Promise<DifferentialPair> {
  const peer = await startBetterAuthPeer(secret, shippedPlugins(...more), { advanced: { disableOriginCheck: false } })
  const gatehouse = await startTestServer({ secret, config })
  return {
    peer,
    gatehouse,
    theirs: peer.base,
    ours: gatehouse.base,
    close: async () => {
      await gatehouse.close()
      await peer.close()
    },
  }
}
