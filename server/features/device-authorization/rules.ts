import { randomInt } from 'node:crypto'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { SessionWithUser } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { findUserById } from '../../core/users.js'
import { generateId, randomString } from '../../crypto/random.js'
import { deviceError } from './errors.js'
import type { DeviceCodeRow } from './schema.js'
import {
  claimDeviceCode,
  decideDeviceCode,
  deleteDeviceCode,
  deleteExpiredDeviceCodes,
  findByDeviceCode,
  findById,
  findByUserCode,
  insertDeviceCode,
  recordPoll,
  spendApprovedDeviceCode,
} from './store.js'
import { hostedPageIfOn } from '../../http/hosted-page-url.js'

/**
 * Device authorization (RFC 8628) as better-auth 1.7's deviceAuthorization plugin runs it:
 *
 *   device: POST /device/code → {device_code, user_code, verification_uri…}; polls POST /device/token
 *   person: opens verification_uri, types the user code; signed in, GET /device claims the request
 *           for them and shows the client; POST /device/approve or /device/deny
 *   device: the next poll gets a session token (Bearer), once.
 */

/** better-auth's user-code alphabet: no 0/O, 1/I. */
const USER_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
const DEVICE_CODE_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
const DEFAULT_USER_CODE = new RegExp(`^[${USER_CODE_ALPHABET}]+$`, 'i')
const GENERATION_ATTEMPTS = 3

export interface DeviceCodeRequest {
  clientId: string
  scope?: string
  userId?: string
}

