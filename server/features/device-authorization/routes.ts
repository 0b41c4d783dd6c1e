import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import type { SessionWithUser } from '../../core/sessions.js'
import { defineRoute, type RouteContext } from '../../http/route.js'
import { resolveRequestSession } from '../../http/session.js'
import { finishTokenSignIn } from '../../http/sign-in.js'
import { deviceError, invalidDeviceRequest } from './errors.js'
import { decideRequest, identifyByDeviceCode, requestDeviceCode, verifyUserCode } from './rules.js'

const enabled = (ctx: AuthContext) => ctx.config().deviceAuthorization.enabled

/** RFC 8628 answers are not to be cached (better-auth's `noStore`). */
function noStore(rc: RouteContext<unknown, unknown, unknown>): void {
  rc.response.headers.set('cache-control', 'no-store')
  rc.response.headers.set('pragma', 'no-cache')
}

const codeFields = z.object({
  client_id: z.string().meta({ description: 'The client ID of the application' }),
  user_id: z.string().optional().meta({ description: 'The user ID to which the device code should be pre-bound' }),
  scope: z.string().optional().meta({ description: 'Space-separated list of scopes' }),
})

/**
 * /device/code refuses bad input in RFC 8628's words (`invalid_request` with the validation
 * message), not with the runner's VALIDATION_ERROR: the schema never fails, an invalid body comes
 * through as `{invalid}` and the handler answers it.
 */
const codeBody = codeFields.catch((c) => {
  const issue = c.error.issues[0]
  return { invalid: `[${['body', ...(issue?.path ?? []).map(String)].join('.')}] ${issue?.message ?? 'Invalid input'}` } as never
}) as unknown as z.ZodType<z.output<typeof codeFields> | { invalid: string }>

const tokenBody = z.object({
  grant_type: z.literal('urn:ietf:params:oauth:grant-type:device_code').meta({ description: 'The grant type for device flow' }),
  device_code: z.string().meta({ description: 'The device verification code' }),
  client_id: z.string().meta({ description: 'The client ID of the application' }),
})

const userCodeBody = z.object({ userCode: z.string().meta({ description: 'The user code' }) })

async function currentSession(rc: RouteContext<unknown, unknown, unknown>): Promise<SessionWithUser | null> {
  const resolved = await resolveRequestSession(rc)
  return resolved.status === 'active' ? resolved.data : null
}

async function requireSession(rc: RouteContext<unknown, unknown, unknown>): Promise<SessionWithUser> {
  const current = await currentSession(rc)
  if (!current) throw deviceError(401, 'unauthorized', 'AUTHENTICATION_REQUIRED')
  return current
}

/** better-auth's deviceAuthorization endpoints (RFC 8628). */
export const deviceAuthorizationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/device/code',
    enabled,
    oauthErrors: true,
    body: codeBody,
    handler: async (rc) => {
      const { body } = rc
      if ('invalid' in body) throw invalidDeviceRequest(body.invalid)
      noStore(rc)
      // Empty fields count as absent (better-auth's normalisation).
      if (!body.client_id) throw deviceError(400, 'invalid_request', 'CLIENT_ID_REQUIRED')
      return requestDeviceCode(rc.ctx, { clientId: body.client_id, scope: body.scope || undefined, userId: body.user_id || undefined })
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/device/token',
    enabled,
    oauthErrors: true,
    body: tokenBody,
    handler: async (rc) => {
      const { ctx, body } = rc
      noStore(rc)
      const attempt = await identifyByDeviceCode(ctx, { deviceCode: body.device_code, clientId: body.client_id })
      const signedIn = await finishTokenSignIn(rc, attempt)
      return {
        access_token: signedIn.session.token,
        token_type: 'Bearer',
        expires_in: Math.floor((signedIn.session.expiresAt.getTime() - ctx.clock.now()) / 1000),
        scope: attempt.detail?.scope ?? '',
      }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/device',
    enabled,
    oauthErrors: true,
    // better-auth's plugin rule: 5 lookups of user codes per client per code lifetime (guessing codes is slow).
    rateLimit: (ctx) => ({ window: ctx.config().deviceAuthorization.expiresIn, max: 5 }),
    query: z.object({ user_code: z.string().meta({ description: 'The user code to verify' }) }),
    handler: async (rc) => verifyUserCode(rc.ctx, rc.query.user_code, await currentSession(rc)),
  }),

  defineRoute({
    method: 'POST',
    path: '/device/approve',
    enabled,
    oauthErrors: true,
    body: userCodeBody,
    handler: async (rc) => {
      await decideRequest(rc.ctx, rc.body.userCode, await requireSession(rc), 'approved', rc.meta)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/device/deny',
    enabled,
    oauthErrors: true,
    body: userCodeBody,
    handler: async (rc) => {
      await decideRequest(rc.ctx, rc.body.userCode, await requireSession(rc), 'denied', rc.meta)
      return { success: true }
    },
  }),
]
