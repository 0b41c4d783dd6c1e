import { defineRoute } from '../../http/route.js'
import { createAppPassword, createBody, listAppPasswords, revokeAppPassword, revokeBody } from './rules.js'

/** The signed-in person's own app passwords (the hosted page /ui/account/app-passwords calls these). */
export const appPasswordRoutes = [
  defineRoute({
    method: 'POST',
    path: '/app-password/create',
    // A new credential: as adding a passkey, only from a recent sign-in.
    auth: 'fresh',
    refusedWhileImpersonating: true,
    body: createBody,
    handler: (rc) => createAppPassword(rc.ctx, rc.session.user.id, rc.body, rc.meta),
  }),
  defineRoute({
    method: 'GET',
    path: '/app-password/list',
    auth: 'session',
    handler: async (rc) => ({ appPasswords: await listAppPasswords(rc.ctx, rc.session.user.id) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/app-password/revoke',
    auth: 'session',
    body: revokeBody,
    handler: async (rc) => {
      await revokeAppPassword(rc.ctx, rc.session.user.id, rc.body.id, rc.meta)
      return { success: true }
    },
  }),
]
