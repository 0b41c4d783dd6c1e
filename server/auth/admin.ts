import { and, asc, count, desc, eq, gt, gte, inArray, lt, lte, ne, notInArray, type SQL, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { hashPassword } from '../crypto/password.js'
import { session, user } from '../db/schema.js'
import { passwordChangedNotice } from '../mail/templates.js'
import {
  hasPermission,
  isAdministrator,
  joinRoles,
  knownRoles,
  type PermissionRequest,
  type SessionAction,
  type UserAction,
} from './access.js'
import { generateId } from '../crypto/random.js'
import { recordAudit } from './audit.js'
import type { AuthContext, RequestMeta } from './context.js'
import { APIError } from './errors.js'
import { createSession, findSessionByToken, type SessionRow, type SessionWithUser, type UserRow } from './sessions.js'
import { isUsernameConflict, readUsernameFields, usernameError } from './username.js'
import {
  assertPasswordLength,
  assertValidEmail,
  deleteUserRows,
  findUserByEmail,
  findUserById,
  insertUser,
  normalizeEmail,
  readAdditionalFields,
  storeCredentialPassword,
} from './users.js'
import { consumeVerification, createVerification } from './verification.js'

/**
 * Administrator user management (SPEC §4 Ban/Impersonation, §5 Admin, §6, §7 Admin, §8 Admin).
 * The HTTP endpoints and the control panel call these same functions; each checks the actor's
 * permission itself, so the rule lives here once. Every change appends an audit event.
 */

/** Who performs an admin action: a signed-in user (HTTP), or the operator (control panel, CLI). */
export type Actor = { kind: 'user'; user: UserRow } | { kind: 'system'; via: 'panel' | 'cli' }

export const userActor = (row: UserRow): Actor => ({ kind: 'user', user: row })
export const systemActor = (via: 'panel' | 'cli'): Actor => ({ kind: 'system', via })

const actorId = (actor: Actor): string | null => (actor.kind === 'user' ? actor.user.id : null)

/** The admin messages of SPEC §8, with current better-auth's codes. */
export const ADMIN_ERR = {
  FAILED_TO_CREATE_USER: 'Failed to create user',
  USER_ALREADY_EXISTS: 'User already exists',
  YOU_CANNOT_BAN_YOURSELF: 'You cannot ban yourself',
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: 'You are not allowed to change users role',
  YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS: 'You are not allowed to create users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS: 'You are not allowed to list users',
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS: 'You are not allowed to list users sessions',
  YOU_ARE_NOT_ALLOWED_TO_BAN_USERS: 'You are not allowed to ban users',
  YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS: 'You are not allowed to impersonate users',
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS: 'You are not allowed to revoke users sessions',
  YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS: 'You are not allowed to delete users',
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD: 'You are not allowed to set users password',
  YOU_ARE_NOT_ALLOWED_TO_GET_USER: 'You are not allowed to get user',
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS: 'You are not allowed to update users',
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL: 'You are not allowed to update users email',
  YOU_CANNOT_REMOVE_YOURSELF: 'You cannot remove yourself',
  YOU_CANNOT_IMPERSONATE_ADMINS: 'You cannot impersonate admins',
  YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE: 'You are not allowed to set a non-existent role value',
  NO_DATA_TO_UPDATE: 'No data to update',
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER:
    'Password cannot be updated through update-user. Use the set-user-password endpoint instead',
  USER_ID_CANNOT_BE_UPDATED: 'User id cannot be updated',
  YOU_ARE_NOT_IMPERSONATING_ANYONE: 'You are not impersonating anyone',
  FAILED_TO_FIND_USER: 'Failed to find user',
  FAILED_TO_FIND_ADMIN_SESSION: 'Failed to find admin session',
  USER_NOT_FOUND: 'User not found',
  INVALID_PERMISSION_CHECK: 'invalid permission check. no permission(s) were passed.',
} as const

export type AdminErrorKey = keyof typeof ADMIN_ERR

const CODE_OVERRIDES: Partial<Record<AdminErrorKey, string>> = {
  INVALID_PERMISSION_CHECK: 'INVALID_PERMISSION_CHECK_NO_PERMISSIONS_WERE_PASSED',
}

export const adminError = (status: 400 | 403 | 404 | 500, key: AdminErrorKey): APIError =>
  new APIError(status, CODE_OVERRIDES[key] ?? key, ADMIN_ERR[key])

type Permission = ['user', UserAction] | ['session', SessionAction]

/** Whether the actor holds one permission. The operator (panel, CLI) holds them all. */
export function actorMay(ctx: AuthContext, actor: Actor, [resource, action]: Permission): boolean {
  if (actor.kind === 'system') return true
  return hasPermission(ctx.config(), { userId: actor.user.id, role: actor.user.role }, { [resource]: [action] })
}

interface AuditContext {
  type: string
  meta: RequestMeta | null
}

async function audit(
  ctx: AuthContext,
  actor: Actor,
  event: AuditContext,
  fields: { targetUserId?: string | null; target?: string | null; detail?: Record<string, unknown>; outcome?: 'success' | 'failure' },
): Promise<void> {
  await recordAudit(ctx, {
    type: event.type,
    outcome: fields.outcome ?? 'success',
    actorUserId: actorId(actor),
    targetUserId: fields.targetUserId ?? null,
    target: fields.target ?? null,
    detail: { ...(actor.kind === 'system' ? { via: actor.via } : {}), ...fields.detail },
    meta: event.meta,
  })
}

/** Refuses (403 with the endpoint's message) and records the refusal. */
async function authorize(
  ctx: AuthContext,
  actor: Actor,
  permission: Permission,
  denied: AdminErrorKey,
  event: AuditContext,
  targetUserId: string | null = null,
): Promise<void> {
  if (actorMay(ctx, actor, permission)) return
  await audit(ctx, actor, event, { outcome: 'failure', targetUserId, detail: { reason: denied } })
  throw adminError(403, denied)
}

async function requireUser(ctx: AuthContext, userId: string): Promise<UserRow> {
  const found = await findUserById(ctx, userId)
  if (!found) throw adminError(404, 'USER_NOT_FOUND')
  return found
}

/** Only roles this configuration defines may be given (current better-auth's rule). */
function assertKnownRoles(ctx: AuthContext, role: string | readonly string[]): string {
  const roles = knownRoles(ctx.config())
  const list = typeof role === 'string' ? [role] : role
  if (list.length === 0) throw adminError(400, 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE')
  for (const name of list) {
    if (!Object.hasOwn(roles, name.trim())) throw adminError(400, 'YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE')
  }
  return joinRoles(list)
}

const banState = (row: UserRow) => ({
  banned: Boolean(row.banned),
  banReason: row.banReason,
  banExpires: row.banExpires?.toISOString() ?? null,
})


function updateUserRow(ctx: AuthContext, userId: string, patch: Partial<UserRow>): UserRow {
  const updated = ctx.db
    .update(user)
    .set({ ...patch, updatedAt: new Date(ctx.clock.now()) })
    .where(eq(user.id, userId))
    .returning()
    .get()
  if (!updated) throw adminError(404, 'USER_NOT_FOUND')
  return updated
}

// ---------------------------------------------------------------------------------------------
// create-user

export interface CreateUserInput {
  email: string
  password?: string
  name: string
  role?: string | string[]
  /** Extra columns: emailVerified, image, username, displayUsername and configured additional fields. */
  data?: Record<string, unknown>
}

export async function createUser(ctx: AuthContext, actor: Actor, input: CreateUserInput, meta: RequestMeta | null): Promise<UserRow> {
  const event = { type: 'admin.create-user', meta }
  await authorize(ctx, actor, ['user', 'create'], 'YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS', event)
  const { role: dataRole, banned: _b, banReason: _r, banExpires: _e, ...data } = input.data ?? {}
  const requestedRole = input.role ?? (typeof dataRole === 'string' || Array.isArray(dataRole) ? (dataRole as string | string[]) : undefined)
  let role: string | undefined
  if (requestedRole !== undefined) {
    await authorize(ctx, actor, ['user', 'set-role'], 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE', event)
    role = assertKnownRoles(ctx, requestedRole)
  }
  assertValidEmail(input.email)
  if (input.password !== undefined) assertPasswordLength(ctx, input.password)
  const usernameFields = readUsernameFields(ctx, data, { mode: 'create' })
  const { username: _u, displayUsername: _d, emailVerified, image, ...rest } = data
  const additionalFields = readAdditionalFields(ctx, rest, 'create')
  if (await findUserByEmail(ctx, input.email)) {
    await audit(ctx, actor, event, { outcome: 'failure', detail: { reason: 'USER_ALREADY_EXISTS', email: normalizeEmail(input.email) } })
    throw adminError(400, 'USER_ALREADY_EXISTS')
  }
  const hash = input.password !== undefined ? await hashPassword(input.password) : null
  let created: UserRow
  try {
    created = await insertUser(
      ctx,
      {
        name: input.name,
        email: input.email,
        role,
        emailVerified: typeof emailVerified === 'boolean' ? emailVerified : false,
        image: typeof image === 'string' ? image : null,
        ...usernameFields,
        additionalFields,
      },
      hash,
    )
  } catch (e) {
    // Lost a race with another creation of the same email.
    if (e instanceof APIError && e.code === 'USER_ALREADY_EXISTS') throw adminError(400, 'USER_ALREADY_EXISTS')
    throw e
  }
  await audit(ctx, actor, event, {
    targetUserId: created.id,
    detail: { email: created.email, role: created.role, credential: hash !== null },
  })
  return created
}

// ---------------------------------------------------------------------------------------------
// set-role

export async function setRole(
  ctx: AuthContext,
  actor: Actor,
  input: { userId: string; role: string | readonly string[] },
  meta: RequestMeta | null,
): Promise<UserRow> {
  const event = { type: 'admin.set-role', meta }
  await authorize(ctx, actor, ['user', 'set-role'], 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE', event, input.userId)
  const role = assertKnownRoles(ctx, input.role)
  return ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, input.userId)
    const updated = updateUserRow(ctx, input.userId, { role })
    await audit(ctx, actor, event, { targetUserId: updated.id, detail: { before: { role: before.role }, after: { role } } })
    return updated
  })
}

// ---------------------------------------------------------------------------------------------
// get-user / update-user

export async function getUser(ctx: AuthContext, actor: Actor, userId: string): Promise<UserRow> {
  await authorize(ctx, actor, ['user', 'get'], 'YOU_ARE_NOT_ALLOWED_TO_GET_USER', { type: 'admin.get-user', meta: null }, userId)
  return await requireUser(ctx, userId)
}

/**
 * POST /admin/update-user (current better-auth): changes any profile column. Role changes need
 * set-role, ban fields need ban (and may not ban oneself), email fields need set-email.
 */
export async function adminUpdateUser(
  ctx: AuthContext,
  actor: Actor,
  input: { userId: string; data: Record<string, unknown> },
  meta: RequestMeta | null,
): Promise<UserRow> {
  const event = { type: 'admin.update-user', meta }
  await authorize(ctx, actor, ['user', 'update'], 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS', event, input.userId)
  const data = input.data
  const has = (key: string) => Object.hasOwn(data, key)
  if (Object.keys(data).length === 0) throw adminError(400, 'NO_DATA_TO_UPDATE')
  if (has('password')) throw adminError(400, 'PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER')
  if (has('id')) throw adminError(400, 'USER_ID_CANNOT_BE_UPDATED')
  const patch: Partial<UserRow> = {}
  if (has('role')) {
    await authorize(ctx, actor, ['user', 'set-role'], 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE', event, input.userId)
    const value = data.role
    if (typeof value !== 'string' && !(Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
      throw new APIError(400, 'INVALID_ROLE_TYPE', 'Invalid role type')
    }
    patch.role = assertKnownRoles(ctx, value as string | string[])
  }
  if (has('banned') || has('banReason') || has('banExpires')) {
    await authorize(ctx, actor, ['user', 'ban'], 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS', event, input.userId)
    if (data.banned === true && actorId(actor) === input.userId) throw adminError(400, 'YOU_CANNOT_BAN_YOURSELF')
    if (has('banned')) patch.banned = data.banned === true
    if (has('banReason')) patch.banReason = typeof data.banReason === 'string' ? data.banReason : null
    if (has('banExpires')) {
      const when = data.banExpires === null ? null : new Date(data.banExpires as string | number)
      if (when && Number.isNaN(when.getTime())) throw new APIError(400, 'VALIDATION_ERROR', '[body.data.banExpires] Invalid date')
      patch.banExpires = when
    }
  }
  if (has('email') || has('emailVerified')) {
    await authorize(ctx, actor, ['user', 'set-email'], 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL', event, input.userId)
    if (has('email')) {
      const email = String(data.email)
      assertValidEmail(email)
      const holder = await findUserByEmail(ctx, email)
      if (holder && holder.id !== input.userId) throw adminError(400, 'USER_ALREADY_EXISTS')
      patch.email = normalizeEmail(email)
    }
    if (has('emailVerified')) patch.emailVerified = data.emailVerified === true
  }
  if (has('name')) {
    if (typeof data.name !== 'string') throw new APIError(400, 'VALIDATION_ERROR', '[body.data.name] Invalid input: expected string')
    patch.name = data.name
  }
  if (has('image')) patch.image = typeof data.image === 'string' ? data.image : null
  Object.assign(patch, readUsernameFields(ctx, data, { mode: 'update', currentUserId: input.userId }))
  const known = new Set(['role', 'banned', 'banReason', 'banExpires', 'email', 'emailVerified', 'name', 'image', 'username', 'displayUsername'])
  const extra = Object.fromEntries(Object.entries(data).filter(([k]) => !known.has(k)))
  const additional = readAdditionalFields(ctx, extra, 'update')
  try {
    return await ctx.storage.transaction(async () => {
      const before = await requireUser(ctx, input.userId)
      if (Object.keys(additional).length > 0) patch.additionalFields = { ...before.additionalFields, ...additional }
      const updated = updateUserRow(ctx, input.userId, patch)
      if (patch.banned === true) ctx.db.delete(session).where(eq(session.userId, input.userId)).run()
      const changed = Object.keys(patch)
      const pick = (row: UserRow) =>
        Object.fromEntries(changed.map((k) => [k, k === 'banExpires' ? (row.banExpires?.toISOString() ?? null) : row[k as keyof UserRow]]))
      await audit(ctx, actor, event, { targetUserId: updated.id, detail: { before: pick(before), after: pick(updated) } })
      return updated
    })
  } catch (e) {
    if (isUsernameConflict(e)) throw usernameError(422, 'USERNAME_IS_ALREADY_TAKEN')
    if (e instanceof Error && /UNIQUE constraint failed: user\.email/.test(e.message)) throw adminError(400, 'USER_ALREADY_EXISTS')
    throw e
  }
}

/** The control panel's "mark email verified" (and its reverse). */
export async function setEmailVerified(ctx: AuthContext, actor: Actor, userId: string, verified: boolean, meta: RequestMeta | null): Promise<UserRow> {
  const event = { type: 'admin.set-email-verified', meta }
  await authorize(ctx, actor, ['user', 'set-email'], 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL', event, userId)
  return ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, userId)
    const updated = updateUserRow(ctx, userId, { emailVerified: verified })
    await audit(ctx, actor, event, {
      targetUserId: userId,
      detail: { before: { emailVerified: before.emailVerified }, after: { emailVerified: verified } },
    })
    return updated
  })
}

// ---------------------------------------------------------------------------------------------
// bans

export interface BanInput {
  userId: string
  banReason?: string
  /** Seconds until the ban lifts by itself. */
  banExpiresIn?: number
}

/** Bans a user and deletes every session of theirs, in one transaction (SPEC §4 Ban). */
export async function banUser(ctx: AuthContext, actor: Actor, input: BanInput, meta: RequestMeta | null): Promise<UserRow> {
  const event = { type: 'admin.ban-user', meta }
  await authorize(ctx, actor, ['user', 'ban'], 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS', event, input.userId)
  const conf = ctx.config().admin
  return ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, input.userId)
    if (actorId(actor) === input.userId) {
      await audit(ctx, actor, event, { outcome: 'failure', targetUserId: input.userId, detail: { reason: 'YOU_CANNOT_BAN_YOURSELF' } })
      throw adminError(400, 'YOU_CANNOT_BAN_YOURSELF')
    }
    const expiresIn = input.banExpiresIn ?? conf.defaultBanExpiresIn
    const updated = updateUserRow(ctx, input.userId, {
      banned: true,
      banReason: input.banReason || conf.defaultBanReason,
      banExpires: expiresIn ? new Date(ctx.clock.now() + expiresIn * 1000) : null,
    })
    const revoked = ctx.db.delete(session).where(eq(session.userId, input.userId)).run().changes
    await audit(ctx, actor, event, {
      targetUserId: input.userId,
      detail: { before: banState(before), after: banState(updated), sessionsRevoked: revoked },
    })
    return updated
  })
}

export async function unbanUser(ctx: AuthContext, actor: Actor, input: { userId: string }, meta: RequestMeta | null): Promise<UserRow> {
  const event = { type: 'admin.unban-user', meta }
  await authorize(ctx, actor, ['user', 'ban'], 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS', event, input.userId)
  return ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, input.userId)
    const updated = updateUserRow(ctx, input.userId, { banned: false, banReason: null, banExpires: null })
    await audit(ctx, actor, event, { targetUserId: input.userId, detail: { before: banState(before), after: banState(updated) } })
    return updated
  })
}

