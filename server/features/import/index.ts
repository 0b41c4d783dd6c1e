import { defineFeature } from '../../feature.js'
import { importErrors } from './errors.js'
import { importPanel, removeUploads } from './panel.js'

/**
 * Moving users in (issue 29): `gatehouse import users` (a users file, users.ts) and `gatehouse
 * import better-auth` (a better-auth database, better-auth.ts), run by server/cli.ts through
 * cli.ts, loaded only then; the panel's Import step (panel.ts) runs the same functions in the
 * server. Foreign password hashes are verified at sign-in by server/crypto/foreign-hashes.ts. No
 * routes, config or tables.
 */
export const importFeature = defineFeature({
  id: 'import',
  errors: importErrors,
  panel: importPanel,
  start:
    ({ ctx }) =>
    () =>
      removeUploads(ctx),
})
