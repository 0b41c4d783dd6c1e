import { markApiKeySession } from '../../core/admission.js'
import { bannedNow } from '../../core/bans.js'
import { createHash } from 'node:crypto'
import { z } from 'zod'
import { parseRoleList, statementsGrant } from '../../core/access-control.js'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { type SessionWithUser, standInSession } from '../../core/sessions.js'
import { findUserById } from '../../core/users.js'
import { generateId, randomString } from '../../crypto/random.js'
import type { ApiKeyConfig } from './config.js'
import { apiKeyError, rateLimited } from './errors.js'
import type { ApiKeyRow } from './schema.js'
import {
  deleteExpiredKeys,
  deleteKeyRow,
  findKeyByHash,
  findKeyById,
  findOwner,
  insertKey,
  listKeysByReference,
  updateKeyRow,
  writeUsage,
} from './store.js'
import { findMembership } from '../organization/store.js'

/**
 * The rules of API keys, as @better-auth/api-key 1.7 applies them: creation (a client may set
 * only name, prefix, expiry, metadata; the server side also quota, refill, rate limit,
 * permissions, owner), owner-only reading and changes, and verification with its counters.
 */

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'

/** The plugin's default hasher: SHA-256, base64url without padding (keys stay compatible). */
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('base64url')

const permissionsSchema = z.record(z.string(), z.array(z.string()))

export const createBody = z.object({
  configId: z.string().optional(),
  name: z.string().optional(),
  expiresIn: z.number().min(1).nullable().optional().default(null),
  prefix: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+$/, { message: 'Invalid prefix format, must be alphanumeric and contain only underscores and hyphens.' })
    .optional(),
  remaining: z.number().min(0).nullable().optional().default(null),
  metadata: z.any().optional(),
  refillAmount: z.number().min(1).optional(),
  refillInterval: z.number().optional(),
  rateLimitTimeWindow: z.number().optional(),
  rateLimitMax: z.number().optional(),
  rateLimitEnabled: z.boolean().optional(),
  permissions: permissionsSchema.optional(),
  userId: z.coerce.string().optional(),
  organizationId: z.coerce.string().optional(),
})
export type CreateInput = z.output<typeof createBody>

export const updateBody = z.object({
  configId: z.string().optional(),
  keyId: z.string(),
  userId: z.coerce.string().optional(),
  name: z.string().optional(),
  enabled: z.boolean().optional(),
  remaining: z.number().min(1).optional(),
  refillAmount: z.number().optional(),
  refillInterval: z.number().optional(),
  metadata: z.any().optional(),
  expiresIn: z.number().min(1).nullable().optional(),
  rateLimitEnabled: z.boolean().optional(),
  rateLimitTimeWindow: z.number().optional(),
  rateLimitMax: z.number().optional(),
  permissions: permissionsSchema.nullable().optional(),
})
export type UpdateInput = z.output<typeof updateBody>

export const listQuery = z
  .object({
    configId: z.string().optional(),
    organizationId: z.string().optional(),
    limit: z.coerce.number().int().nonnegative().optional(),
    offset: z.coerce.number().int().nonnegative().optional(),
    sortBy: z.string().optional(),
    sortDirection: z.enum(['asc', 'desc']).optional(),
  })
  .optional()

/**
 * Who asks. A client request (HTTP, with or without a session) may not set server-only
 * properties; the server side (the control panel, as an operator) may, and names the owner.
 */
export type Caller =
  | { kind: 'client'; session: SessionWithUser | null; meta: RequestMeta }
  | { kind: 'server'; userId?: string; actorUserId?: string | null; meta?: RequestMeta | null }

const conf = (ctx: AuthContext): ApiKeyConfig => ctx.config().apiKey

const parseJSON = (text: string | null): unknown => {
  if (text === null || text === undefined) return null
  try {
    const value = JSON.parse(text)
    // better-auth once stored metadata stringified twice; read both.
    return typeof value === 'string' ? parseJSON(value) : value
  } catch {
    return null
  }
}