// ---------------------------------------------------------------------------------------------
// sessions

/** The user's unexpired sessions, impersonation sessions included (an admin should see them). */
export async function listSessionsOfUser(ctx: AuthContext, actor: Actor, userId: string): Promise<SessionRow[]> {
  await authorize(ctx, actor, ['session', 'list'], 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS', { type: 'admin.list-user-sessions', meta: null }, userId)
  return ctx.db
    .select()
    .from(session)
    .where(and(eq(session.userId, userId), gt(session.expiresAt, new Date(ctx.clock.now()))))
    .orderBy(asc(session.createdAt))
    .all()
}

/** Revokes one session by token; unknown tokens succeed too (better-auth). */
export async function revokeUserSession(ctx: AuthContext, actor: Actor, sessionToken: string, meta: RequestMeta | null): Promise<void> {
  const event = { type: 'admin.revoke-user-session', meta }
  await authorize(ctx, actor, ['session', 'revoke'], 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS', event)
  const removed = ctx.db.delete(session).where(eq(session.token, sessionToken)).returning({ id: session.id, userId: session.userId }).get()
  await audit(ctx, actor, event, { targetUserId: removed?.userId ?? null, target: removed?.id ?? null, detail: { found: Boolean(removed) } })
}

export async function revokeUserSessions(ctx: AuthContext, actor: Actor, userId: string, meta: RequestMeta | null): Promise<number> {
  const event = { type: 'admin.revoke-user-sessions', meta }
  await authorize(ctx, actor, ['session', 'revoke'], 'YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS', event, userId)
  const revoked = ctx.db.delete(session).where(eq(session.userId, userId)).run().changes
  await audit(ctx, actor, event, { targetUserId: userId, detail: { count: revoked } })
  return revoked
}

// ---------------------------------------------------------------------------------------------
// remove-user, set-user-password

/** Deletes the user with their sessions and accounts (SPEC §7). Removing oneself is refused. */
export async function removeUser(ctx: AuthContext, actor: Actor, userId: string, meta: RequestMeta | null): Promise<void> {
  const event = { type: 'admin.remove-user', meta }
  await authorize(ctx, actor, ['user', 'delete'], 'YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS', event, userId)
  if (actorId(actor) === userId) throw adminError(400, 'YOU_CANNOT_REMOVE_YOURSELF')
  await ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, userId)
    deleteUserRows(ctx, userId)
    await audit(ctx, actor, event, {
      targetUserId: userId,
      detail: { before: { email: before.email, name: before.name, role: before.role, username: before.username } },
    })
  })
}

