import { observeSignIn } from '../../core/events.js'
import type { AuthContext } from '../../core/context.js'
import { toPublicUser } from '../../core/users.js'
import { defineRoute } from '../../http/route.js'
import { clearSessionCookies, resolveRequestSession } from '../../http/session.js'
import { finishSignIn } from '../../http/sign-in.js'
import { deleteAnonymousUser, identifyAnonymous } from './rules.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().anonymous.enabled

/** better-auth's anonymous plugin: POST /sign-in/anonymous, POST /delete-anonymous-user. */
export const anonymousRoutes = [
  defineRoute({
    method: 'POST',
    path: '/sign-in/anonymous',
    enabled,
    handler: (rc) =>
      observeSignIn(rc.ctx, 'anonymous', async () => {
        const carried = await resolveRequestSession(rc, { disableRefresh: true })
        const result = await finishSignIn(rc, identifyAnonymous(rc.ctx, carried.status === 'active' ? carried.data : null))
        if (result.kind === 'second-factor') return result.answer
        return { token: result.signedIn.session.token, user: toPublicUser(result.signedIn.user) }
      }),
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
