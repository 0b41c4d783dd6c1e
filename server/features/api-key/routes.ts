import { assertNotImpersonating } from '../../core/impersonation.js'
import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import type { SessionWithUser } from '../../core/sessions.js'
import { defineRoute, type Route, type RouteContext } from '../../http/route.js'
import { resolveRequestSession } from '../../http/session.js'
import {
  auditManagementRefusal,
  createApiKey,
  createBody,
  deleteApiKey,
  getApiKey,
  listApiKeys,
  listQuery,
  toWire,
  updateApiKey,
  updateBody,
  verifyApiKey,
} from './keys.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().apiKey.enabled

/** The session when there is one (create and update also serve server-side callers upstream); kept on the context for the audit. */
async function optionalSession(rc: RouteContext<unknown, unknown, unknown>): Promise<SessionWithUser | null> {
  const resolved = await resolveRequestSession(rc)
  const session = resolved.status === 'active' ? resolved.data : null
  rc.session = session
  return session
}

type Handler = Route['handler']
/** Refusals of the management endpoints land in the audit log (at most once a minute per caller, path and code). */
const audited =
  (handler: Handler): Handler =>
  async (rc) => {
    try {
      return await handler(rc)
    } catch (error) {
      if (error instanceof APIError) await auditManagementRefusal(rc.ctx, rc.path, error.code, rc.session?.user.id ?? null, rc.meta)
      throw error
    }
  }

/** The plugin's management endpoints. */
const managementRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/api-key/create',
    body: createBody,
    enabled,
    handler: async (rc) => {
      const session = await optionalSession(rc)
      // The session is optional here (a server may create a key for a userId), so no route flag.
      assertNotImpersonating(session)
      return await createApiKey(rc.ctx, rc.body, { kind: 'client', session, meta: rc.meta })
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api-key/get',
    query: z.object({ configId: z.string().optional(), id: z.string() }),
    auth: 'session',
    enabled,
    handler: async ({ ctx, query, session }) => await getApiKey(ctx, query.id, session.user.id),
  }),

  defineRoute({
    method: 'POST',
    path: '/api-key/update',
    body: updateBody,
    enabled,
    handler: async (rc) => {
      const session = await optionalSession(rc)
      return await updateApiKey(rc.ctx, rc.body, { kind: 'client', session, meta: rc.meta })
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api-key/delete',
    body: z.object({ configId: z.string().optional(), keyId: z.string() }),
    auth: 'session',
    enabled,
    handler: async ({ ctx, body, session, meta }) => await deleteApiKey(ctx, body.keyId, { kind: 'client', session, meta }),
  }),

  defineRoute({
    method: 'GET',
    path: '/api-key/list',
    query: listQuery,
    auth: 'session',
    enabled,
    handler: async ({ ctx, query, session }) => await listApiKeys(ctx, session.user.id, query),
  }),
]

/** @better-auth/api-key's endpoints (paths, bodies and answers as upstream), plus `verify`. */
export const apiKeyRoutes: Route[] = [
  ...managementRoutes.map((route) => ({ ...route, handler: audited(route.handler) })),
  /**
   * Gatehouse's HTTP form of the plugin's server-only `auth.api.verifyApiKey` (services on the
   * LAN have no in-process server API): the same `{valid, error, key}` answer; counts a use.
   */
  defineRoute({
    method: 'POST',
    path: '/api-key/verify',
    body: z.object({ configId: z.string().optional(), key: z.string(), permissions: z.record(z.string(), z.array(z.string())).optional() }),
    enabled,
    handler: async ({ ctx, body, meta }) => {
      try {
        const row = await verifyApiKey(ctx, body.key, { permissions: body.permissions, meta })
        return { valid: true, error: null, key: toWire(row) }
      } catch (error) {
        if (!(error instanceof APIError)) throw error
        return { valid: false, error: { message: error.message, code: error.code }, key: null }
      }
    },
  }),
]