/** Sets a user's password, creating the credential account if the user had none. */
export async function setUserPassword(
  ctx: AuthContext,
  actor: Actor,
  input: { userId: string; newPassword: string },
  meta: RequestMeta | null,
): Promise<void> {
  const event = { type: 'admin.set-user-password', meta }
  await authorize(ctx, actor, ['user', 'set-password'], 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD', event, input.userId)
  assertPasswordLength(ctx, input.newPassword)
  await requireUser(ctx, input.userId)
  const hash = await hashPassword(input.newPassword)
  await ctx.storage.transaction(async () => {
    const target = await requireUser(ctx, input.userId)
    const { created } = storeCredentialPassword(ctx, target.id, hash)
    await audit(ctx, actor, event, { targetUserId: target.id, detail: { createdCredential: created } })
    ctx.mailer.send(passwordChangedNotice(ctx.config().mail.appName, target, new Date(ctx.clock.now()), 'set-by-admin'))
  })
}

// ---------------------------------------------------------------------------------------------
// impersonation

/**
 * Starts impersonating: a session of the target marked impersonatedBy the admin, lasting
 * `impersonationSessionDuration` seconds (SPEC §4). Impersonating an administrator needs the
 * `impersonate-admins` permission, which the built-in admin role does not have.
 */
export async function impersonateUser(
  ctx: AuthContext,
  admin: SessionWithUser,
  input: { userId: string },
  meta: RequestMeta,
): Promise<SessionWithUser> {
  const actor = userActor(admin.user)
  const event = { type: 'admin.impersonate-user', meta }
  await authorize(ctx, actor, ['user', 'impersonate'], 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS', event, input.userId)
  const target = await requireUser(ctx, input.userId)
  const config = ctx.config()
  if (isAdministrator(config, { userId: target.id, role: target.role }) && !actorMay(ctx, actor, ['user', 'impersonate-admins'])) {
    await audit(ctx, actor, event, { outcome: 'failure', targetUserId: target.id, detail: { reason: 'YOU_CANNOT_IMPERSONATE_ADMINS' } })
    throw adminError(403, 'YOU_CANNOT_IMPERSONATE_ADMINS')
  }
  const created = await createSession(ctx, target, {
    meta,
    impersonatedBy: admin.user.id,
    expiresIn: config.admin.impersonationSessionDuration,
  })
  await audit(ctx, actor, event, { targetUserId: target.id, target: created.session.id, detail: { adminSessionId: admin.session.id } })
  return created
}

/** `impersonatedBy` of sessions opened from a control-panel link: no administrator session stands behind them. */
export const PANEL_IMPERSONATOR = 'gatehouse:panel'
/** A panel impersonation link is good for one use within this many seconds. */
export const IMPERSONATION_LINK_TTL = 60

const linkIdentifier = (token: string): string => `impersonation-link:${token}`

/**
 * The control panel's "impersonation link": a one-time token, valid for a minute, that
 * GET /admin/impersonation-link exchanges for an impersonation session in whatever browser opens
 * it. The same permission and admin-protection rules as /admin/impersonate-user apply.
 */
export async function createImpersonationLink(
  ctx: AuthContext,
  actor: Actor,
  userId: string,
  meta: RequestMeta | null,
): Promise<{ token: string; expiresAt: Date }> {
  const event = { type: 'admin.impersonation-link', meta }
  await authorize(ctx, actor, ['user', 'impersonate'], 'YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS', event, userId)
  const target = await requireUser(ctx, userId)
  if (isAdministrator(ctx.config(), { userId: target.id, role: target.role }) && !actorMay(ctx, actor, ['user', 'impersonate-admins'])) {
    await audit(ctx, actor, event, { outcome: 'failure', targetUserId: target.id, detail: { reason: 'YOU_CANNOT_IMPERSONATE_ADMINS' } })
    throw adminError(403, 'YOU_CANNOT_IMPERSONATE_ADMINS')
  }
  const token = generateId(32)
  const row = await createVerification(ctx, linkIdentifier(token), target.id, IMPERSONATION_LINK_TTL)
  await audit(ctx, actor, event, { targetUserId: target.id })
  return { token, expiresAt: row.expiresAt }
}

/** Exchanges a panel link's token, once, for an impersonation session; null when it is unknown, used or expired. */
export async function redeemImpersonationLink(ctx: AuthContext, token: string, meta: RequestMeta): Promise<SessionWithUser | null> {
  const row = await consumeVerification(ctx, linkIdentifier(token))
  const target = row ? await findUserById(ctx, row.value) : undefined
  if (!target) return null
  const created = await createSession(ctx, target, {
    meta,
    impersonatedBy: PANEL_IMPERSONATOR,
    expiresIn: ctx.config().admin.impersonationSessionDuration,
  })
  await recordAudit(ctx, {
    type: 'admin.impersonate-user',
    targetUserId: target.id,
    target: created.session.id,
    detail: { via: 'panel-link' },
    meta,
  })
  return created
}

export interface StoppedImpersonation {
  /** null for a session opened from a panel link: there is no administrator session to return to. */
  admin: SessionWithUser | null
  /** The admin's session had rememberMe off: restore it as a browser-session cookie. */
  dontRemember: boolean
}

/**
 * Ends an impersonation: deletes the impersonation session and hands back the admin's own
 * session, found through the value of the signed admin_session cookie ("<token>:<dontRemember>").
 */
export async function stopImpersonating(
  ctx: AuthContext,
  current: SessionWithUser,
  adminCookie: string | null,
  meta: RequestMeta,
): Promise<StoppedImpersonation> {
  const adminId = current.session.impersonatedBy
  if (!adminId) throw adminError(400, 'YOU_ARE_NOT_IMPERSONATING_ANYONE')
  if (adminId === PANEL_IMPERSONATOR) {
    ctx.db.delete(session).where(eq(session.id, current.session.id)).run()
    await recordAudit(ctx, { type: 'admin.stop-impersonating', targetUserId: current.user.id, target: current.session.id, detail: { via: 'panel-link' }, meta })
    return { admin: null, dontRemember: false }
  }
  if (!await findUserById(ctx, adminId)) throw adminError(500, 'FAILED_TO_FIND_USER')
  if (!adminCookie) throw adminError(500, 'FAILED_TO_FIND_ADMIN_SESSION')
  const colon = adminCookie.indexOf(':')
  const token = colon < 0 ? adminCookie : adminCookie.slice(0, colon)
  const dontRemember = colon >= 0 && adminCookie.slice(colon + 1).length > 0
  const admin = await findSessionByToken(ctx, token)
  if (!admin || admin.user.id !== adminId || admin.session.expiresAt.getTime() <= ctx.clock.now()) {
    throw adminError(500, 'FAILED_TO_FIND_ADMIN_SESSION')
  }
  ctx.db.delete(session).where(eq(session.id, current.session.id)).run()
  await recordAudit(ctx, {
    type: 'admin.stop-impersonating',
    actorUserId: adminId,
    targetUserId: current.user.id,
    target: current.session.id,
    detail: { adminSessionId: admin.session.id },
    meta,
  })
  return { admin, dontRemember }
}

// ---------------------------------------------------------------------------------------------
// has-permission

export interface PermissionCheckInput {
  userId?: string
  role?: string
  permissions?: PermissionRequest
  /** Deprecated better-auth spelling of `permissions`. */
  permission?: PermissionRequest
}

/**
 * POST /admin/has-permission and the panel's permission preview. Subject: the signed-in user,
 * else `role`, else the user with `userId`.
 */
export async function checkPermission(ctx: AuthContext, caller: UserRow | null, input: PermissionCheckInput): Promise<boolean> {
  const permissions = input.permissions ?? input.permission
  if (!permissions) throw adminError(400, 'INVALID_PERMISSION_CHECK')
  let subject: { userId?: string | null; role?: string | null }
  if (caller) subject = { userId: caller.id, role: caller.role }
  else if (input.role) subject = { userId: input.userId ?? null, role: input.role }
  else if (input.userId) {
    const found = await findUserById(ctx, input.userId)
    if (!found) throw new APIError(400, 'USER_NOT_FOUND', 'user not found')
    subject = { userId: found.id, role: found.role }
  } else throw new APIError(400, 'USER_ID_OR_ROLE_IS_REQUIRED', 'user id or role is required')
  return hasPermission(ctx.config(), subject, permissions)
}

// ---------------------------------------------------------------------------------------------
// list-users

export const SEARCH_FIELDS = ['email', 'name'] as const
export const SEARCH_OPERATORS = ['contains', 'starts_with', 'ends_with'] as const
export const FILTER_OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'not_in', 'contains', 'starts_with', 'ends_with'] as const
export type FilterOperator = (typeof FILTER_OPERATORS)[number]

export type FilterValue = string | number | boolean | Array<string | number>

export interface ListUsersQuery {
  searchValue?: string
  searchField?: (typeof SEARCH_FIELDS)[number]
  searchOperator?: (typeof SEARCH_OPERATORS)[number]
  limit?: number | string
  offset?: number | string
  sortBy?: string
  sortDirection?: 'asc' | 'desc'
  filterField?: string
  filterValue?: FilterValue
  filterOperator?: FilterOperator
}

export interface ListUsersResult {
  users: UserRow[]
  total: number
  limit?: number
  offset?: number
}

type ColumnKind = 'text' | 'boolean' | 'date' | 'number'

/** The user columns list-users may filter and sort on (anything else fails the query). */
const LISTABLE: Record<string, { column: SQLiteColumn; kind: ColumnKind; indexed: boolean }> = {
  id: { column: user.id, kind: 'text', indexed: true },
  name: { column: user.name, kind: 'text', indexed: true },
  email: { column: user.email, kind: 'text', indexed: true },
  emailVerified: { column: user.emailVerified, kind: 'boolean', indexed: false },
  image: { column: user.image, kind: 'text', indexed: false },
  createdAt: { column: user.createdAt, kind: 'date', indexed: true },
  updatedAt: { column: user.updatedAt, kind: 'date', indexed: false },
  username: { column: user.username, kind: 'text', indexed: true },
  displayUsername: { column: user.displayUsername, kind: 'text', indexed: false },
  role: { column: user.role, kind: 'text', indexed: false },
  banned: { column: user.banned, kind: 'boolean', indexed: false },
  banReason: { column: user.banReason, kind: 'text', indexed: false },
  banExpires: { column: user.banExpires, kind: 'date', indexed: false },
}

/** A query that cannot be answered: list-users then returns no users and total 0 (SPEC §7). */
class UnanswerableQuery extends Error {}

const DEFAULT_LIMIT = 100
/**
 * A search goes through the trigram index when its rarest trigram occurs in at most this many
 * rows: a fiftieth of the table, between 500 and 2 000 (measured at 100 000 users: phrase
 * matching costs about as much as a covering-index LIKE scan once a few thousand rows match).
 * Above that the plain scan, which also fills a page early, is cheaper.
 */
const trigramCandidateLimit = (rows: number): number => Math.max(500, Math.min(2_000, Math.floor(rows / 50)))

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`)

function likeCondition(column: SQLiteColumn | SQL, operator: string, value: string): SQL {
  const v = escapeLike(value)
  const pattern = operator === 'starts_with' ? `${v}%` : operator === 'ends_with' ? `%${v}` : `%${v}%`
  return sql`${column} LIKE ${pattern} ESCAPE '\\'`
}

function coerce(kind: ColumnKind, value: string | number | boolean): string | number | boolean | Date {
  if (kind === 'boolean') {
    if (value === true || value === 'true' || value === 1 || value === '1') return true
    if (value === false || value === 'false' || value === 0 || value === '0') return false
    throw new UnanswerableQuery('not a boolean')
  }
  if (kind === 'date') {
    const ms = typeof value === 'number' ? value : /^\d+$/.test(String(value)) ? Number(value) : Date.parse(String(value))
    if (typeof value === 'boolean' || Number.isNaN(ms)) throw new UnanswerableQuery('not a date')
    return new Date(ms)
  }
  if (kind === 'number') {
    const n = typeof value === 'boolean' || value === '' ? Number.NaN : Number(value)
    if (!Number.isFinite(n)) throw new UnanswerableQuery('not a number')
    return n
  }
  return String(value)
}

/**
 * A configured additional user field (user.additionalFields) as a filter target: its value read
 * from the JSON column. Dates are stored as ISO strings, so they compare as ISO strings.
 */
function additionalFieldTarget(ctx: AuthContext, name: string): { column: SQL; kind: ColumnKind; json: true } | undefined {
  const fields = ctx.config().user.additionalFields
  const def = Object.hasOwn(fields, name) ? fields[name] : undefined
  if (!def) return undefined
  const path = `$."${name.replace(/"/g, '')}"`
  return { column: sql`json_extract(${user.additionalFields}, ${path})`, kind: def.type === 'string' ? 'text' : def.type, json: true }
}

