import { queryAuditEvents } from '../../core/audit.js'
import { defineRoute } from '../../http/route.js'

/** How far back the person's own activity goes (the account pages' "30 days"). */
export const OWN_ACTIVITY_DAYS = 30
/** At most this many entries: the page shows recent activity, the panel's Audit view the rest. */
export const OWN_ACTIVITY_LIMIT = 200

/**
 * The signed-in person's own audit entries of the last 30 days, newest first (Gatehouse; the hosted
 * account center's Activity page): the events they acted in or were the target of, and the failed
 * sign-ins that named their address. The same query as the panel's Audit view (core/audit.ts,
 * `user` = their address). Only what the person may see of each: its kind, outcome, time, address,
 * user agent and sign-in method; never the detail an administrator's action recorded.
 */
export const auditRoutes = [
  defineRoute({
    method: 'GET',
    path: '/audit/own-events',
    auth: 'session',
    handler: async ({ ctx, session, response }) => {
      response.headers.set('cache-control', 'no-store')
      const from = ctx.clock.now() - OWN_ACTIVITY_DAYS * 86_400_000
      const { events } = await queryAuditEvents(ctx, { user: session.user.email, from }, { limit: OWN_ACTIVITY_LIMIT })
      return {
        days: OWN_ACTIVITY_DAYS,
        events: events.map((e) => ({
          id: e.id,
          type: e.type,
          outcome: e.outcome,
          createdAt: e.createdAt,
          ipAddress: e.ipAddress,
          userAgent: e.userAgent,
          method: typeof e.detail?.method === 'string' ? e.detail.method : null,
          // An action on the account by someone else (an administrator): said, without who or why.
          byAnother: e.actorUserId !== null && e.actorUserId !== session.user.id,
        })),
      }
    },
  }),
]
