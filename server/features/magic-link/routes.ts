import { z } from 'zod'
import { APIError } from '../../core/errors.js'
import { assertTrustedCallback } from '../../http/app.js'
import { defineRoute, redirect } from '../../http/route.js'
import { publicSession } from '../../http/session.js'
import { finishSignIn, identifying, jsonSignInAnswer, secondFactorStepURL } from '../../http/sign-in.js'
import { identifyByMagicLink, MagicLinkError, sendMagicLink } from './service.js'

const enabled = (ctx: { config(): { magicLink: { enabled: boolean } } }) => ctx.config().magicLink.enabled
const rateLimit = (ctx: { config(): { magicLink: { rateLimit: { window: number; max: number } } } }) => ctx.config().magicLink.rateLimit

const sendBody = z.object({
  email: z.email(),
  name: z.string().optional(),
  callbackURL: z.string().optional(),
  newUserCallbackURL: z.string().optional(),
  errorCallbackURL: z.string().optional(),
  metadata: z.record(z.string(), z.any()).optional(),
})

const verifyQuery = z.looseObject({
  token: z.string(),
  callbackURL: z.string().optional(),
  errorCallbackURL: z.string().optional(),
  newUserCallbackURL: z.string().optional(),
})

/** better-auth's magicLink plugin: POST /sign-in/magic-link, GET /magic-link/verify. */
export const magicLinkRoutes = [
  defineRoute({
    method: 'POST',
    path: '/sign-in/magic-link',
    enabled,
    rateLimit,
    body: sendBody,
    handler: async (rc) => {
      await sendMagicLink(rc.ctx, rc.body, rc.meta)
      return { status: true }
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/magic-link/verify',
    enabled,
    rateLimit,
    query: verifyQuery,
    handler: async (rc) => {
      const { ctx, query } = rc
      assertTrustedCallback(ctx, query.callbackURL, 'callbackURL', 'INVALID_CALLBACK_URL')
      assertTrustedCallback(ctx, query.newUserCallbackURL, 'newUserCallbackURL', 'INVALID_NEW_USER_CALLBACK_URL')
      assertTrustedCallback(ctx, query.errorCallbackURL, 'errorCallbackURL', 'INVALID_ERROR_CALLBACK_URL')
      const callbackURL = new URL(query.callbackURL || '/', ctx.baseURL).toString()
      const errorURL = (code: string, description?: string) => {
        const url = new URL(query.errorCallbackURL || callbackURL, ctx.baseURL)
        url.searchParams.set('error', code)
        if (description) url.searchParams.set('error_description', description)
        return redirect(url.toString())
      }
      try {
        const { attempt, isNewUser } = await identifying(ctx, 'magic-link', () => identifyByMagicLink(ctx, query.token, rc.meta))
        const result = await finishSignIn(rc, attempt)
        if (result.kind === 'second-factor') {
          if (!query.callbackURL) return result.answer
          const step = secondFactorStepURL(ctx, callbackURL, result.answer)
          return step ? redirect(step) : errorURL('two_factor_required')
        }
        if (!query.callbackURL) return jsonSignInAnswer(result, (s) => ({ token: s.session.token, ...publicSession(s) }))
        return redirect(isNewUser ? new URL(query.newUserCallbackURL || callbackURL, ctx.baseURL).toString() : callbackURL)
      } catch (e) {
        if (e instanceof MagicLinkError) return errorURL(e.code, e.description)
        if (e instanceof APIError) return errorURL(e.code, e.code === 'INVALID_TOKEN' ? undefined : e.message)
        throw e
      }
    },
  }),
]
