import { and, eq } from 'drizzle-orm'
import { z } from 'zod'
import { generateId } from '../crypto/random.js'
import { account, user } from '../db/schema.js'
import { isUniqueViolation } from '../db/storage.js'
import type { AuthContext } from './context.js'
import { type CredentialRevocation, credentialsRevoked } from './credential-revocation.js'
import { APIError, ERR } from './errors.js'
import { deleteUserSessions, type UserRow } from './sessions.js'
import { type FeatureUserColumns, featureUserDefaults, userFieldAccess } from './user-defaults.js'
import { normalizeEmail, type UserFieldsOptions } from './user-store.js'
import { hooksOf } from '../http/feature-hooks.js'

/**
 * The user rules every feature shares (core): the public shape of a user, the email format, the
 * configured additional fields, user creation and deletion, and the credential password column.
 * It imports core only: the email-password, username and account features, admin and social
 * sign-in all build on it, none of them is imported here. Features that bring user columns of
 * their own (username) plug in through the Feature hooks `readUserFields` / `userFieldClash`.
 */

// Lookups live in user-store.ts (re-exported: most callers want both).
export { findCredentialAccount, findUserByEmail, findUserById, listAccountRows, normalizeEmail } from './user-store.js'

const emailFormat = z.email()

export function assertValidEmail(email: string): void {
  if (!emailFormat.safeParse(email).success) throw new APIError(400, 'INVALID_EMAIL', ERR.INVALID_EMAIL, {}, 'email')
}

/** USER_ALREADY_EXISTS (an address that has an account): the one place it is built. */
export const userAlreadyExists = (status: 400 | 422 = 422): APIError =>
  new APIError(status, 'USER_ALREADY_EXISTS', ERR.USER_ALREADY_EXISTS, {}, 'email')

/**
 * A user as the wire shows it: configured additional fields flattened onto the row; a feature column
 * declared `shown-when-set` (its columns.ts `xUserFieldAccess`: last-login-method, anonymous) only
 * while it holds a value.
 */
export type PublicUser = Omit<UserRow, 'additionalFields' | keyof FeatureUserColumns> &
  Partial<FeatureUserColumns> &
  Record<string, unknown>

export function toPublicUser(row: UserRow): PublicUser {
  const { additionalFields, ...rest } = row
  const shown: Record<string, unknown> = rest
  for (const name of userFieldAccess().shownWhenSet) if (shown[name] === null) delete shown[name]
  return (additionalFields ? { ...additionalFields, ...shown } : shown) as PublicUser
}

function notAllowed(field: string): APIError {
  return new APIError(400, 'FIELD_NOT_ALLOWED', `${field} is not allowed to be set`, {}, field)
}

const fieldValue = {
  string: z.string(),
  number: z.number(),
  boolean: z.boolean(),
  date: z.coerce.date(),
} as const

/**
 * Reads the configured additional user fields (anything else a client sends, such as
 * emailVerified or id, is ignored) from a client's free-form input (SPEC §3, §5):
 * type-checked, `input:false` fields refused, required ones enforced on creation.
 */
export function readAdditionalFields(ctx: AuthContext, input: Record<string, unknown>, mode: 'create' | 'update'): Record<string, unknown> {
  // Fields a client never sets on itself (the features' `protected` columns): better-auth refuses them with FIELD_NOT_ALLOWED.
  for (const field of userFieldAccess().protected) if (field in input) throw notAllowed(field)
  const out: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(ctx.config().user.additionalFields)) {
    const present = Object.hasOwn(input, name) && input[name] !== undefined
    if (present && !def.input) throw notAllowed(name)
    if (!present) {
      if (mode === 'create') {
        if (def.defaultValue !== undefined) out[name] = def.defaultValue
        else if (def.required && def.input) throw new APIError(400, `${name.toUpperCase()}_IS_REQUIRED`, `${name} is required`, {}, name)
      }
      continue
    }
    const value = input[name]
    if (value === null && !def.required) {
      out[name] = null
      continue
    }
    const parsed = fieldValue[def.type].safeParse(value)
    if (!parsed.success) throw new APIError(400, 'VALIDATION_ERROR', `[body.${name}] expected a ${def.type}`, {}, name)
    out[name] = parsed.data
  }
  return out
}