function filterCondition(ctx: AuthContext, fieldName: string, operator: FilterOperator, raw: FilterValue): SQL {
  const field: { column: SQLiteColumn | SQL; kind: ColumnKind; json?: true } | undefined = Object.hasOwn(LISTABLE, fieldName)
    ? LISTABLE[fieldName]
    : additionalFieldTarget(ctx, fieldName)
  if (!field) throw new UnanswerableQuery(`unknown field ${fieldName}`)
  // Typed as SQL for drizzle's operator overloads; a real column still binds through its own mapping.
  const column = field.column as SQL
  const { kind } = field
  // A JSON value is compared as JSON holds it: dates as their ISO strings.
  const bind = (v: string | number | boolean | Date) => (field.json && v instanceof Date ? v.toISOString() : v)
  if (operator === 'contains' || operator === 'starts_with' || operator === 'ends_with') {
    if (kind !== 'text' || Array.isArray(raw)) throw new UnanswerableQuery('text operator on a non-text value')
    return likeCondition(column, operator, String(raw))
  }
  if (operator === 'in' || operator === 'not_in') {
    const list = (Array.isArray(raw) ? raw : String(raw).split(',')).map((v) => bind(coerce(kind, v)))
    if (list.length === 0) throw new UnanswerableQuery('empty list')
    return operator === 'in' ? inArray(column, list) : notInArray(column, list)
  }
  if (Array.isArray(raw)) throw new UnanswerableQuery('list value for a scalar operator')
  const value = bind(coerce(kind, raw))
  if (kind === 'boolean') {
    // Rows written before the column existed hold NULL, which means false.
    const flag = sql`coalesce(${column}, 0)`
    const bit = value ? 1 : 0
    if (operator === 'eq') return sql`${flag} = ${bit}`
    if (operator === 'ne') return sql`${flag} <> ${bit}`
  }
  switch (operator) {
    case 'eq':
      return eq(column, value)
    case 'ne':
      return ne(column, value)
    case 'lt':
      return lt(column, value)
    case 'lte':
      return lte(column, value)
    case 'gt':
      return gt(column, value)
    case 'gte':
      return gte(column, value)
  }
}