export interface DeviceCodeAnswer {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

/** `clientIds` empty: any client (better-auth without validateClient). */
export function assertKnownClient(ctx: AuthContext, clientId: string): void {
  const { clientIds } = ctx.config().deviceAuthorization
  if (clientIds.length > 0 && !clientIds.includes(clientId)) throw deviceError(400, 'invalid_client', 'INVALID_CLIENT_ID')
}

/**
 * Where the person types the code: `verificationUri` (absolute, or relative to the base URL as
 * better-auth resolves it), else the hosted page, else better-auth's `/device`.
 */
export function verificationUris(ctx: AuthContext, userCode: string): { uri: string; complete: string } {
  const configured = ctx.config().deviceAuthorization.verificationUri ?? hostedPageIfOn(ctx, 'device') ?? '/device'
  let url: URL
  try {
    url = new URL(configured)
  } catch {
    url = new URL(configured, ctx.baseURL)
  }
  const complete = new URL(url)
  complete.searchParams.set('user_code', userCode)
  return { uri: url.toString(), complete: complete.toString() }
}

/** POST /device/code: a new pending request, its codes and where to approve it. */
export async function requestDeviceCode(ctx: AuthContext, input: DeviceCodeRequest): Promise<DeviceCodeAnswer> {
  assertKnownClient(ctx, input.clientId)
  const config = ctx.config().deviceAuthorization
  const now = ctx.clock.now()
  // Requests of devices that stopped polling: gone one lifetime after they expired (until then a
  // late poll still hears expired_token rather than invalid_grant).
  await deleteExpiredDeviceCodes(ctx, now - config.expiresIn * 1000)
  for (let attempt = 0; attempt < GENERATION_ATTEMPTS; attempt++) {
    const row: DeviceCodeRow = {
      id: generateId(),
      deviceCode: randomString(config.deviceCodeLength, DEVICE_CODE_ALPHABET),
      userCode: Array.from({ length: config.userCodeLength }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join(''),
      userId: input.userId || null,
      expiresAt: new Date(now + config.expiresIn * 1000),
      status: 'pending',
      lastPolledAt: null,
      pollingInterval: config.interval * 1000,
      clientId: input.clientId,
      scope: input.scope ?? null,
    }
    if (!(await insertDeviceCode(ctx, row))) continue
    const { uri, complete } = verificationUris(ctx, row.userCode)
    return {
      device_code: row.deviceCode,
      user_code: row.userCode,
      verification_uri: uri,
      verification_uri_complete: complete,
      expires_in: config.expiresIn,
      interval: config.interval,
    }
  }
  throw deviceError(500, 'server_error', 'CODE_GENERATION_FAILED')
}

/**
 * A user code as typed: exactly as stored, else (for codes of the default alphabet) without
 * separators and in capitals, so `abcd-efgh` finds `ABCDEFGH` (better-auth's normalisation).
 */
export async function findRequestByUserCode(ctx: AuthContext, typed: string): Promise<DeviceCodeRow | undefined> {
  const exact = await findByUserCode(ctx, typed)
  if (exact) return exact
  const normalized = typed.replace(/[^a-zA-Z0-9]/g, '').toUpperCase()
  if (normalized === typed || !DEFAULT_USER_CODE.test(normalized)) return undefined
  return findByUserCode(ctx, normalized)
}

const expired = (ctx: AuthContext, row: DeviceCodeRow): boolean => row.expiresAt.getTime() < ctx.clock.now()

export interface Verification {
  user_code: string
  status: string
  client_id?: string | null
  scope?: string | null
}

/**
 * GET /device: the state of a request by its user code. A signed-in person who opens a pending,
 * unclaimed request claims it (only they can then approve or deny it) and sees which client asks
 * and for what; anyone else sees the status only.
 */
export async function verifyUserCode(ctx: AuthContext, typed: string, current: SessionWithUser | null): Promise<Verification> {
  const row = await findRequestByUserCode(ctx, typed)
  if (!row) throw deviceError(400, 'invalid_request', 'INVALID_USER_CODE')
  if (expired(ctx, row)) throw deviceError(400, 'expired_token', 'EXPIRED_USER_CODE')
  let { userId, status } = row
  if (current && !userId && status === 'pending') {
    if (await claimDeviceCode(ctx, row.id, current.user.id)) userId = current.user.id
    else {
      // Claimed (or decided, or spent) by someone else in between.
      const now = await findById(ctx, row.id)
      if (!now) throw deviceError(400, 'invalid_request', 'INVALID_USER_CODE')
      userId = now.userId
      status = now.status
    }
  }
  const reviewer = current !== null && userId === current.user.id
  return { user_code: typed, status, ...(reviewer ? { client_id: row.clientId, scope: row.scope } : {}) }
}

/** POST /device/approve and /device/deny: the claimer's decision on a pending request. */
export async function decideRequest(
  ctx: AuthContext,
  typed: string,
  current: SessionWithUser,
  decision: 'approved' | 'denied',
  meta: RequestMeta,
): Promise<void> {
  const row = await findRequestByUserCode(ctx, typed)
  if (!row) throw deviceError(400, 'invalid_request', 'INVALID_USER_CODE')
  if (expired(ctx, row)) throw deviceError(400, 'expired_token', 'EXPIRED_USER_CODE')
  if (row.status !== 'pending') throw deviceError(400, 'invalid_request', 'DEVICE_CODE_ALREADY_PROCESSED')
  if (!row.userId) throw deviceError(400, 'invalid_request', 'DEVICE_CODE_NOT_CLAIMED')
  if (row.userId !== current.user.id)
    throw deviceError(403, 'access_denied', decision === 'approved' ? 'NOT_YOURS_TO_APPROVE' : 'NOT_YOURS_TO_DENY')
  // Approved and denied at once (two tabs): only the first decision stands.
  if (!(await decideDeviceCode(ctx, row.id, current.user.id, decision)))
    throw deviceError(400, 'invalid_request', 'DEVICE_CODE_ALREADY_PROCESSED')
  await recordAudit(ctx, {
    type: decision === 'approved' ? 'device.approved' : 'device.denied',
    actorUserId: current.user.id,
    target: row.id,
    detail: { clientId: row.clientId, ...(row.scope ? { scope: row.scope } : {}) },
    meta,
  })
}

/**
 * POST /device/token, the identification half: the polling state machine (better-auth's
 * redeemDeviceCode) up to an approved request, which becomes a sign-in attempt of the person who
 * approved it. The attempt's `commit` spends the request in the session's transaction: of two
 * polls of an approved code (on any instances), one deletes the row and gets the session, the
 * other's transaction rolls back with `invalid_grant`.
 */
export async function identifyByDeviceCode(
  ctx: AuthContext,
  input: { deviceCode: string; clientId: string },
): Promise<SignInAttempt & { secondFactor: 'satisfied' }> {
  assertKnownClient(ctx, input.clientId)
  const row = await findByDeviceCode(ctx, input.deviceCode)
  if (!row) throw deviceError(400, 'invalid_grant', 'INVALID_DEVICE_CODE')
  if (row.clientId && row.clientId !== input.clientId) throw deviceError(400, 'invalid_grant', 'CLIENT_ID_MISMATCH')
  const now = ctx.clock.now()
  if (row.lastPolledAt && row.pollingInterval && now - row.lastPolledAt.getTime() < row.pollingInterval)
    throw deviceError(400, 'slow_down', 'POLLING_TOO_FREQUENTLY')
  // Two polls at once: the one that did not record its poll was too fast as well.
  if (!(await recordPoll(ctx, row, now))) throw deviceError(400, 'slow_down', 'POLLING_TOO_FREQUENTLY')
  if (expired(ctx, row)) {
    await deleteDeviceCode(ctx, row.id)
    throw deviceError(400, 'expired_token', 'EXPIRED_DEVICE_CODE')
  }
  if (row.status === 'pending') throw deviceError(400, 'authorization_pending', 'AUTHORIZATION_PENDING')
  if (row.status === 'denied') {
    await deleteDeviceCode(ctx, row.id)
    throw deviceError(400, 'access_denied', 'ACCESS_DENIED')
  }
  if (row.status !== 'approved' || !row.userId) throw deviceError(500, 'server_error', 'INVALID_DEVICE_CODE_STATUS')
  const approver = await findUserById(ctx, row.userId)
  if (!approver) throw deviceError(500, 'server_error', 'USER_NOT_FOUND')
  return {
    user: approver,
    method: 'device-authorization',
    // The approval came from a full session of this user (a Gatehouse session exists only after
    // any enrolled second factor was passed): the device inherits it, as a consent screen would.
    secondFactor: 'satisfied',
    detail: { clientId: input.clientId, ...(row.scope ? { scope: row.scope } : {}) },
    commit: async () => {
      if (!(await spendApprovedDeviceCode(ctx, row.id, input.clientId))) throw deviceError(400, 'invalid_grant', 'INVALID_DEVICE_CODE')
    },
  }
}