/** A key as the wire shows it: no hash; metadata and permissions as objects. */
export function toWire(row: ApiKeyRow) {
  const { key: _hash, ...rest } = row
  return { ...rest, metadata: parseJSON(row.metadata), permissions: parseJSON(row.permissions) }
}
export type WireApiKey = ReturnType<typeof toWire>

// Expired keys are swept at most every 10 s, as upstream does on its endpoints.
const lastSweep = new WeakMap<AuthContext['db'], number>()
async function sweepExpired(ctx: AuthContext): Promise<void> {
  const now = ctx.clock.now()
  const last = lastSweep.get(ctx.db)
  if (last !== undefined && now - last < 10_000 && now >= last) return
  lastSweep.set(ctx.db, now)
  await deleteExpiredKeys(ctx, now)
}

async function audit(
  ctx: AuthContext,
  type: string,
  caller: Caller | null,
  row: Pick<ApiKeyRow, 'id' | 'referenceId'>,
  detail?: Record<string, unknown>,
) {
  const actor = caller?.kind === 'client' ? (caller.session?.user.id ?? null) : (caller?.actorUserId ?? null)
  await recordAudit(ctx, {
    type,
    actorUserId: actor,
    targetUserId: row.referenceId,
    target: row.id,
    detail: { via: caller?.kind === 'server' ? 'panel' : 'api', ...detail },
    meta: caller?.meta ?? null,
  })
}

/** Organization-owned keys: the caller must be a member whose role may act on API keys. */
async function assertOrgPermission(
  ctx: AuthContext,
  userId: string,
  organizationId: string,
  action: 'create' | 'read' | 'update' | 'delete',
) {
  const membership = await findMembership(ctx, organizationId, userId)
  if (!membership) throw apiKeyError(403, 'USER_NOT_MEMBER_OF_ORGANIZATION')
  const orgConf = ctx.config().organization
  const roles = parseRoleList(membership.role)
  const allowed = roles.some((role) => {
    if (role === orgConf.creatorRole) return true
    const custom = Object.hasOwn(orgConf.roles, role) ? orgConf.roles[role] : undefined
    return custom !== undefined && statementsGrant(custom, { apiKey: [action] })
  })
  if (!allowed) throw apiKeyError(403, 'INSUFFICIENT_API_KEY_PERMISSIONS')
}

function checkExpiresIn(c: ApiKeyConfig, expiresIn: number): void {
  if (c.keyExpiration.disableCustomExpiresTime) throw apiKeyError(400, 'KEY_DISABLED_EXPIRATION')
  const days = expiresIn / 86_400
  if (days < c.keyExpiration.minExpiresIn) throw apiKeyError(400, 'EXPIRES_IN_IS_TOO_SMALL')
  if (days > c.keyExpiration.maxExpiresIn) throw apiKeyError(400, 'EXPIRES_IN_IS_TOO_LARGE')
}

function checkName(c: ApiKeyConfig, name: string): void {
  if (name.length < c.minimumNameLength || name.length > c.maximumNameLength) throw apiKeyError(400, 'INVALID_NAME_LENGTH')
}

/** A client (a session, not the server) may not set quotas, rate limits or permissions (better-auth's SERVER_ONLY_PROPERTY). */
function refuseServerOnlyProperties(
  input: Pick<UpdateInput, 'refillAmount' | 'refillInterval' | 'rateLimitMax' | 'rateLimitTimeWindow' | 'rateLimitEnabled' | 'permissions'>,
  setsRemaining: boolean,
): void {
  const serverOnly = [
    input.refillAmount,
    input.refillInterval,
    input.rateLimitMax,
    input.rateLimitTimeWindow,
    input.rateLimitEnabled,
    input.permissions,
  ]
  if (setsRemaining || serverOnly.some((value) => value !== undefined)) throw apiKeyError(400, 'SERVER_ONLY_PROPERTY')
}

