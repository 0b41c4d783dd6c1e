import { defineFeature } from '../../feature.js'

/**
 * Moving users in (issue 29): `gatehouse import users` (a users file, users.ts) and `gatehouse
 * import better-auth` (a better-auth database, better-auth.ts), run by server/cli.ts through
 * cli.ts, loaded only then. Foreign password hashes are verified at sign-in by
 * server/crypto/foreign-hashes.ts. Nothing runs in the server: no routes, config or tables yet.
 */
export const importFeature = defineFeature({ id: 'import' })
