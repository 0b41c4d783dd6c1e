import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { APIError, ERR } from '../../core/errors.js'
import { createSession, deleteSession, type SessionWithUser } from '../../core/sessions.js'
import { toPublicUser } from '../../core/users.js'
import { serializeCookie, signedCookieValue } from '../../http/cookies.js'
import { defineRoute, type RouteContext } from '../../http/route.js'
import { clearSessionCookies, hasDontRemember, resolveRequestSession, setSessionCookies } from '../../http/session.js'
import { finishSignIn } from '../../http/sign-in.js'
import type { SecondFactorOutcome } from '../../feature.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { expirePluginCookie, readSignedCookie, setSignedCookie } from '../../http/plugin-cookies.js'
import { twoFactorError } from './errors.js'
import { markSessionSecondFactor } from './store.js'
import {
  consumeTrustedDevice,
  disableTwoFactor,
  enableTwoFactor,
  enrolmentOf,
  forgetOwnTrustedDevice,
  forgetOwnTrustedDevices,
  forgetTrustedDevice,
  getTotpUri,
  openChallenge,
  ownTrustedDevices,
  ownTwoFactorStatus,
  regenerateBackupCodes,
  resolveVerifier,
  sendOtp,
  trustCookieIsUsers,
  trustCookieNames,
  trustDevice,
  type Verified,
  type Verifier,
  verifyBackupCode,
  verifyOtp,
  verifyTotp,
} from './service.js'
import { recordAudit } from '../../core/audit.js'

type AnyRC = RouteContext<unknown, unknown, unknown>

export const TWO_FACTOR_COOKIE = 'two_factor'
export const TRUST_DEVICE_COOKIE = 'trust_device'

function assertEnabled(rc: AnyRC): void {
  if (!rc.ctx.config().twoFactor.enabled) throw new APIError(404, 'NOT_FOUND', ERR.NOT_FOUND)
}

/** The session if the request has one, else the sign-in challenge of the two_factor cookie (better-auth's verifyTwoFactor). */
async function verifierOf(rc: AnyRC): Promise<Verifier> {
  const resolved = await resolveRequestSession(rc)
  const current = resolved.status === 'active' ? resolved.data : null
  return await resolveVerifier(rc.ctx, current, current ? null : readSignedCookie(rc, TWO_FACTOR_COOKIE))
}

/** Re-issues the session after the user row changed (better-auth creates a new session and deletes the old). */
async function reissueSession(rc: AnyRC, current: SessionWithUser, userRow: SessionWithUser['user']): Promise<SessionWithUser> {
  const created = await createSession(rc.ctx, userRow, {
    meta: rc.meta,
    columns: { activeOrganizationId: current.session.activeOrganizationId },
  })
  await deleteSession(rc.ctx, current.session.token)
  setSessionCookies(rc, created, { dontRemember: hasDontRemember(rc) })
  return created
}

/** The answer of a verified code: a completed sign-in sets the session (and trust_device when asked). */
async function verifiedAnswer(rc: AnyRC, v: Verifier, result: Verified, trust: boolean | undefined) {
  if (result.signIn) {
    const finished = await finishSignIn(rc, result.signIn)
    // A passed second factor asks for none: the pipeline always ends with a session here.
    if (finished.kind !== 'session') throw twoFactorError(401, 'INVALID_TWO_FACTOR_COOKIE')
    expirePluginCookie(rc, TWO_FACTOR_COOKIE)
    if (trust) {
      const device = await trustDevice(rc.ctx, result.user.id, { userAgent: rc.meta.userAgent })
      setSignedCookie(rc, TRUST_DEVICE_COOKIE, device.cookieValue, device.maxAge)
      // A trusted browser keeps its session: drop the browser-session marker (as better-auth).
      expirePluginCookie(rc, 'dont_remember')
      await recordAudit(rc.ctx, { type: 'two-factor.device-trusted', actorUserId: result.user.id, meta: rc.meta })
    }
    return { token: finished.signedIn.session.token, user: toPublicUser(finished.signedIn.user), ...finished.extra }
  }
  if (v.kind !== 'session') throw twoFactorError(401, 'INVALID_TWO_FACTOR_COOKIE')
  const current = result.enabledNow ? await reissueSession(rc, v.current, result.user) : v.current
  return { token: current.session.token, user: toPublicUser(result.user) }
}

/** On a failed check of a sign-in challenge that is now void, the cookie goes too. */
async function withChallengeCookie<T>(rc: AnyRC, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (e) {
    if (e instanceof APIError && (e.code === 'TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE' || e.code === 'INVALID_TWO_FACTOR_COOKIE')) {
      if (rc.cookies.has(rc.names.sessionToken.replace(/session_token$/, TWO_FACTOR_COOKIE))) expirePluginCookie(rc, TWO_FACTOR_COOKIE)
    }
    throw e
  }
}