export type { UserFieldsOptions } from './user-store.js'

/**
 * The user columns the running features read from a client's free-form input (the username
 * feature: username / displayUsername), validated; {} when none of their fields is present.
 */
export async function readFeatureUserFields(
  ctx: AuthContext,
  input: Record<string, unknown>,
  options: UserFieldsOptions,
): Promise<Partial<UserRow>> {
  const out: Partial<UserRow> = {}
  for (const feature of hooksOf(ctx)) {
    if (feature.readUserFields) Object.assign(out, await feature.readUserFields(ctx, input, options))
  }
  return out
}

/**
 * What a failed write of user columns answers: a clash on a feature's unique column by that
 * feature's error (USERNAME_IS_ALREADY_TAKEN), on the email by USER_ALREADY_EXISTS; anything else
 * unchanged.
 */
export function userWriteError(ctx: AuthContext, error: unknown): unknown {
  for (const feature of hooksOf(ctx)) {
    const mapped = feature.userFieldClash?.(error)
    if (mapped) return mapped
  }
  if (isUniqueViolation(error, 'user.email')) return userAlreadyExists()
  return error
}

/**
 * Sets the password hash of a user's credential account, creating the account when the user has
 * none (a social-only user), and revokes the credentials that must die with the password
 * (`why`: who set it and how; credential-revocation.ts). Joins the caller's transaction when
 * there is one. Returns whether the account was created.
 */
export async function storeCredentialPassword(
  ctx: AuthContext,
  userId: string,
  hash: string,
  why: Omit<CredentialRevocation, 'userId' | 'reason'> & { reason: 'password-changed' | 'password-reset' | 'password-set' },
): Promise<{ created: boolean }> {
  await credentialsRevoked(ctx, { userId, ...why })
  const now = new Date(ctx.clock.now())
  const updated = await ctx.db
    .update(account)
    .set({ password: hash, updatedAt: now })
    .where(and(eq(account.userId, userId), eq(account.providerId, 'credential')))
    .returning({ id: account.id })
  if (updated.length > 0) return { created: false }
  await ctx.db
    .insert(account)
    .values({ id: generateId(), accountId: userId, providerId: 'credential', userId, password: hash, createdAt: now, updatedAt: now })
  return { created: true }
}

/**
 * Replaces an imported foreign password hash with Gatehouse's scrypt after the sign-in it
 * verified (issue 29); only while the row still holds that hash, so a password changed meanwhile
 * stays. Joins the caller's transaction.
 */
export async function replaceForeignPasswordHash(ctx: AuthContext, accountId: string, foreignHash: string, hash: string): Promise<void> {
  await ctx.db
    .update(account)
    .set({ password: hash, updatedAt: new Date(ctx.clock.now()) })
    .where(and(eq(account.id, accountId), eq(account.password, foreignHash)))
}

/** Deletes a user with its sessions, then its accounts, then the user row (SPEC §4 Account deletion), in one transaction. */
export async function deleteUserRows(
  ctx: AuthContext,
  userId: string,
  why: Omit<CredentialRevocation, 'userId' | 'reason'> = { actorUserId: userId, meta: null },
): Promise<void> {
  await ctx.storage.transaction(async () => {
    await credentialsRevoked(ctx, { userId, reason: 'deleted', ...why })
    await deleteUserSessions(ctx, userId)
    await ctx.db.delete(account).where(eq(account.userId, userId))
    await ctx.db.delete(user).where(eq(user.id, userId))
  })
}

/** The user columns features add (their columns.ts): a new user's creator may give any of them. */
export type { FeatureUserColumns } from './user-defaults.js'

export type NewUserInput = {
  name: string
  email: string
  image?: string | null
  emailVerified?: boolean
  additionalFields?: Record<string, unknown>
} & {
  /** A feature's column (already validated: readFeatureUserFields); absent or null: the feature's default. */
  [K in keyof FeatureUserColumns]?: FeatureUserColumns[K] | undefined
}

