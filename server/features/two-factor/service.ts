import type { AuthContext, RequestMeta } from '../../core/context.js'
import { recordAudit } from '../../core/audit.js'
import { APIError } from '../../core/errors.js'
import { deleteSession, type SessionWithUser, type UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import {
  clearPasswordFailures,
  recordPasswordFailure,
  reservePasswordAttempt,
  throttledPasswordCheck,
  secondFactorThrottleKey,
  throttleKey,
} from '../../core/throttle.js'
import { findCredentialAccount, findUserById } from '../../core/users.js'
import { verifyPassword } from '../../crypto/password.js'
import { generateId } from '../../crypto/random.js'
import { hmacBase64Url, safeEqual } from '../../crypto/sign.js'
import {
  matchTotp,
  newBackupCodes,
  newMailedCode,
  newTotpSecret,
  openBackupCodes,
  openTotpSecret,
  sealBackupCodes,
  sealTotpSecret,
  spendBackupCode,
  totpURI,
} from './codes.js'
import { twoFactorError } from './errors.js'
import { twoFactorCodeEmail } from './mail.js'
import { safeEqualStrings } from './random.js'
import {
  countTrustedDevices,
  deleteTrustedDevice,
  deleteTrustedDevices,
  deleteTwoFactor,
  dropVerification,
  findTwoFactor,
  hasPasskey,
  listTrustedDevices,
  markSessionSecondFactor,
  markTwoFactorVerified,
  putVerification,
  readVerification,
  reserveCounter,
  setBackupCodes,
  setTwoFactorEnabled,
  swapBackupCodes,
  trustDetailsId,
  upsertTwoFactor,
} from './store.js'

/**
 * The two-factor domain (better-auth's twoFactor plugin, race-safe): enrolment, the sign-in
 * challenge, code checks under two limits (attempts per challenge, failures per account through
 * the shared login throttle), trusted devices. Every check of a code runs synchronously from its
 * reservation to its outcome, so parallel requests are serialised by the event loop and SQLite.
 */

const conf = (ctx: AuthContext) => ctx.config().twoFactor
const accountKey = secondFactorThrottleKey
const attemptsId = (challengeId: string) => `2fa-attempts-${challengeId}`
const otpId = (key: string) => `2fa-otp-${key}`
const otpAttemptsId = (key: string) => `2fa-otp-attempts-${key}`
const lastStepId = (userId: string) => `2fa-totp-step-${userId}`
const graceId = (userId: string) => `2fa-enrol-grace-${userId}`

export type Method = 'totp' | 'otp' | 'backup-code'

// ---------------------------------------------------------------------------------------------
// Password-guarded management (session)

async function assertPassword(
  ctx: AuthContext,
  userRow: UserRow,
  password: string | undefined,
  meta: RequestMeta,
  action: string,
): Promise<void> {
  const credential = await findCredentialAccount(ctx, userRow.id)
  if (!credential?.password) throw twoFactorError(400, 'CREDENTIAL_ACCOUNT_NOT_FOUND')
  const hash = credential.password
  const ok = password
    ? await throttledPasswordCheck(ctx, throttleKey('email', userRow.email), meta, () => verifyPassword(hash, password), {
        targetUserId: userRow.id,
      })
    : false
  if (!ok) {
    await recordAudit(ctx, { type: action, outcome: 'failure', actorUserId: userRow.id, detail: { reason: 'INVALID_PASSWORD' }, meta })
    throw twoFactorError(400, 'INVALID_PASSWORD')
  }
}

const issuerOf = (ctx: AuthContext, issuer?: string) => issuer || conf(ctx).issuer || ctx.config().mail.appName

export type EnableAnswer = { method: 'totp'; totpURI: string; backupCodes: string[] } | { method: 'otp' }

/** POST /two-factor/enable. TOTP is pending (`verified: false`) until a first valid code; OTP is on at once. */
export async function enableTwoFactor(
  ctx: AuthContext,
  current: SessionWithUser,
  input: { password?: string; issuer?: string; method: 'totp' | 'otp' },
  meta: RequestMeta,
): Promise<EnableAnswer> {
  const userRow = current.user
  await assertPassword(ctx, userRow, input.password, meta, 'two-factor.enable')
  const c = conf(ctx)
  if (input.method === 'otp') {
    if (!c.otpOptions.enabled) throw twoFactorError(400, 'OTP_NOT_CONFIGURED')
    await setTwoFactorEnabled(ctx, userRow.id, true)
    await recordAudit(ctx, { type: 'two-factor.enabled', actorUserId: userRow.id, detail: { method: 'otp' }, meta })
    return { method: 'otp' }
  }
  if (c.totpOptions.disable) throw twoFactorError(400, 'TOTP_NOT_CONFIGURED')
  const existing = await findTwoFactor(ctx, userRow.id)
  if (existing && existing.verified !== false) throw twoFactorError(400, 'TOTP_ALREADY_ENABLED')
  const secret = newTotpSecret()
  const backupCodes = newBackupCodes(c.backupCodeOptions)
  await upsertTwoFactor(ctx, userRow.id, {
    secret: sealTotpSecret(ctx.secret, secret),
    backupCodes: sealBackupCodes(ctx.secret, backupCodes),
    verified: false,
  })
  await recordAudit(ctx, { type: 'two-factor.enrolment-started', actorUserId: userRow.id, detail: { method: 'totp' }, meta })
  return { method: 'totp', totpURI: totpURI(secret, c.totpOptions, issuerOf(ctx, input.issuer), userRow.email), backupCodes }
}

/** POST /two-factor/disable: TOTP row, trusted devices and the flag go. */
export async function disableTwoFactor(
  ctx: AuthContext,
  current: SessionWithUser,
  password: string | undefined,
  meta: RequestMeta,
): Promise<void> {
  await assertPassword(ctx, current.user, password, meta, 'two-factor.disable')
  // Whether a second factor was on (the flag, or a verified authenticator), or only an enrolment begun: the account feature's notice says "turned off" only for the former.
  const totp = await findTwoFactor(ctx, current.user.id)
  const wasEnabled = current.user.twoFactorEnabled === true || totp?.verified === true
  await removeSecondFactor(ctx, current.user.id)
  await recordAudit(ctx, { type: 'two-factor.disabled', actorUserId: current.user.id, detail: { wasEnabled }, meta })
}

/** Turns two-factor off for a user: flag, TOTP secret and backup codes, trusted devices. */
export async function removeSecondFactor(ctx: AuthContext, userId: string): Promise<{ trustedDevices: number }> {
  return ctx.storage.transaction(async () => {
    await setTwoFactorEnabled(ctx, userId, false)
    await deleteTwoFactor(ctx, userId)
    await dropVerification(ctx, lastStepId(userId))
    return { trustedDevices: await deleteTrustedDevices(ctx, userId) }
  })
}

export async function getTotpUri(
  ctx: AuthContext,
  current: SessionWithUser,
  password: string | undefined,
  meta: RequestMeta,
): Promise<string> {
  const c = conf(ctx)
  if (c.totpOptions.disable) throw twoFactorError(400, 'TOTP_NOT_CONFIGURED')
  const row = await findTwoFactor(ctx, current.user.id)
  if (!row) throw twoFactorError(400, 'TOTP_NOT_ENABLED')
  await assertPassword(ctx, current.user, password, meta, 'two-factor.get-totp-uri')
  const secret = openTotpSecret(ctx.secret, row.secret)
  if (secret === null) throw twoFactorError(400, 'TOTP_NOT_ENABLED')
  return totpURI(secret, c.totpOptions, issuerOf(ctx), current.user.email)
}

export async function regenerateBackupCodes(
  ctx: AuthContext,
  current: SessionWithUser,
  password: string | undefined,
  meta: RequestMeta,
): Promise<string[]> {
  if (!current.user.twoFactorEnabled) throw twoFactorError(400, 'TWO_FACTOR_NOT_ENABLED')
  await assertPassword(ctx, current.user, password, meta, 'two-factor.backup-codes-generated')
  const row = await findTwoFactor(ctx, current.user.id)
  if (!row) throw twoFactorError(400, 'TWO_FACTOR_NOT_ENABLED')
  const codes = newBackupCodes(conf(ctx).backupCodeOptions)
  await setBackupCodes(ctx, row.id, sealBackupCodes(ctx.secret, codes))
  await recordAudit(ctx, { type: 'two-factor.backup-codes-generated', actorUserId: current.user.id, meta })
  return codes
}

// ---------------------------------------------------------------------------------------------
// The sign-in challenge

export interface Challenge {
  id: string
  expiresAt: number
  methods: Array<'totp' | 'otp'>
}

/** Opens a challenge for a user whose password was right: a verification record (value = user id) and its attempt counter. */
export async function openChallenge(ctx: AuthContext, userRow: UserRow, meta: RequestMeta): Promise<Challenge> {
  const c = conf(ctx)
  const id = `2fa-${generateId(20)}`
  const expiresAt = ctx.clock.now() + c.twoFactorCookieMaxAge * 1000
  await putVerification(ctx, id, userRow.id, expiresAt)
  await putVerification(ctx, attemptsId(id), '0', expiresAt)
  const methods: Array<'totp' | 'otp'> = []
  const row = await findTwoFactor(ctx, userRow.id)
  if (!c.totpOptions.disable && row && row.verified !== false) methods.push('totp')
  if (c.otpOptions.enabled) methods.push('otp')
  await recordAudit(ctx, { type: 'two-factor.challenge', actorUserId: userRow.id, detail: { methods }, meta })
  return { id, expiresAt, methods }
}

/** Who is verifying: a signed-in user (enrolment, step-up) or the holder of a sign-in challenge. */
export type Verifier = { kind: 'session'; current: SessionWithUser } | { kind: 'sign-in'; challengeId: string; user: UserRow }

export async function resolveVerifier(ctx: AuthContext, current: SessionWithUser | null, challengeId: string | null): Promise<Verifier> {
  if (current) return { kind: 'session', current }
  if (!challengeId) throw twoFactorError(401, 'INVALID_TWO_FACTOR_COOKIE')
  const record = await readVerification(ctx, challengeId)
  const found = record ? await findUserById(ctx, record.value) : undefined
  if (!found) throw twoFactorError(401, 'INVALID_TWO_FACTOR_COOKIE')
  return { kind: 'sign-in', challengeId, user: found }
}

const verifierUser = (v: Verifier): UserRow => (v.kind === 'session' ? v.current.user : v.user)
/** The key mailed codes are filed under (better-auth's: the challenge id, or user!session). */
const verifierKey = (v: Verifier): string => (v.kind === 'session' ? `${v.current.user.id}!${v.current.session.id}` : v.challengeId)

/**
 * Reserves one attempt before a code is looked at: on the challenge (at most `allowedAttempts`,
 * then the challenge is void) and on the account (the login throttle: 10 failures lock second-
 * factor verification for 15 minutes by default). Throws the refusal; returns the account key.
 */
async function reserveAttempt(ctx: AuthContext, v: Verifier, method: Method, meta: RequestMeta): Promise<string> {
  const userRow = verifierUser(v)
  if (v.kind === 'sign-in') {
    const reserved = await reserveCounter(ctx, attemptsId(v.challengeId), conf(ctx).allowedAttempts)
    if (reserved === null) {
      const dropped = await dropVerification(ctx, v.challengeId)
      await dropVerification(ctx, attemptsId(v.challengeId))
      // Of concurrent requests that all found the challenge before it was void, the one that
      // removes it answers "too many attempts"; for the others it is already gone.
      if (dropped === 0) throw twoFactorError(401, 'INVALID_TWO_FACTOR_COOKIE')
      await recordAudit(ctx, {
        type: 'two-factor.verify',
        outcome: 'failure',
        targetUserId: userRow.id,
        detail: { method, reason: 'TOO_MANY_ATTEMPTS' },
        meta,
      })
      throw twoFactorError(400, 'TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE')
    }
  }
  const key = accountKey(userRow.id)
  try {
    await reservePasswordAttempt(ctx, key)
  } catch (e) {
    if (e instanceof APIError && e.status === 429) {
      await recordAudit(ctx, {
        type: 'two-factor.verify',
        outcome: 'failure',
        targetUserId: userRow.id,
        detail: { method, reason: 'LOCKED' },
        meta,
      })
      throw twoFactorError(429, 'ACCOUNT_TEMPORARILY_LOCKED', e.headers)
    }
    throw e
  }
  return key
}

async function refuse(ctx: AuthContext, v: Verifier, key: string, method: Method, meta: RequestMeta, error: APIError): Promise<APIError> {
  const userRow = verifierUser(v)
  await recordPasswordFailure(ctx, key, meta, userRow.id)
  await recordAudit(ctx, {
    type: 'two-factor.verify',
    outcome: 'failure',
    targetUserId: userRow.id,
    detail: { method, reason: error.code },
    meta,
  })
  return error
}

export interface Verified {
  user: UserRow
  /** A sign-in challenge passed: the sign-in the pipeline finishes (server/http/sign-in.ts). */
  signIn: SignInAttempt | null
  /** The session path enabled two-factor just now (the caller re-issues the session). */
  enabledNow: boolean
}

/** A code passed: clears the account count, completes enrolment or the sign-in. */
async function succeed(
  ctx: AuthContext,
  v: Verifier,
  key: string,
  method: Method,
  meta: RequestMeta,
  options: { rememberMe: boolean },
): Promise<Verified> {
  await clearPasswordFailures(ctx, key)
  const userRow = verifierUser(v)
  if (v.kind === 'session') {
    let enabledNow = false
    const row = await findTwoFactor(ctx, userRow.id)
    if (method === 'totp' && row && row.verified !== true) {
      await markTwoFactorVerified(ctx, row.id)
      if (!userRow.twoFactorEnabled) {
        await setTwoFactorEnabled(ctx, userRow.id, true)
        enabledNow = true
      }
      await recordAudit(ctx, { type: 'two-factor.enabled', actorUserId: userRow.id, detail: { method: 'totp' }, meta })
    } else if (method === 'otp' && !userRow.twoFactorEnabled) {
      await setTwoFactorEnabled(ctx, userRow.id, true)
      enabledNow = true
      await recordAudit(ctx, { type: 'two-factor.enabled', actorUserId: userRow.id, detail: { method: 'otp' }, meta })
    } else {
      await recordAudit(ctx, { type: 'two-factor.verify', actorUserId: userRow.id, detail: { method, step: 'session' }, meta })
    }
    const fresh = enabledNow ? { ...userRow, twoFactorEnabled: true } : userRow
    return { user: fresh, signIn: null, enabledNow }
  }
  // The challenge is spent with the session, once: of two parallel right answers only one gets a session.
  const challengeId = v.challengeId
  const signIn: SignInAttempt = {
    user: userRow,
    method: 'two-factor',
    secondFactor: 'passed',
    rememberMe: options.rememberMe,
    detail: { secondFactor: method },
    commit: async () => {
      if ((await dropVerification(ctx, challengeId)) !== 1) throw twoFactorError(401, 'INVALID_TWO_FACTOR_COOKIE')
      await dropVerification(ctx, attemptsId(challengeId))
    },
    audit: [{ type: 'two-factor.verify', actorUserId: userRow.id, detail: { method } }],
    // Forward auth's two-factor rules ask whether a session passed a second factor.
    withSession: (created) => markSessionSecondFactor(ctx, created.session.id, method),
  }
  return { user: userRow, signIn, enabledNow: false }
}

/** POST /two-factor/verify-totp. A code counts once: its time step must be after the last accepted one. */
export async function verifyTotp(
  ctx: AuthContext,
  v: Verifier,
  code: string,
  meta: RequestMeta,
  options: { rememberMe: boolean },
): Promise<Verified> {
  const c = conf(ctx)
  if (c.totpOptions.disable) throw twoFactorError(400, 'TOTP_NOT_CONFIGURED')
  const userRow = verifierUser(v)
  const row = await findTwoFactor(ctx, userRow.id)
  if (!row || (v.kind === 'sign-in' && row.verified === false)) throw twoFactorError(400, 'TOTP_NOT_ENABLED')
  const key = await reserveAttempt(ctx, v, 'totp', meta)
  const secret = openTotpSecret(ctx.secret, row.secret)
  const now = ctx.clock.now()
  const step = secret === null ? null : matchTotp(secret, code, now, c.totpOptions)
  const last = await readVerification(ctx, lastStepId(userRow.id))
  if (step === null || (last && step <= Number(last.value))) {
    throw await refuse(ctx, v, key, 'totp', meta, twoFactorError(401, 'INVALID_CODE'))
  }
  await dropVerification(ctx, lastStepId(userRow.id))
  // Kept until the step can no longer be presented (now + window + 1 steps).
  await putVerification(ctx, lastStepId(userRow.id), String(step), now + (c.totpOptions.window + 2) * c.totpOptions.period * 1000)
  return await succeed(ctx, v, key, 'totp', meta, options)
}

/** POST /two-factor/verify-backup-code: a code is spent by a compare-and-swap on the sealed list. */
export async function verifyBackupCode(
  ctx: AuthContext,
  v: Verifier,
  code: string,
  meta: RequestMeta,
  options: { rememberMe: boolean },
): Promise<Verified> {
  const userRow = verifierUser(v)
  const row = await findTwoFactor(ctx, userRow.id)
  if (!row) throw twoFactorError(400, 'BACKUP_CODES_NOT_ENABLED')
  const key = await reserveAttempt(ctx, v, 'backup-code', meta)
  const codes = openBackupCodes(ctx.secret, row.backupCodes)
  const left = codes ? spendBackupCode(codes, code) : null
  if (!left || !(await swapBackupCodes(ctx, row.id, row.backupCodes, sealBackupCodes(ctx.secret, left)))) {
    throw await refuse(ctx, v, key, 'backup-code', meta, twoFactorError(401, 'INVALID_BACKUP_CODE'))
  }
  await recordAudit(ctx, { type: 'two-factor.backup-code-used', actorUserId: userRow.id, detail: { remaining: left.length }, meta })
  return await succeed(ctx, v, key, 'backup-code', meta, options)
}

/** POST /two-factor/send-otp: a fresh code by mail (through the outbox), valid otpOptions.period minutes. */
export async function sendOtp(ctx: AuthContext, v: Verifier, meta: RequestMeta): Promise<void> {
  const c = conf(ctx)
  if (!c.otpOptions.enabled) throw twoFactorError(400, 'OTP_NOT_CONFIGURED')
  const userRow = verifierUser(v)
  const key = verifierKey(v)
  const code = newMailedCode(c.otpOptions.digits)
  const expiresAt = ctx.clock.now() + c.otpOptions.period * 60_000
  await ctx.storage.transaction(async () => {
    await dropVerification(ctx, otpId(key))
    await dropVerification(ctx, otpAttemptsId(key))
    await putVerification(ctx, otpId(key), hmacBase64Url(ctx.secret, `2fa-otp:${key}:${code}`), expiresAt)
    await putVerification(ctx, otpAttemptsId(key), '0', expiresAt)
  })
  await ctx.mailer.send(twoFactorCodeEmail(ctx.config().mail.appName, userRow, code, c.otpOptions.period))
  await recordAudit(ctx, { type: 'two-factor.otp-sent', actorUserId: userRow.id, meta })
}

/** POST /two-factor/verify-otp: the mailed code, at most otpOptions.allowedAttempts tries, used once. */
export async function verifyOtp(
  ctx: AuthContext,
  v: Verifier,
  code: string,
  meta: RequestMeta,
  options: { rememberMe: boolean },
): Promise<Verified> {
  const c = conf(ctx)
  const key = verifierKey(v)
  const stored = await readVerification(ctx, otpId(key))
  if (!stored) throw twoFactorError(400, 'OTP_HAS_EXPIRED')
  if ((await reserveCounter(ctx, otpAttemptsId(key), c.otpOptions.allowedAttempts)) === null) {
    await dropVerification(ctx, otpId(key))
    throw twoFactorError(400, 'TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE')
  }
  const accountKeyValue = await reserveAttempt(ctx, v, 'otp', meta)
  if (!safeEqualStrings(stored.value, hmacBase64Url(ctx.secret, `2fa-otp:${key}:${code}`))) {
    throw await refuse(ctx, v, accountKeyValue, 'otp', meta, twoFactorError(401, 'INVALID_CODE'))
  }
  await dropVerification(ctx, otpId(key))
  await dropVerification(ctx, otpAttemptsId(key))
  return await succeed(ctx, v, accountKeyValue, 'otp', meta, options)
}

// ---------------------------------------------------------------------------------------------
// Trusted devices: `hmac(user!id)!id`, backed by a verification record, rotated on every use.
// Beside it, Gatehouse keeps the browser's details (store.ts trustDetailsId): its user agent and
// since when it is trusted, so the person can see their trusted browsers and forget one.

/** What a trusted browser's details record holds. */
export interface TrustDetails {
  userAgent: string | null
  /** When the browser was first trusted (kept across rotations), epoch ms. */
  since: number
}

const parseDetails = (value: string | null): TrustDetails | null => {
  if (!value) return null
  try {
    const parsed = JSON.parse(value) as Partial<TrustDetails>
    return { userAgent: typeof parsed.userAgent === 'string' ? parsed.userAgent : null, since: Number(parsed.since) || 0 }
  } catch {
    return null
  }
}

/**
 * Trusts the browser of a request for `trustDeviceMaxAge`: the trust record, its details (the
 * browser's user agent; `since` carried over from the record a rotation replaces), the cookie value.
 */
export async function trustDevice(
  ctx: AuthContext,
  userId: string,
  details: { userAgent: string | null; since?: number },
): Promise<{ cookieValue: string; maxAge: number }> {
  const maxAge = conf(ctx).trustDeviceMaxAge
  const identifier = `trust-device-${generateId(32)}`
  const now = ctx.clock.now()
  const expiresAt = now + maxAge * 1000
  const kept: TrustDetails = { userAgent: details.userAgent?.slice(0, 512) ?? null, since: details.since ?? now }
  await ctx.storage.transaction(async () => {
    await putVerification(ctx, identifier, userId, expiresAt)
    await putVerification(ctx, trustDetailsId(identifier), JSON.stringify(kept), expiresAt)
  })
  return { cookieValue: `${hmacBase64Url(ctx.secret, `${userId}!${identifier}`)}!${identifier}`, maxAge }
}

/**
 * Whether a trust_device value is valid for this user now; if so it is spent with its details (the
 * caller sets the rotated one) and the answer is since when the browser is trusted; else null.
 */
export async function consumeTrustedDevice(ctx: AuthContext, userId: string, value: string | null): Promise<{ since: number } | null> {
  if (!value) return null
  const [token, identifier] = value.split('!')
  if (!token || !identifier?.startsWith('trust-device-')) return null
  if (!safeEqual(token, hmacBase64Url(ctx.secret, `${userId}!${identifier}`))) return null
  const record = await readVerification(ctx, identifier)
  if (!record || record.value !== userId) return null
  if ((await dropVerification(ctx, identifier)) !== 1) return null
  const details = parseDetails((await readVerification(ctx, trustDetailsId(identifier)))?.value ?? null)
  await dropVerification(ctx, trustDetailsId(identifier))
  return { since: details?.since || record.createdAt.getTime() }
}

/** The trust record a trust_device cookie value names (its identifier), whoever it belongs to. */
const trustIdentifierOf = (value: string | null): string | null => {
  const identifier = value?.split('!')[1]
  return identifier?.startsWith('trust-device-') ? identifier : null
}

/** Ends a trusted device named by its cookie value (sign-out of trust, disable). */
export async function forgetTrustedDevice(ctx: AuthContext, value: string | null): Promise<void> {
  const identifier = trustIdentifierOf(value)
  if (identifier) {
    await dropVerification(ctx, identifier)
    await dropVerification(ctx, trustDetailsId(identifier))
  }
}

/** One trusted browser as `GET /two-factor/trusted-devices` lists it. */
export interface TrustedDeviceView {
  id: string
  userAgent: string | null
  /** When the browser was first trusted. */
  trustedAt: string
  /** When it last skipped the code (the trust was renewed then). */
  lastUsedAt: string
  /** Until when no code is asked on it (each use renews it). */
  expiresAt: string
  /** The browser of this request. */
  current: boolean
}

/** GET /two-factor/trusted-devices (Gatehouse): the signed-in person's own trusted browsers, most recently used first. */
export async function ownTrustedDevices(ctx: AuthContext, userId: string, cookieValue: string | null): Promise<TrustedDeviceView[]> {
  const mine = trustIdentifierOf(cookieValue)
  return (await listTrustedDevices(ctx, userId)).map((row) => {
    const details = parseDetails(row.details)
    return {
      id: row.id,
      userAgent: details?.userAgent ?? null,
      trustedAt: new Date(details?.since || row.createdAt.getTime()).toISOString(),
      lastUsedAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
      current: row.identifier === mine,
    }
  })
}

/**
 * POST /two-factor/forget-trusted-device (Gatehouse): the person forgets one of their own trusted
 * browsers (by the id the list gave); its next sign-in asks for a code. Returns the trust record's
 * identifier (so the route can tell whether it was this browser's), or throws 404 when no trusted
 * browser of theirs has that id.
 */
export async function forgetOwnTrustedDevice(ctx: AuthContext, userId: string, id: string, meta: RequestMeta): Promise<string> {
  const identifier = await deleteTrustedDevice(ctx, userId, id)
  if (identifier === null) throw twoFactorError(404, 'TRUSTED_DEVICE_NOT_FOUND')
  await recordAudit(ctx, { type: 'two-factor.trusted-device-forgotten', actorUserId: userId, detail: { count: 1 }, meta })
  return identifier
}

/** POST /two-factor/forget-trusted-devices (Gatehouse): every trusted browser of the person is forgotten. */
export async function forgetOwnTrustedDevices(ctx: AuthContext, userId: string, meta: RequestMeta): Promise<number> {
  const count = await deleteTrustedDevices(ctx, userId)
  await recordAudit(ctx, { type: 'two-factor.trusted-device-forgotten', actorUserId: userId, detail: { count, all: true }, meta })
  return count
}

/** Whether a trust_device cookie value names the trust record `identifier`. */
export const trustCookieNames = (value: string | null, identifier: string): boolean => trustIdentifierOf(value) === identifier

/** Whether a trust_device cookie value was issued to this user (its signature), valid or not. */
export function trustCookieIsUsers(ctx: AuthContext, userId: string, value: string | null): boolean {
  const [token] = value?.split('!') ?? []
  const identifier = trustIdentifierOf(value)
  return Boolean(token && identifier && safeEqual(token, hmacBase64Url(ctx.secret, `${userId}!${identifier}`)))
}

// ---------------------------------------------------------------------------------------------
// Enforcement (Gatehouse): roles that must have a second factor, with an enrolment grace period.

/**
 * Where a person stands with the enforcement rule, the one answer every caller reads (the sign-in
 * step, the faces' admission, `GET /two-factor/status` and so the hosted pages' enrolment step):
 * - `none`: no rule names their roles (or two-factor is off), or they have a second factor (TOTP
 *   on, or a passkey);
 * - `unstarted`: enrolment is required but their grace has not started (it starts at a sign-in);
 * - `grace`: enrolment is required and may still be put off until `deadline`;
 * - `overdue`: the grace ended at `deadline`; every face refuses them until they enrol.
 */
export type Enrolment =
  | { status: 'none' }
  | { status: 'unstarted' }
  | { status: 'grace'; deadline: number }
  | { status: 'overdue'; deadline: number }

/** Whether the enforcement rule names one of the person's roles (two-factor on, rule not empty). */
function enforcedRole(ctx: AuthContext, userRow: UserRow): boolean {
  const rule = conf(ctx).enforcement
  if (!conf(ctx).enabled || rule.roles.length === 0) return false
  const roles = (userRow.role ?? '').split(',').map((r) => r.trim())
  return roles.some((r) => rule.roles.includes(r))
}

/**
 * The enforcement rule for one person. With `start`, a required enrolment whose grace has not
 * started starts it now (a sign-in); without, it only reads.
 */
export async function enrolmentOf(ctx: AuthContext, userRow: UserRow, start: boolean): Promise<Enrolment> {
  if (!enforcedRole(ctx, userRow) || userRow.twoFactorEnabled) return { status: 'none' }
  if (await hasPasskey(ctx, userRow.id)) return { status: 'none' }
  const now = ctx.clock.now()
  let deadline = await graceDeadline(ctx, userRow.id)
  if (deadline === null) {
    if (!start) return { status: 'unstarted' }
    const until = now + conf(ctx).enforcement.gracePeriod * 1000
    // Kept well past the deadline, so an expired grace is not restarted by the cleanup.
    await putVerification(ctx, graceId(userRow.id), String(until), until + 3650 * 86_400_000)
    deadline = (await graceDeadline(ctx, userRow.id)) ?? now
  }
  return deadline > now ? { status: 'grace', deadline } : { status: 'overdue', deadline }
}

/**
 * A face's question (core/admission.ts): is this person of an enforced role, without a second
 * factor, past their enrolment deadline? Starts no grace period (a sign-in does): a person whose
 * grace has not started is not overdue. Synchronous (null) when no enforcement rule names their roles.
 */
export function enrolmentOverdue(ctx: AuthContext, userRow: UserRow): null | Promise<'TWO_FACTOR_ENROLLMENT_REQUIRED' | null> {
  if (!enforcedRole(ctx, userRow) || userRow.twoFactorEnabled) return null
  return enrolmentOf(ctx, userRow, false).then((e) => (e.status === 'overdue' ? 'TWO_FACTOR_ENROLLMENT_REQUIRED' : null))
}

/** The deadline of a user's enrolment grace, if one started. */
export async function graceDeadline(ctx: AuthContext, userId: string): Promise<number | null> {
  const record = await readVerification(ctx, graceId(userId))
  return record ? Number(record.value) : null
}

/** An administrator restarts a user's grace period (it starts again at their next sign-in). */
export async function resetGrace(ctx: AuthContext, userId: string): Promise<void> {
  await dropVerification(ctx, graceId(userId))
}

/**
 * GET /two-factor/status (Gatehouse; the hosted account pages): what protects the signed-in
 * person's own account on this feature's side: two-factor on, the authenticator app (none, pending
 * confirmation, verified), backup codes left, trusted browsers, and the enrolment a role requires
 * (its deadline while the grace runs). Reads only: the grace starts at a sign-in, not here.
 */
export async function ownTwoFactorStatus(ctx: AuthContext, userRow: UserRow) {
  const row = await findTwoFactor(ctx, userRow.id)
  const codes = row ? openBackupCodes(ctx.secret, row.backupCodes) : null
  const enrolment = await enrolmentOf(ctx, userRow, false)
  const deadline = enrolment.status === 'grace' || enrolment.status === 'overdue' ? enrolment.deadline : null
  return {
    enabled: Boolean(userRow.twoFactorEnabled),
    totp: !row ? ('none' as const) : row.verified === false ? ('pending' as const) : ('verified' as const),
    backupCodesLeft: codes && row?.verified !== false ? codes.length : null,
    trustedDevices: await countTrustedDevices(ctx, userRow.id),
    enrolmentRequired: enrolment.status !== 'none',
    enrolmentDeadline: deadline === null ? null : new Date(deadline).toISOString(),
    /** The grace is over: no face vouches for this person until they enrol (the hosted enrolment step offers no skip). */
    enrolmentOverdue: enrolment.status === 'overdue',
    otp: conf(ctx).otpOptions.enabled,
    totpAvailable: !conf(ctx).totpOptions.disable,
  }
}

export { deleteSession, findUserById }
