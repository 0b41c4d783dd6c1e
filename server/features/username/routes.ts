import { z } from 'zod'
import { defineRoute } from '../../http/route.js'
import { signInAnswer } from '../../http/sign-in.js'
import { isUsernameAvailable } from './rules.js'
import { signInUsername } from './sign-in.js'

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
      return signInAnswer(rc, () => signInUsername(rc.ctx, body, rc.meta), 'username', body)
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/is-username-available',
    body: z.object({ username: z.string() }),
    handler: async ({ ctx, body }) => ({ available: await isUsernameAvailable(ctx, body.username) }),
  }),
]
