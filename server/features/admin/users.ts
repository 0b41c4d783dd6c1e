import type { AuthContext, RequestMeta } from '../../core/context.js'
import { credentialsRevoked } from '../../core/credential-revocation.js'
import { APIError } from '../../core/errors.js'
import { deleteUserSessions, type UserRow } from '../../core/sessions.js'
import {
  assertValidEmail,
  deleteUserRows,
  findUserByEmail,
  insertUser,
  normalizeEmail,
  readAdditionalFields,
  readFeatureUserFields,
  storeCredentialPassword,
  userWriteError,
} from '../../core/users.js'
import { hashPassword } from '../../crypto/password.js'
import { isUniqueViolation } from '../../db/storage.js'
import { assertPasswordLength } from '../email-password/password-policy.js'
import { type Actor, actorId, assertKnownRoles, audit, authorize, refuse, requireUser } from './actor.js'
import { adminError, onField } from './errors.js'
import { updateUserRow } from './store.js'

/**
 * Administrator user management (SPEC §5 Admin, §6, §7 Admin, §8 Admin): create, read, change
 * and remove users. Bans, sessions and impersonation have their own files.
 */

/** A patch of one user, refused when the user is gone. */
export async function patchUser(ctx: AuthContext, userId: string, patch: Partial<UserRow>): Promise<UserRow> {
  const updated = await updateUserRow(ctx, userId, patch)
  if (!updated) throw adminError(404, 'USER_NOT_FOUND')
  return updated
}

/** The unique-email clash of a write, as the admin endpoints answer it. */
function emailClash(e: unknown): boolean {
  return isUniqueViolation(e, 'user.email') || (e instanceof APIError && e.code === 'USER_ALREADY_EXISTS')
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
  const requestedRole =
    input.role ?? (typeof dataRole === 'string' || Array.isArray(dataRole) ? (dataRole as string | string[]) : undefined)
  let role: string | undefined
  if (requestedRole !== undefined) {
    await authorize(ctx, actor, ['user', 'set-role'], 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE', event)
    role = assertKnownRoles(ctx, requestedRole)
  }
  await onField('email', () => assertValidEmail(input.email))
  const password = input.password
  if (password !== undefined) await onField('password', () => assertPasswordLength(ctx, password))
  const usernameFields = await onField('username', () => readFeatureUserFields(ctx, data, { mode: 'create' }))
  const { username: _u, displayUsername: _d, emailVerified, image, ...rest } = data
  const additionalFields = readAdditionalFields(ctx, rest, 'create')
  if (await findUserByEmail(ctx, input.email)) {
    await refuse(ctx, actor, event, 400, 'USER_ALREADY_EXISTS', { detail: { email: normalizeEmail(input.email) } })
  }
  const hash = password !== undefined ? await hashPassword(password) : null
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
    if (emailClash(e)) throw adminError(400, 'USER_ALREADY_EXISTS')
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
    const updated = await patchUser(ctx, input.userId, { role })
    await audit(ctx, actor, event, { targetUserId: updated.id, detail: { before: { role: before.role }, after: { role } } })
    return updated
  })
}

// ---------------------------------------------------------------------------------------------
// get-user / update-user

export async function getUser(ctx: AuthContext, actor: Actor, userId: string): Promise<UserRow> {
  await authorize(ctx, actor, ['user', 'get'], 'YOU_ARE_NOT_ALLOWED_TO_GET_USER', { type: 'admin.get-user', meta: null }, userId)
  return requireUser(ctx, userId)
}

const UPDATE_COLUMNS = new Set([
  'role',
  'banned',
  'banReason',
  'banExpires',
  'email',
  'emailVerified',
  'name',
  'image',
  'username',
  'displayUsername',
])

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
      throw adminError(400, 'INVALID_ROLE_TYPE')
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
      if (when && Number.isNaN(when.getTime())) throw adminError(400, 'INVALID_BAN_EXPIRES')
      patch.banExpires = when
    }
  }
  if (has('email') || has('emailVerified')) {
    await authorize(ctx, actor, ['user', 'set-email'], 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL', event, input.userId)
    if (has('email')) {
      const email = String(data.email)
      await onField('email', () => assertValidEmail(email))
      const holder = await findUserByEmail(ctx, email)
      if (holder && holder.id !== input.userId) throw adminError(400, 'USER_ALREADY_EXISTS')
      patch.email = normalizeEmail(email)
    }
    if (has('emailVerified')) patch.emailVerified = data.emailVerified === true
  }
  if (has('name')) {
    if (typeof data.name !== 'string') throw adminError(400, 'INVALID_NAME')
    patch.name = data.name
  }
  if (has('image')) patch.image = typeof data.image === 'string' ? data.image : null
  Object.assign(patch, await onField('username', () => readFeatureUserFields(ctx, data, { mode: 'update', currentUserId: input.userId })))
  const extra = Object.fromEntries(Object.entries(data).filter(([k]) => !UPDATE_COLUMNS.has(k)))
  const additional = readAdditionalFields(ctx, extra, 'update')
  try {
    return await ctx.storage.transaction(async () => {
      const before = await requireUser(ctx, input.userId)
      if (Object.keys(additional).length > 0) patch.additionalFields = { ...before.additionalFields, ...additional }
      const updated = await patchUser(ctx, input.userId, patch)
      if (patch.banned === true) {
        await deleteUserSessions(ctx, input.userId)
        await credentialsRevoked(ctx, { userId: input.userId, reason: 'banned', actorUserId: actorId(actor), meta })
      }
      const changed = Object.keys(patch)
      const pick = (row: UserRow) =>
        Object.fromEntries(changed.map((k) => [k, k === 'banExpires' ? (row.banExpires?.toISOString() ?? null) : row[k as keyof UserRow]]))
      await audit(ctx, actor, event, { targetUserId: updated.id, detail: { before: pick(before), after: pick(updated) } })
      return updated
    })
  } catch (e) {
    if (isUniqueViolation(e, 'user.username')) throw userWriteError(ctx, e)
    if (isUniqueViolation(e, 'user.email')) throw adminError(400, 'USER_ALREADY_EXISTS')
    throw e
  }
}

/** The control panel's "mark email verified" (and its reverse). */
export async function setEmailVerified(
  ctx: AuthContext,
  actor: Actor,
  userId: string,
  verified: boolean,
  meta: RequestMeta | null,
): Promise<UserRow> {
  const event = { type: 'admin.set-email-verified', meta }
  await authorize(ctx, actor, ['user', 'set-email'], 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL', event, userId)
  return ctx.storage.transaction(async () => {
    const before = await requireUser(ctx, userId)
    const updated = await patchUser(ctx, userId, { emailVerified: verified })
    await audit(ctx, actor, event, {
      targetUserId: userId,
      detail: { before: { emailVerified: before.emailVerified }, after: { emailVerified: verified } },
    })
    return updated
  })
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
    await deleteUserRows(ctx, userId, { actorUserId: actorId(actor), meta })
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
  await onField('newPassword', () => assertPasswordLength(ctx, input.newPassword))
  await requireUser(ctx, input.userId)
  // Hashing happens before the transaction: the body awaits only queries (the account feature mails the notice).
  const hash = await hashPassword(input.newPassword)
  await ctx.storage.transaction(async () => {
    const row = await requireUser(ctx, input.userId)
    const { created } = await storeCredentialPassword(ctx, row.id, hash, { reason: 'password-set', actorUserId: actorId(actor), meta })
    await audit(ctx, actor, event, { targetUserId: row.id, detail: { createdCredential: created } })
  })
}