/**
 * The row a new user would get; insertUser stores it (sign-up also shows it without storing, the
 * import gives it its own id and dates). Core spells only the core columns: each feature's columns
 * hold what its columns.ts declares for a new user (`xUserDefaults`, gathered into
 * userFeatureDefaults and handed down: user-defaults.ts), unless the creator gives a value.
 */
export function unsavedUser(ctx: AuthContext, input: NewUserInput): UserRow {
  const now = new Date(ctx.clock.now())
  const defaults = featureUserDefaults(ctx.config())
  const given: Partial<FeatureUserColumns> = {}
  for (const name of Object.keys(defaults) as (keyof FeatureUserColumns)[]) {
    const value = input[name]
    if (value !== undefined && value !== null) Object.assign(given, { [name]: value })
  }
  return {
    id: generateId(),
    name: input.name,
    email: normalizeEmail(input.email),
    emailVerified: input.emailVerified ?? false,
    image: input.image ?? null,
    createdAt: now,
    updatedAt: now,
    ...defaults,
    ...given,
    additionalFields: input.additionalFields && Object.keys(input.additionalFields).length > 0 ? input.additionalFields : null,
  }
}

/**
 * User creation (sign-up, admin create-user, social sign-in): inserts a user and, with a password
 * hash, its credential account, in one transaction. The hash is computed by the caller beforehand:
 * no transaction is held open while hashing. A clash answers through userWriteError
 * (USER_ALREADY_EXISTS 422, USERNAME_IS_ALREADY_TAKEN).
 */
export async function insertUser(ctx: AuthContext, input: NewUserInput, passwordHash: string | null): Promise<UserRow> {
  const row = unsavedUser(ctx, input)
  const now = row.createdAt
  try {
    await ctx.storage.transaction(async () => {
      await ctx.db.insert(user).values(row)
      if (passwordHash !== null) {
        await ctx.db.insert(account).values({
          id: generateId(),
          accountId: row.id,
          providerId: 'credential',
          userId: row.id,
          password: passwordHash,
          createdAt: now,
          updatedAt: now,
        })
      }
    })
  } catch (e) {
    throw userWriteError(ctx, e)
  }
  return row
}

/**
 * Writes columns of a user row (profile, email, verification flag; updatedAt is the caller's),
 * answering a clash through userWriteError. Joins the caller's transaction when there is one.
 */
export async function updateUserColumns(ctx: AuthContext, userId: string, patch: Partial<UserRow>): Promise<void> {
  try {
    await ctx.db.update(user).set(patch).where(eq(user.id, userId))
  } catch (e) {
    throw userWriteError(ctx, e)
  }
}

/**
 * An email-primary proof (a magic link, an email code) reached an existing user: better-auth's
 * revokeUnprovenAccountAccess. An unverified row carries no proof that the access linked to it
 * belongs to the mailbox's owner, so its accounts (password, providers) and sessions go, then
 * emailVerified is set. The flag is flipped by a conditional update: of two concurrent proofs only
 * one strips the row (the other finds it verified). Returns the user as it now is.
 */
export async function proveEmailOwnership(ctx: AuthContext, target: UserRow): Promise<UserRow> {
  if (target.emailVerified) return target
  return ctx.storage.transaction(async () => {
    const flipped = await ctx.db
      .update(user)
      .set({ emailVerified: true, updatedAt: new Date(ctx.clock.now()) })
      .where(and(eq(user.id, target.id), eq(user.emailVerified, false)))
      .returning()
    if (flipped.length === 1) {
      await ctx.db.delete(account).where(eq(account.userId, target.id))
      await deleteUserSessions(ctx, target.id)
      await credentialsRevoked(ctx, { userId: target.id, reason: 'email-proven', actorUserId: target.id, meta: null })
      return flipped[0] as UserRow
    }
    return { ...target, emailVerified: true }
  })
}