export async function createApiKey(ctx: AuthContext, input: CreateInput, caller: Caller): Promise<WireApiKey & { key: string }> {
  const c = conf(ctx)
  const client = caller.kind === 'client'
  if (client) refuseServerOnlyProperties(input, input.remaining !== null)
  if (client && input.userId !== undefined) throw apiKeyError(401, 'UNAUTHORIZED_SESSION')
  const sessionUserId = client ? caller.session?.user.id : undefined
  let referenceId: string
  if (c.references === 'organization') {
    if (!input.organizationId) throw apiKeyError(400, 'ORGANIZATION_ID_REQUIRED')
    const userId = client ? sessionUserId : caller.userId
    if (!userId) throw apiKeyError(401, 'UNAUTHORIZED_SESSION')
    await assertOrgPermission(ctx, userId, input.organizationId, 'create')
    referenceId = input.organizationId
  } else if (client) {
    if (!sessionUserId) throw apiKeyError(401, 'UNAUTHORIZED_SESSION')
    referenceId = sessionUserId
  } else {
    const userId = caller.userId ?? input.userId
    if (!userId || !(await findUserById(ctx, userId))) throw apiKeyError(401, 'UNAUTHORIZED_SESSION')
    referenceId = userId
  }
  const { metadata, refillAmount, refillInterval, expiresIn, prefix, name } = input
  if (metadata) {
    if (!c.enableMetadata) throw apiKeyError(400, 'METADATA_DISABLED')
    if (typeof metadata !== 'object') throw apiKeyError(400, 'INVALID_METADATA_TYPE')
  }
  if (refillAmount && !refillInterval) throw apiKeyError(400, 'REFILL_AMOUNT_AND_INTERVAL_REQUIRED')
  if (refillInterval && !refillAmount) throw apiKeyError(400, 'REFILL_INTERVAL_AND_AMOUNT_REQUIRED')
  if (expiresIn) checkExpiresIn(c, expiresIn)
  if (prefix && (prefix.length < c.minimumPrefixLength || prefix.length > c.maximumPrefixLength)) {
    throw apiKeyError(400, 'INVALID_PREFIX_LENGTH')
  }
  if (name) checkName(c, name)
  else if (c.requireName) throw apiKeyError(400, 'NAME_REQUIRED')
  await sweepExpired(ctx)

  const now = ctx.clock.now()
  const usedPrefix = prefix || c.defaultPrefix
  const key = `${usedPrefix ?? ''}${randomString(c.defaultKeyLength, LETTERS)}`
  const lifetime = expiresIn ?? c.keyExpiration.defaultExpiresIn
  const row: ApiKeyRow = {
    id: generateId(),
    configId: 'default',
    name: name ?? null,
    start: c.startingCharactersConfig.shouldStore ? key.substring(0, c.startingCharactersConfig.charactersLength) : null,
    prefix: prefix ?? c.defaultPrefix ?? null,
    key: hashApiKey(key),
    referenceId,
    refillInterval: refillInterval ?? null,
    refillAmount: refillAmount ?? null,
    lastRefillAt: null,
    enabled: true,
    rateLimitEnabled: input.rateLimitEnabled ?? c.rateLimit.enabled,
    rateLimitTimeWindow: input.rateLimitTimeWindow ?? c.rateLimit.timeWindow,
    rateLimitMax: input.rateLimitMax ?? c.rateLimit.maxRequests,
    requestCount: 0,
    remaining: input.remaining === null ? (refillAmount ?? null) : input.remaining,
    lastRequest: null,
    expiresAt: lifetime ? new Date(now + lifetime * 1000) : null,
    createdAt: new Date(now),
    updatedAt: new Date(now),
    permissions: input.permissions ? JSON.stringify(input.permissions) : null,
    metadata: metadata ? JSON.stringify(metadata) : null,
  }
  await insertKey(ctx, row)
  await audit(ctx, 'api-key.created', caller, row, { name: row.name, start: row.start })
  return { ...toWire(row), key }
}

/** The key if the caller owns it (or may act on its organization), else 404 as upstream. */
async function ownedKey(ctx: AuthContext, keyId: string, userId: string, action: 'read' | 'update' | 'delete'): Promise<ApiKeyRow> {
  const row = await findKeyById(ctx, keyId)
  if (!row) throw apiKeyError(404, 'KEY_NOT_FOUND')
  if (conf(ctx).references === 'organization') await assertOrgPermission(ctx, userId, row.referenceId, action)
  else if (row.referenceId !== userId) throw apiKeyError(404, 'KEY_NOT_FOUND')
  return row
}

