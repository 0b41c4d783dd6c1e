import { z } from 'zod'
import { isUsernameAvailable, signInUsername } from '../../auth/username.js'
import { toPublicUser } from '../../auth/users.js'
import { defineRoute } from '../route.js'
import { setSessionCookies } from '../session.js'

/** Username feature endpoints (SPEC §7 Core, reference §4.2 and §4.5). */
export const usernameRoutes = [
  defineRoute({
    method: 'POST',
    path: '/sign-in/username',
    body: z.object({
      username: z.string(),
      password: z.string(),
      rememberMe: z.boolean().optional(),
      callbackURL: z.string().optional(),
    }),
    handler: async (rc) => {
      const { body } = rc
      const created = await signInUsername(rc.ctx, body, rc.meta)
      setSessionCookies(rc, created, { dontRemember: body.rememberMe === false })
      if (body.callbackURL) rc.response.headers.set('location', body.callbackURL)
      return {
        redirect: Boolean(body.callbackURL),
        token: created.session.token,
        ...(body.callbackURL ? { url: body.callbackURL } : {}),
        user: toPublicUser(created.user),
      }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/is-username-available',
    body: z.object({ username: z.string() }),
    handler: ({ ctx, body }) => ({ available: isUsernameAvailable(ctx, body.username) }),
  }),
]