/** Trigrams of a search term, as the FTS5 trigram tokenizer (case-insensitive) stores them. */
function trigrams(term: string): string[] {
  const chars = [...term.toLowerCase()]
  const out = new Set<string>()
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(''))
  return [...out]
}

/**
 * Narrows a substring search through the trigram index when it pays: the term has at least 3
 * characters and its rarest trigram occurs in few rows. Returns the candidate condition, or null
 * to let the plain LIKE scan (cheap for common terms) do it. The LIKE condition is always applied
 * as well, so the index only ever removes rows that cannot match.
 */
function trigramCandidates(ctx: AuthContext, field: 'email' | 'name', term: string): SQL | null {
  const grams = trigrams(term)
  if (grams.length === 0) return null
  const placeholders = grams.map(() => '?').join(',')
  const row = ctx.sqlite
    .prepare(`SELECT count(*) AS n, min(doc) AS least FROM user_search_vocab WHERE col = ? AND term IN (${placeholders})`)
    .get(field, ...grams) as { n: number; least: number | null }
  // A trigram absent from the index: nothing can match.
  if (row.n < grams.length) return sql`0`
  // max(rowid) approximates the table size in O(log n) (deletions only make it larger).
  const size = ctx.sqlite.prepare('SELECT coalesce(max(rowid), 0) AS n FROM user').get() as { n: number }
  if ((row.least ?? 0) > trigramCandidateLimit(size.n)) return null
  const phrase = `${field} : "${term.replace(/"/g, '""')}"`
  return sql`${user.id} IN (SELECT userId FROM user_search WHERE user_search MATCH ${phrase})`
}