export async function getApiKey(ctx: AuthContext, id: string, userId: string): Promise<WireApiKey> {
  const row = await ownedKey(ctx, id, userId, 'read')
  await sweepExpired(ctx)
  return toWire(row)
}

export async function listApiKeys(ctx: AuthContext, userId: string, query: z.output<typeof listQuery>) {
  const c = conf(ctx)
  const organizationId = query?.organizationId
  if (organizationId) await assertOrgPermission(ctx, userId, organizationId, 'read')
  const expected = organizationId ? 'organization' : 'user'
  const { rows, total } =
    expected === c.references
      ? await listKeysByReference(ctx, organizationId ?? userId, {
          sortBy: query?.sortBy,
          sortDirection: query?.sortDirection,
          limit: query?.limit,
          offset: query?.offset,
        })
      : { rows: [], total: 0 }
  await sweepExpired(ctx)
  return { apiKeys: rows.map(toWire), total, limit: query?.limit, offset: query?.offset }
}

export async function updateApiKey(ctx: AuthContext, input: UpdateInput, caller: Caller): Promise<WireApiKey> {
  const c = conf(ctx)
  const client = caller.kind === 'client'
  const sessionUserId = client ? caller.session?.user.id : undefined
  const userId = client ? sessionUserId : (caller.userId ?? input.userId)
  if (!userId) throw apiKeyError(401, 'UNAUTHORIZED_SESSION')
  if (sessionUserId && input.userId && sessionUserId !== input.userId) throw apiKeyError(401, 'UNAUTHORIZED_SESSION')
  if (client) refuseServerOnlyProperties(input, input.remaining !== undefined)
  const row = await ownedKey(ctx, input.keyId, userId, 'update')
  const values: Partial<ApiKeyRow> = {}
  if (input.name !== undefined) {
    checkName(c, input.name)
    values.name = input.name
  }
  if (input.enabled !== undefined) values.enabled = input.enabled
  if (input.expiresIn !== undefined) {
    if (c.keyExpiration.disableCustomExpiresTime) throw apiKeyError(400, 'KEY_DISABLED_EXPIRATION')
    if (input.expiresIn !== null) checkExpiresIn(c, input.expiresIn)
    values.expiresAt = input.expiresIn ? new Date(ctx.clock.now() + input.expiresIn * 1000) : null
  }
  if (input.metadata !== undefined && c.enableMetadata) {
    if (typeof input.metadata !== 'object') throw apiKeyError(400, 'INVALID_METADATA_TYPE')
    values.metadata = JSON.stringify(input.metadata)
  }
  if (input.remaining !== undefined) values.remaining = input.remaining
  if (input.refillAmount !== undefined || input.refillInterval !== undefined) {
    if (input.refillAmount !== undefined && input.refillInterval === undefined)
      throw apiKeyError(400, 'REFILL_AMOUNT_AND_INTERVAL_REQUIRED')
    if (input.refillInterval !== undefined && input.refillAmount === undefined)
      throw apiKeyError(400, 'REFILL_INTERVAL_AND_AMOUNT_REQUIRED')
    values.refillAmount = input.refillAmount
    values.refillInterval = input.refillInterval
  }
  if (input.rateLimitEnabled !== undefined) values.rateLimitEnabled = input.rateLimitEnabled
  if (input.rateLimitTimeWindow !== undefined) values.rateLimitTimeWindow = input.rateLimitTimeWindow
  if (input.rateLimitMax !== undefined) values.rateLimitMax = input.rateLimitMax
  if (input.permissions !== undefined) values.permissions = input.permissions === null ? null : JSON.stringify(input.permissions)
  if (Object.keys(values).length === 0) throw apiKeyError(400, 'NO_VALUES_TO_UPDATE')
  values.updatedAt = new Date(ctx.clock.now())
  const updated = await updateKeyRow(ctx, row.id, values)
  if (!updated) throw apiKeyError(500, 'FAILED_TO_UPDATE_API_KEY')
  const changed = Object.keys(values).filter((k) => k !== 'updatedAt')
  await audit(ctx, input.enabled === false ? 'api-key.disabled' : 'api-key.updated', caller, updated, { fields: changed })
  await sweepExpired(ctx)
  return toWire(updated)
}

