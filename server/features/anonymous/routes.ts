import type { AuthContext } from '../../core/context.js'
import { toPublicUser } from '../../core/users.js'
import { defineRoute } from '../../http/route.js'
import { clearSessionCookies, resolveRequestSession } from '../../http/session.js'
import { finishSignIn, identifying, jsonSignInAnswer } from '../../http/sign-in.js'
import { deleteAnonymousUser, identifyAnonymous } from './rules.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().anonymous.enabled

/** better-auth's anonymous plugin: POST /sign-in/anonymous, POST /delete-anonymous-user. */
export const anonymousRoutes = [
  defineRoute({
    method: 'POST',
    path: '/sign-in/anonymous',
    enabled,
    handler: async (rc) => {
      const attempt = await identifying(rc.ctx, 'anonymous', async () => {
        const carried = await resolveRequestSession(rc, { disableRefresh: true })
        return identifyAnonymous(rc.ctx, carried.status === 'active' ? carried.data : null)
      })
      return jsonSignInAnswer(await finishSignIn(rc, attempt), (s) => ({ token: s.session.token, user: toPublicUser(s.user) }))
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/delete-anonymous-user',
    auth: 'session',
    enabled,
    handler: async (rc) => {
      await deleteAnonymousUser(rc.ctx, rc.session, rc.meta)
      clearSessionCookies(rc)
      return { success: true }
    },
  }),
]