function toCount(value: number | string | undefined, fallback: number): number {
  const n = Number(value)
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback
}

/**
 * GET /admin/list-users (SPEC §7, reference §8.5): search and filter ANDed, total counted with
 * the same conditions, sortBy any listed column (ties broken by insertion order), limit 100 by
 * default. A query naming an unknown column or an impossible value answers no users, total 0.
 */
export async function listUsers(ctx: AuthContext, actor: Actor, query: ListUsersQuery): Promise<ListUsersResult> {
  await authorize(ctx, actor, ['user', 'list'], 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS', { type: 'admin.list-users', meta: null })
  const limit = toCount(query.limit, DEFAULT_LIMIT)
  const offset = toCount(query.offset, 0)
  try {
    const conditions: SQL[] = []
    let narrowed = false
    if (query.searchValue) {
      const field = query.searchField ?? 'email'
      const column = field === 'name' ? user.name : user.email
      const candidates = trigramCandidates(ctx, field, query.searchValue)
      if (candidates) {
        conditions.push(candidates)
        narrowed = true
      }
      conditions.push(likeCondition(column, query.searchOperator ?? 'contains', query.searchValue))
    }
    if (query.filterValue !== undefined) {
      conditions.push(filterCondition(ctx, query.filterField ?? 'email', query.filterOperator ?? 'eq', query.filterValue))
    }
    const where = conditions.length > 0 ? and(...conditions) : undefined
    const countAll = () => ctx.db.select({ n: count() }).from(user).where(where).get()?.n ?? 0

    const sortField = query.sortBy ?? null
    const sortInfo = sortField === null ? null : Object.hasOwn(LISTABLE, sortField) ? LISTABLE[sortField] : undefined
    if (sortInfo === undefined) throw new UnanswerableQuery(`unknown sort field ${sortField}`)
    const direction = query.sortDirection === 'desc' ? desc : asc
    const rowid = sql`${user}.rowid`
    const order = (useIndex: boolean): SQL[] => {
      if (!sortInfo) return [direction(rowid)]
      // "+column" keeps SQLite from walking the column's index when sorting the few matches is cheaper.
      const key = useIndex ? sortInfo.column : sql`+${sortInfo.column}`
      return [direction(key), direction(rowid)]
    }
    if (narrowed) {
      // Few candidates: one pass sorts their row ids and counts them; then the page's rows.
      const page = ctx.db
        .select({ r: rowid, total: sql<number>`count(*) OVER ()` })
        .from(user)
        .where(where)
        .orderBy(...order(false))
        .limit(limit)
        .offset(offset)
        .all()
      if (page.length === 0) return { users: [], total: countAll(), limit, offset }
      const rows = ctx.db
        .select({ u: user, r: rowid })
        .from(user)
        .where(
          inArray(
            rowid,
            page.map((p) => p.r),
          ),
        )
        .all()
      const byRowid = new Map(rows.map((x) => [x.r, x.u]))
      const users = page.map((p) => byRowid.get(p.r)).filter((u): u is UserRow => u !== undefined)
      return { users, total: page[0]?.total ?? 0, limit, offset }
    }
    const total = countAll()
    if (total === 0 || offset >= total) return { users: [], total, limit, offset }
    let users: UserRow[]
    if (!where && (!sortInfo || sortInfo.indexed)) {
      // A page of everyone: walk only the (covering) index to the page, then fetch its rows.
      const keys = ctx.db
        .select({ r: rowid })
        .from(user)
        .orderBy(...order(true))
        .limit(limit)
        .offset(offset)
      users = ctx.db
        .select()
        .from(user)
        .where(inArray(rowid, keys))
        .orderBy(...order(true))
        .all()
    } else {
      // Walking the sort index pays when matches are dense enough to fill the page early.
      const dense = sortInfo?.indexed === true && total >= 4 * (offset + limit)
      users = ctx.db
        .select()
        .from(user)
        .where(where)
        .orderBy(...order(dense))
        .limit(limit)
        .offset(offset)
        .all()
    }
    return { users, total, limit, offset }
  } catch {
    // SPEC §7 Admin list-users: "on failure empty users and total 0" — for a query naming unknown
    // fields (UnanswerableQuery) as much as for a database error. Authorization happens above.
    return { users: [], total: 0 }
  }
}
