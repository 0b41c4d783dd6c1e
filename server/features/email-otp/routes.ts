import { z } from 'zod'
import { toPublicUser } from '../../core/users.js'
import type { AuthContext } from '../../core/context.js'
import { defineRoute } from '../../http/route.js'
import { hasDontRemember, publicSession, resolveRequestSession, setSessionCacheCookie, setSessionCookies } from '../../http/session.js'
import { finishSignIn, identifying, jsonSignInAnswer } from '../../http/sign-in.js'
import { emailOTPError } from './errors.js'
import {
  changeEmailByOTP,
  checkedEmail,
  checkOTP,
  identifyByOTP,
  OTP_TYPES,
  requestEmailChange,
  resetPasswordByOTP,
  sendOTP,
  verifyEmailByOTP,
} from './service.js'

const enabled = (ctx: AuthContext) => ctx.config().emailOTP.enabled
const rateLimit = (ctx: AuthContext) => ctx.config().emailOTP.rateLimit

const emailOnly = z.object({ email: z.string() })

/** /email-otp/request-password-reset and its deprecated alias /forget-password/email-otp. */
const requestReset = (path: string) =>
  defineRoute({
    method: 'POST',
    path,
    enabled,
    rateLimit,
    body: emailOnly,
    handler: async (rc) => {
      await sendOTP(rc.ctx, checkedEmail(rc.body.email), 'forget-password', rc.meta)
      return { success: true }
    },
  })

/** better-auth's emailOTP plugin (types sign-in, email-verification, forget-password, change-email). */
export const emailOTPRoutes = [
  defineRoute({
    method: 'POST',
    path: '/email-otp/send-verification-otp',
    enabled,
    rateLimit,
    body: z.object({ email: z.string(), type: z.enum(OTP_TYPES) }),
    handler: async (rc) => {
      const email = checkedEmail(rc.body.email)
      // A change-email code is asked for at /email-otp/request-email-change, as better-auth says.
      if (rc.body.type === 'change-email') throw emailOTPError(400, 'INVALID_OTP_TYPE')
      await sendOTP(rc.ctx, email, rc.body.type, rc.meta)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/email-otp/check-verification-otp',
    enabled,
    rateLimit,
    body: z.object({ email: z.string(), type: z.enum(OTP_TYPES), otp: z.string() }),
    handler: async (rc) => {
      await checkOTP(rc.ctx, checkedEmail(rc.body.email), rc.body.type, rc.body.otp)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/email-otp/verify-email',
    enabled,
    rateLimit,
    body: z.object({ email: z.string(), otp: z.string() }),
    handler: async (rc) => {
      const verified = await verifyEmailByOTP(rc.ctx, checkedEmail(rc.body.email), rc.body.otp, rc.meta)
      if (rc.ctx.config().emailVerification.autoSignInAfterVerification) {
        const result = await finishSignIn(rc, {
          user: verified,
          method: 'email-otp',
          secondFactor: 'due',
          detail: { via: 'email-verification' },
        })
        return jsonSignInAnswer(result, (s) => ({ status: true, token: s.session.token, user: toPublicUser(s.user) }))
      }
      // The caller's own session: its cookie cache is re-issued with the verified address (better-auth's setCookieCache).
      const current = await resolveRequestSession(rc)
      if (current.status === 'active' && current.data.user.id === verified.id && rc.ctx.config().session.cookieCache.enabled) {
        setSessionCacheCookie(rc, publicSession({ session: current.data.session, user: { ...current.data.user, emailVerified: true } }))
      }
      return { status: true, token: null, user: toPublicUser(verified) }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/sign-in/email-otp',
    enabled,
    rateLimit,
    body: z.looseObject({ email: z.string(), otp: z.string(), name: z.string().optional(), image: z.string().optional() }),
    handler: async (rc) => {
      const { email, otp, name, image, ...rest } = rc.body
      const attempt = await identifying(rc.ctx, 'email-otp', () => identifyByOTP(rc.ctx, { email, otp, name, image, rest }, rc.meta))
      return jsonSignInAnswer(await finishSignIn(rc, attempt), (s) => ({ token: s.session.token, user: toPublicUser(s.user) }))
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/email-otp/request-email-change',
    auth: 'session',
    refusedWhileImpersonating: true,
    enabled,
    rateLimit,
    body: z.object({ newEmail: z.string(), otp: z.string().optional() }),
    handler: async (rc) => {
      await requestEmailChange(rc.ctx, rc.session, rc.body, rc.meta)
      return { success: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/email-otp/change-email',
    auth: 'session',
    refusedWhileImpersonating: true,
    enabled,
    rateLimit,
    body: z.object({ newEmail: z.string(), otp: z.string() }),
    handler: async (rc) => {
      const user = await changeEmailByOTP(rc.ctx, rc.session, rc.body, rc.meta)
      // better-auth's setSessionCookie with the changed user: the session cookie (and its cache) again.
      setSessionCookies(rc, { session: rc.session.session, user }, { dontRemember: hasDontRemember(rc) })
      return { success: true }
    },
  }),

  requestReset('/email-otp/request-password-reset'),
  requestReset('/forget-password/email-otp'),

  defineRoute({
    method: 'POST',
    path: '/email-otp/reset-password',
    enabled,
    rateLimit,
    body: z.object({ email: z.string(), otp: z.string(), password: z.string() }),
    handler: async (rc) => {
      await resetPasswordByOTP(rc.ctx, { email: checkedEmail(rc.body.email), otp: rc.body.otp, password: rc.body.password }, rc.meta)
      return { success: true }
    },
  }),
]