/** The three code checks (TOTP, mailed OTP, backup code) answer alike: a completed sign-in or the enrolment. */
function checkCode(rc: RouteContext<{ code: string; trustDevice?: boolean }, unknown, unknown>, check: typeof verifyTotp) {
  assertEnabled(rc)
  return withChallengeCookie(rc, async () => {
    const v = await verifierOf(rc)
    const result = await check(rc.ctx, v, rc.body.code, rc.meta, { rememberMe: !hasDontRemember(rc) })
    return await verifiedAnswer(rc, v, result, rc.body.trustDevice)
  })
}

const password = z.string().optional()
/** The general rule (`rateLimit.window`/`max`), for the routes that check no code. */
const generalRate = (ctx: AuthContext) => ({ window: ctx.config().rateLimit.window, max: ctx.config().rateLimit.max })
const codeBody = z.object({ code: z.string(), trustDevice: z.boolean().optional() })

export const twoFactorRoutes = [
  // Gatehouse: what the hosted account pages show (no better-auth counterpart; reads only).
  defineRoute({
    method: 'GET',
    path: '/two-factor/status',
    auth: 'session',
    handler: async (rc) => {
      assertEnabled(rc)
      rc.response.headers.set('cache-control', 'no-store')
      return await ownTwoFactorStatus(rc.ctx, rc.session.user)
    },
  }),

  // Gatehouse: the person's own trusted browsers, listed and forgotten (the hosted Two-factor page).
  // No code is checked here, so these take the general rate rule, not the feature's strict one.
  defineRoute({
    method: 'GET',
    path: '/two-factor/trusted-devices',
    auth: 'session',
    rateLimit: generalRate,
    handler: async (rc) => {
      assertEnabled(rc)
      rc.response.headers.set('cache-control', 'no-store')
      return { devices: await ownTrustedDevices(rc.ctx, rc.session.user.id, readSignedCookie(rc, TRUST_DEVICE_COOKIE)) }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/forget-trusted-device',
    auth: 'session',
    rateLimit: generalRate,
    body: z.object({ id: z.string().min(1).max(200) }),
    handler: async (rc) => {
      assertEnabled(rc)
      const identifier = await forgetOwnTrustedDevice(rc.ctx, rc.session.user.id, rc.body.id, rc.meta)
      // This browser's own trust: its cookie goes too.
      if (trustCookieNames(readSignedCookie(rc, TRUST_DEVICE_COOKIE), identifier)) expirePluginCookie(rc, TRUST_DEVICE_COOKIE)
      return { status: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/forget-trusted-devices',
    auth: 'session',
    rateLimit: generalRate,
    body: z.object({}).optional(),
    handler: async (rc) => {
      assertEnabled(rc)
      const forgotten = await forgetOwnTrustedDevices(rc.ctx, rc.session.user.id, rc.meta)
      // This browser's trust (if it is this person's) went with them: its cookie goes too.
      if (trustCookieIsUsers(rc.ctx, rc.session.user.id, readSignedCookie(rc, TRUST_DEVICE_COOKIE)))
        expirePluginCookie(rc, TRUST_DEVICE_COOKIE)
      return { status: true, forgotten }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/enable',
    auth: 'session',
    refusedWhileImpersonating: true,
    body: z.object({ password, issuer: z.string().optional(), method: z.enum(['otp', 'totp']).default('totp') }),
    handler: async (rc) => {
      assertEnabled(rc)
      const answer = await enableTwoFactor(rc.ctx, rc.session, rc.body, rc.meta)
      if (answer.method === 'otp') await reissueSession(rc, rc.session, { ...rc.session.user, twoFactorEnabled: true })
      return answer
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/disable',
    auth: 'session',
    body: z.object({ password }),
    handler: async (rc) => {
      assertEnabled(rc)
      await disableTwoFactor(rc.ctx, rc.session, rc.body.password, rc.meta)
      await reissueSession(rc, rc.session, { ...rc.session.user, twoFactorEnabled: false })
      const trusted = readSignedCookie(rc, TRUST_DEVICE_COOKIE)
      if (trusted) {
        await forgetTrustedDevice(rc.ctx, trusted)
        expirePluginCookie(rc, TRUST_DEVICE_COOKIE)
      }
      return { status: true }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/get-totp-uri',
    auth: 'session',
    refusedWhileImpersonating: true,
    body: z.object({ password }),
    handler: async (rc) => {
      assertEnabled(rc)
      return { totpURI: await getTotpUri(rc.ctx, rc.session, rc.body.password, rc.meta) }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/generate-backup-codes',
    auth: 'session',
    refusedWhileImpersonating: true,
    body: z.object({ password }),
    handler: async (rc) => {
      assertEnabled(rc)
      return { status: true, backupCodes: await regenerateBackupCodes(rc.ctx, rc.session, rc.body.password, rc.meta) }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/verify-totp',
    body: codeBody,
    handler: (rc) => checkCode(rc, verifyTotp),
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/send-otp',
    body: z.object({ trustDevice: z.boolean().optional() }).optional(),
    handler: (rc) => {
      assertEnabled(rc)
      return withChallengeCookie(rc, async () => {
        await sendOtp(rc.ctx, await verifierOf(rc), rc.meta)
        return { status: true }
      })
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/verify-otp',
    body: codeBody,
    handler: (rc) => checkCode(rc, verifyOtp),
  }),

  defineRoute({
    method: 'POST',
    path: '/two-factor/verify-backup-code',
    body: z.object({ code: z.string(), disableSession: z.boolean().optional(), trustDevice: z.boolean().optional() }),
    handler: (rc) => checkCode(rc, verifyBackupCode),
  }),
]

/**
 * The sign-in pipeline's second-factor step (better-auth's after-hook on /sign-in/email and
 * /sign-in/username, here asked by every method that is one factor): a user with two-factor on
 * gets `{twoFactorRedirect, twoFactorMethods}` and the two_factor cookie instead of a session,
 * unless the browser holds a valid trust_device cookie (rotated). Users of an enforced role
 * without a second factor are told their deadline (`twoFactorEnrollment`), and once it has passed
 * that they are overdue (`overdue: true`): their session serves the account pages to enrol, and no
 * face vouches for them until they do (core/admission.ts, faceRefusal).
 */
export async function secondFactor(rc: AnyRC, attempt: SignInAttempt): Promise<SecondFactorOutcome | undefined> {
  const { ctx } = rc
  if (!ctx.config().twoFactor.enabled) return undefined
  const userRow = attempt.user
  if (!userRow.twoFactorEnabled) {
    const rule = await enrolmentOf(ctx, userRow, true)
    if (rule.status === 'none' || rule.status === 'unstarted') return undefined
    const deadline = new Date(rule.deadline).toISOString()
    if (rule.status === 'grace') return { extra: { twoFactorEnrollment: { required: true, deadline } } }
    // Past the grace the session still opens, so the person can enrol on the hosted pages; every
    // face (OIDC, SAML, forward auth, LDAP) and the control panel refuse them until they do.
    await recordAudit(ctx, { type: 'two-factor.enrolment-required', outcome: 'failure', targetUserId: userRow.id, meta: rc.meta })
    return { extra: { twoFactorEnrollment: { required: true, deadline, overdue: true } } }
  }
  const trusted = readSignedCookie(rc, TRUST_DEVICE_COOKIE)
  const kept = await consumeTrustedDevice(ctx, userRow.id, trusted)
  if (kept) {
    const device = await trustDevice(ctx, userRow.id, { userAgent: rc.meta.userAgent, since: kept.since })
    setSignedCookie(rc, TRUST_DEVICE_COOKIE, device.cookieValue, device.maxAge)
    await recordAudit(ctx, { type: 'two-factor.trusted-device-used', actorUserId: userRow.id, meta: rc.meta })
    // A trusted browser's session counts as having passed the second factor (forward auth's rules).
    return { extra: {}, withSession: (created) => markSessionSecondFactor(ctx, created.session.id, 'trusted-device') }
  }
  if (trusted !== null || rc.cookies.has(rc.names.sessionToken.replace(/session_token$/, TRUST_DEVICE_COOKIE))) {
    expirePluginCookie(rc, TRUST_DEVICE_COOKIE)
  }
  // Any earlier session cookie goes (better-auth's deleteSessionCookie): the second step must not run as someone else.
  clearSessionCookies(rc)
  const challenge = await openChallenge(ctx, userRow, rc.meta)
  setSignedCookie(rc, TWO_FACTOR_COOKIE, challenge.id, ctx.config().twoFactor.twoFactorCookieMaxAge)
  // rememberMe=false carries over to the session the second step creates.
  if (attempt.rememberMe === false) {
    rc.response.headers.append(
      'set-cookie',
      serializeCookie(rc.names.dontRemember, signedCookieValue(ctx.secret, 'true'), rc.names.secure, undefined, rc.names.domain),
    )
  }
  return { challenge: { twoFactorRedirect: true, twoFactorMethods: challenge.methods } }
}
