import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { z } from 'zod'
import { APIError, ERR } from '../../core/errors.js'
import { defineRoute, type RouteContext } from '../../http/route.js'
import { publicSession, resolveRequestSession } from '../../http/session.js'
import { finishSignIn, identifying, jsonSignInAnswer } from '../../http/sign-in.js'
import { expirePluginCookie, readSignedCookie, setSignedCookie } from '../../http/plugin-cookies.js'
import {
  authenticationOptions,
  CHALLENGE_MAX_AGE,
  deleteOwnPasskey,
  listPasskeys,
  registrationOptions,
  renameOwnPasskey,
  verifyAuthentication,
  verifyRegistration,
} from './service.js'

type AnyRC = RouteContext<unknown, unknown, unknown>

/** @better-auth/passkey's challenge cookie (`advanced.webAuthnChallengeCookie`), under the cookie prefix. */
const CHALLENGE_COOKIE = 'better-auth-passkey'

function assertEnabled(rc: AnyRC): void {
  if (!rc.ctx.config().passkey.enabled) throw new APIError(404, 'NOT_FOUND', ERR.NOT_FOUND)
}

/** The cookie name is `${prefix}.better-auth-passkey`: the plugin-cookie helper maps session_token's slot. */
const challengeToken = (rc: AnyRC) => readSignedCookie(rc, CHALLENGE_COOKIE)

export const passkeyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/passkey/generate-register-options',
    auth: 'fresh',
    refusedWhileImpersonating: true,
    query: z
      .looseObject({ authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(), name: z.string().optional() })
      .optional(),
    handler: async (rc) => {
      assertEnabled(rc)
      const { options, token } = await registrationOptions(rc.ctx, rc.session, rc.query ?? {})
      setSignedCookie(rc, CHALLENGE_COOKIE, token, CHALLENGE_MAX_AGE)
      return options
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/passkey/generate-authenticate-options',
    handler: async (rc) => {
      assertEnabled(rc)
      const resolved = await resolveRequestSession(rc)
      const { options, token } = await authenticationOptions(rc.ctx, resolved.status === 'active' ? resolved.data : null)
      setSignedCookie(rc, CHALLENGE_COOKIE, token, CHALLENGE_MAX_AGE)
      return options
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/passkey/verify-registration',
    auth: 'fresh',
    refusedWhileImpersonating: true,
    body: z.looseObject({ response: z.looseObject({ id: z.string(), response: z.looseObject({}) }), name: z.string().optional() }),
    handler: async (rc) => {
      assertEnabled(rc)
      const row = await verifyRegistration(
        rc.ctx,
        rc.session,
        {
          response: rc.body.response as unknown as RegistrationResponseJSON,
          name: rc.body.name,
          origin: rc.request.headers.get('origin'),
          token: challengeToken(rc),
        },
        rc.meta,
      )
      expirePluginCookie(rc, CHALLENGE_COOKIE)
      return row
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/passkey/verify-authentication',
    body: z.object({ response: z.record(z.string(), z.unknown()) }),
    handler: async (rc) => {
      const attempt = await identifying(rc.ctx, 'passkey', () => {
        assertEnabled(rc)
        return verifyAuthentication(
          rc.ctx,
          {
            response: rc.body.response as unknown as AuthenticationResponseJSON,
            origin: rc.request.headers.get('origin'),
            token: challengeToken(rc),
          },
          rc.meta,
        )
      })
      expirePluginCookie(rc, CHALLENGE_COOKIE)
      // A passkey satisfies the second factor: the pipeline ends with a session.
      return jsonSignInAnswer(await finishSignIn(rc, attempt), publicSession)
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/passkey/list-user-passkeys',
    auth: 'session',
    handler: async (rc) => {
      assertEnabled(rc)
      return await listPasskeys(rc.ctx, rc.session.user.id)
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/passkey/delete-passkey',
    auth: 'session',
    body: z.object({ id: z.string().min(1) }),
    handler: async (rc) => {
      assertEnabled(rc)
      await deleteOwnPasskey(rc.ctx, rc.session, rc.body.id, rc.meta)
      return { status: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/passkey/update-passkey',
    auth: 'session',
    body: z.object({ id: z.string().min(1), name: z.string() }),
    handler: async (rc) => {
      assertEnabled(rc)
      return { passkey: await renameOwnPasskey(rc.ctx, rc.session, rc.body.id, rc.body.name, rc.meta) }
    },
  }),
]