export async function deleteApiKey(ctx: AuthContext, keyId: string, caller: Caller): Promise<{ success: true }> {
  let row: ApiKeyRow
  if (caller.kind === 'client') {
    const session = caller.session
    if (!session) throw apiKeyError(401, 'UNAUTHORIZED_SESSION')
    if (bannedNow(session.user, ctx.clock.now())) throw apiKeyError(401, 'USER_BANNED')
    row = await ownedKey(ctx, keyId, session.user.id, 'delete')
  } else {
    const found = await findKeyById(ctx, keyId)
    if (!found) throw apiKeyError(404, 'KEY_NOT_FOUND')
    row = found
  }
  await deleteKeyRow(ctx, row.id)
  await audit(ctx, 'api-key.deleted', caller, row, { name: row.name, start: row.start })
  await sweepExpired(ctx)
  return { success: true }
}

// ---------------------------------------------------------------------------------------------
// Verification

// One audit event per key (or "unknown") and refusal code per minute: a flood of bad keys must
// not become a flood of writes.
const refusalAudits = new Map<string, number>()
function firstRefusalThisMinute(ctx: AuthContext, slot: string): boolean {
  const now = ctx.clock.now()
  const last = refusalAudits.get(slot)
  if (last !== undefined && now - last < 60_000 && now >= last) return false
  if (refusalAudits.size > 10_000) refusalAudits.clear()
  refusalAudits.set(slot, now)
  return true
}

async function auditRefusal(ctx: AuthContext, code: string, row: ApiKeyRow | undefined, meta: RequestMeta | null): Promise<void> {
  if (!firstRefusalThisMinute(ctx, `${row?.id ?? 'unknown'}:${code}`)) return
  await recordAudit(ctx, {
    type: 'api-key.refused',
    outcome: 'failure',
    targetUserId: row?.referenceId ?? null,
    target: row?.id ?? null,
    detail: { code },
    meta,
  })
}

/** A refused management request (create, read, update, delete, list): audited like a refused key. */
export async function auditManagementRefusal(
  ctx: AuthContext,
  path: string,
  code: string,
  actorUserId: string | null,
  meta: RequestMeta,
): Promise<void> {
  if (!firstRefusalThisMinute(ctx, `${actorUserId ?? meta.ipAddress ?? 'anonymous'}:${path}:${code}`)) return
  await recordAudit(ctx, { type: 'api-key.refused', outcome: 'failure', actorUserId, detail: { code, path }, meta })
}

/**
 * Verifies a key and counts its use: found, enabled, unexpired, permitted, within its quota
 * (refilled when due) and its rate limit. Synchronous from lookup to write: verifications
 * cannot interleave, so 20 parallel requests on a key with 5 uses left give exactly 5 passes.
 */
export async function verifyApiKey(
  ctx: AuthContext,
  key: string,
  options: { permissions?: Record<string, string[]>; meta?: RequestMeta | null } = {},
): Promise<ApiKeyRow> {
  // A use counted over a stale quota is not written (writeUsage): decide again from the stored
  // row. Each retry means another verification's use was written, so this ends.
  for (;;) {
    const verified = await verifyOnce(ctx, key, options)
    if (verified) return verified
  }
}

async function verifyOnce(
  ctx: AuthContext,
  key: string,
  options: { permissions?: Record<string, string[]>; meta?: RequestMeta | null },
): Promise<ApiKeyRow | null> {
  const meta = options.meta ?? null
  const row = await findKeyByHash(ctx, hashApiKey(key))
  try {
    if (!row) throw apiKeyError(401, 'INVALID_API_KEY')
    if (!row.enabled) throw apiKeyError(401, 'KEY_DISABLED')
    const now = ctx.clock.now()
    if (row.expiresAt && now > row.expiresAt.getTime()) {
      await deleteKeyRow(ctx, row.id)
      throw apiKeyError(401, 'KEY_EXPIRED')
    }
    if (options.permissions) {
      const granted = parseJSON(row.permissions) as Record<string, string[]> | null
      if (!granted || !statementsGrant(granted, options.permissions)) throw apiKeyError(401, 'KEY_NOT_FOUND')
    }
    if (row.remaining === 0 && row.refillAmount === null) {
      await deleteKeyRow(ctx, row.id)
      throw apiKeyError(429, 'USAGE_EXCEEDED')
    }
    let remaining = row.remaining
    let lastRefillAt = row.lastRefillAt
    if (remaining !== null) {
      const { refillInterval, refillAmount } = row
      if (refillInterval && refillAmount && now - (lastRefillAt ?? row.createdAt).getTime() > refillInterval) {
        remaining = refillAmount
        lastRefillAt = new Date(now)
      }
      if (remaining <= 0) throw apiKeyError(429, 'USAGE_EXCEEDED')
      remaining -= 1
    }
    let requestCount = row.requestCount
    let lastRequest = row.lastRequest
    if (!conf(ctx).rateLimit.enabled || !row.rateLimitEnabled) {
      lastRequest = new Date(now)
    } else if (row.rateLimitTimeWindow !== null && row.rateLimitMax !== null) {
      const since = lastRequest ? now - lastRequest.getTime() : null
      if (since === null || since > row.rateLimitTimeWindow) {
        requestCount = 1
      } else if (requestCount >= row.rateLimitMax) {
        throw rateLimited(Math.ceil(row.rateLimitTimeWindow - since))
      } else {
        requestCount += 1
      }
      lastRequest = new Date(now)
    }
    if (!(await writeUsage(ctx, row, { remaining, lastRefillAt, requestCount, lastRequest, updatedAt: new Date(now) }))) return null
    return row
  } catch (error) {
    if (error instanceof Error && 'code' in error) await auditRefusal(ctx, String((error as { code: unknown }).code), row, meta)
    throw error
  }
}

/** The key a request carries in the configured header(s), or null. */
export function keyFromHeaders(c: ApiKeyConfig, headers: Headers): string | null {
  const names = Array.isArray(c.apiKeyHeaders) ? c.apiKeyHeaders : [c.apiKeyHeaders]
  for (const name of names) {
    const value = headers.get(name)
    if (value) return value
  }
  return null
}

/**
 * `enableSessionForAPIKeys`: a request carrying a key acts as the key's owner. The session is
 * synthetic (never stored): its id is the key's id, as upstream.
 */
export async function sessionFromApiKey(ctx: AuthContext, headers: Headers, meta: RequestMeta): Promise<SessionWithUser | undefined> {
  const c = conf(ctx)
  if (!c.enabled || !c.enableSessionForAPIKeys) return undefined
  const key = keyFromHeaders(c, headers)
  if (!key) return undefined
  if (key.length < c.defaultKeyLength) {
    await auditRefusal(ctx, 'INVALID_API_KEY', undefined, meta)
    throw apiKeyError(403, 'INVALID_API_KEY')
  }
  const row = await verifyApiKey(ctx, key, { meta })
  const owner = c.references === 'user' ? await findOwner(ctx, row.referenceId) : undefined
  if (!owner) throw apiKeyError(401, 'INVALID_REFERENCE_ID_FROM_API_KEY')
  const now = ctx.clock.now()
  if (bannedNow(owner, now)) throw apiKeyError(401, 'USER_BANNED')
  // Marked: no face vouches for a key as the person (core/admission.ts).
  return markApiKeySession({
    user: owner,
    session: standInSession({
      id: row.id,
      token: key,
      userId: owner.id,
      userAgent: meta.userAgent,
      ipAddress: meta.ipAddress,
      createdAt: new Date(now),
      updatedAt: new Date(now),
      expiresAt: row.expiresAt ?? new Date(now + ctx.config().session.expiresIn * 1000),
    }),
  })
}
