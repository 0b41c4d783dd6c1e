import { and, eq } from 'drizzle-orm'
import { z } from 'zod'
import { hashPassword } from '../crypto/password.js'
import { generateId } from '../crypto/random.js'
import { account, session, user } from '../db/schema.js'
import { recordAudit } from './audit.js'
import { assertPasswordPolicy } from './password-policy.js'
import { findCredentialAccount, findUserByEmail, normalizeEmail } from './user-store.js'
import { clearPasswordFailures, throttledCredentialCheck, throttleKey } from './throttle.js'
import type { AuthContext, RequestMeta } from './context.js'
import { APIError, fail } from './errors.js'
import { existingAccountEmail } from '../mail/templates.js'
import { sendVerificationEmailIfEnabled } from './email-verification.js'
import { createSession, type SessionWithUser, type UserRow } from './sessions.js'
import { isUsernameConflict, readUsernameFields, usernameError } from './username.js'

// Lookups live in user-store.ts and the length rule in password-policy.ts (modules that import
// nothing of this one, so username, verification and policy rules can use them without a cycle).
export { findCredentialAccount, findUserByEmail, findUserById, listAccountRows, normalizeEmail } from './user-store.js'
export { assertPasswordLength } from './password-policy.js'

const emailFormat = z.email()

export function assertValidEmail(email: string): void {
  if (!emailFormat.safeParse(email).success) throw fail(400, 'INVALID_EMAIL')
}

/** A user as the wire shows it: configured additional fields flattened onto the row. */
export type PublicUser = Omit<UserRow, 'additionalFields'> & Record<string, unknown>

export function toPublicUser(row: UserRow): PublicUser {
  const { additionalFields, ...rest } = row
  return additionalFields ? { ...additionalFields, ...rest } : rest
}

/** Fields a client must never set on itself: better-auth refuses them with FIELD_NOT_ALLOWED. */
const PROTECTED_FIELDS = ['role', 'banned', 'banReason', 'banExpires'] as const

function notAllowed(field: string): APIError {
  return new APIError(400, 'FIELD_NOT_ALLOWED', `${field} is not allowed to be set`)
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
export function readAdditionalFields(
  ctx: AuthContext,
  input: Record<string, unknown>,
  mode: 'create' | 'update',
): Record<string, unknown> {
  for (const field of PROTECTED_FIELDS) if (field in input) throw notAllowed(field)
  const out: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(ctx.config().user.additionalFields)) {
    const present = Object.hasOwn(input, name) && input[name] !== undefined
    if (present && !def.input) throw notAllowed(name)
    if (!present) {
      if (mode === 'create') {
        if (def.defaultValue !== undefined) out[name] = def.defaultValue
        else if (def.required && def.input) throw new APIError(400, `${name.toUpperCase()}_IS_REQUIRED`, `${name} is required`)
      }
      continue
    }
    const value = input[name]
    if (value === null && !def.required) {
      out[name] = null
      continue
    }
    const parsed = fieldValue[def.type].safeParse(value)
    if (!parsed.success) throw new APIError(400, 'VALIDATION_ERROR', `[body.${name}] expected a ${def.type}`)
    out[name] = parsed.data
  }
  return out
}

/**
 * Sets the password hash of a user's credential account, creating the account when the user has
 * none (a social-only user). Runs inside the caller's transaction when there is one. Returns
 * whether the account was created.
 */
export function storeCredentialPassword(ctx: AuthContext, userId: string, hash: string): { created: boolean } {
  const now = new Date(ctx.clock.now())
  const updated = ctx.db
    .update(account)
    .set({ password: hash, updatedAt: now })
    .where(and(eq(account.userId, userId), eq(account.providerId, 'credential')))
    .run()
  if (updated.changes > 0) return { created: false }
  ctx.db
    .insert(account)
    .values({ id: generateId(), accountId: userId, providerId: 'credential', userId, password: hash, createdAt: now, updatedAt: now })
    .run()
  return { created: true }
}

/** Deletes a user with its sessions, then its accounts, then the user row (SPEC §4 Account deletion), in the caller's transaction. */
export function deleteUserRows(ctx: AuthContext, userId: string): void {
  ctx.db.delete(session).where(eq(session.userId, userId)).run()
  ctx.db.delete(account).where(eq(account.userId, userId)).run()
  ctx.db.delete(user).where(eq(user.id, userId)).run()
}

const isUniqueViolation = (e: unknown): boolean =>
  e instanceof Error && 'code' in e && String((e as { code: unknown }).code).startsWith('SQLITE_CONSTRAINT_UNIQUE')

export interface NewUserInput {
  name: string
  email: string
  image?: string | null
  emailVerified?: boolean
  role?: string | null
  /** Already validated and lower-cased (username.ts readUsernameFields). */
  username?: string | null
  displayUsername?: string | null
  additionalFields?: Record<string, unknown>
}

/** The row a new user would get; insertUser stores it. */
function unsavedUser(ctx: AuthContext, input: NewUserInput): UserRow {
  const now = new Date(ctx.clock.now())
  return {
    id: generateId(),
    name: input.name,
    email: normalizeEmail(input.email),
    emailVerified: input.emailVerified ?? false,
    image: input.image ?? null,
    createdAt: now,
    updatedAt: now,
    username: input.username ?? null,
    displayUsername: input.displayUsername ?? null,
    role: input.role ?? ctx.config().admin.defaultRole,
    banned: false,
    banReason: null,
    banExpires: null,
    twoFactorEnabled: false,
    additionalFields:
      input.additionalFields && Object.keys(input.additionalFields).length > 0 ? input.additionalFields : null,
  }
}

/**
 * Inserts a user and, with a password hash, its credential account, in one transaction.
 * The hash is computed by the caller beforehand: no transaction is held open while hashing.
 */
export async function insertUser(ctx: AuthContext, input: NewUserInput, passwordHash: string | null): Promise<UserRow> {
  const row = unsavedUser(ctx, input)
  const now = row.createdAt
  try {
    await ctx.storage.transaction(async () => {
      ctx.db.insert(user).values(row).run()
      if (passwordHash !== null) {
        ctx.db.insert(account)
          .values({
            id: generateId(),
            accountId: row.id,
            providerId: 'credential',
            userId: row.id,
            password: passwordHash,
            createdAt: now,
            updatedAt: now,
          })
          .run()
      }
    })
  } catch (e) {
    if (isUsernameConflict(e)) throw usernameError(422, 'USERNAME_IS_ALREADY_TAKEN')
    if (isUniqueViolation(e)) throw new APIError(422, 'USER_ALREADY_EXISTS', 'User already exists')
    throw e
  }
  return row
}

export interface SignUpInput {
  name: string
  email: string
  password: string
  image?: string | null
  rememberMe?: boolean
  /** Everything else the client sent: candidates for additional fields. */
  extra: Record<string, unknown>
}

export interface SignUpResult {
  user: UserRow
  session: SessionWithUser | null
}

export async function signUpEmail(ctx: AuthContext, input: SignUpInput, meta: RequestMeta): Promise<SignUpResult> {
  const conf = ctx.config().emailAndPassword
  if (!conf.enabled || conf.disableSignUp) {
    throw new APIError(400, 'EMAIL_PASSWORD_SIGN_UP_DISABLED', 'Email and password sign up is not enabled')
  }
  assertValidEmail(input.email)
  await assertPasswordPolicy(ctx, input.password, [input.email, input.name])
  const additionalFields = readAdditionalFields(ctx, input.extra, 'create')
  const usernameFields = readUsernameFields(ctx, input.extra, { mode: 'create' })
  const existing = await findUserByEmail(ctx, input.email)
  if (existing && conf.requireEmailVerification) {
    // Enumeration protection (as current better-auth): the same answer, and the same hashing
    // work, as a real sign-up; the owner of the address is told by mail instead.
    await hashPassword(input.password)
    ctx.mailer.send(existingAccountEmail(ctx.config().mail.appName, existing))
    await recordAudit(ctx, {
      type: 'user.sign-up',
      outcome: 'failure',
      targetUserId: existing.id,
      detail: { reason: 'USER_ALREADY_EXISTS', concealed: true },
      meta,
    })
    return { user: unsavedUser(ctx, { ...input, ...usernameFields, additionalFields }), session: null }
  }
  if (existing) {
    await recordAudit(ctx, { type: 'user.sign-up', outcome: 'failure', detail: { reason: 'USER_ALREADY_EXISTS' }, meta })
    throw new APIError(422, 'USER_ALREADY_EXISTS', 'User already exists')
  }
  const hash = await hashPassword(input.password)
  const created = await insertUser(ctx, { ...input, ...usernameFields, additionalFields }, hash)
  await recordAudit(ctx, { type: 'user.sign-up', actorUserId: created.id, meta })
  if (ctx.config().emailVerification.sendOnSignUp || conf.requireEmailVerification) {
    const callbackURL = typeof input.extra.callbackURL === 'string' ? input.extra.callbackURL : undefined
    await sendVerificationEmailIfEnabled(ctx, created, callbackURL)
  }
  if (!conf.autoSignIn || conf.requireEmailVerification) return { user: created, session: null }
  const session = await createSession(ctx, created, { rememberMe: input.rememberMe, meta })
  return { user: created, session }
}

export interface SignInInput {
  email: string
  password: string
  rememberMe?: boolean
  /** Where the verification link of a refused unverified sign-in leads. */
  callbackURL?: string
}

export async function signInEmail(ctx: AuthContext, input: SignInInput, meta: RequestMeta): Promise<SessionWithUser> {
  if (!ctx.config().emailAndPassword.enabled) {
    throw new APIError(400, 'EMAIL_PASSWORD_DISABLED', 'Email and password is not enabled')
  }
  assertValidEmail(input.email)
  const found = await findUserByEmail(ctx, input.email)
  const credential = found ? await findCredentialAccount(ctx, found.id) : undefined
  const refuse = async (reason: string) => {
    await recordAudit(ctx, {
      type: 'user.sign-in',
      outcome: 'failure',
      targetUserId: found?.id ?? null,
      detail: { reason, email: normalizeEmail(input.email) },
      meta,
    })
    return fail(401, 'INVALID_EMAIL_OR_PASSWORD')
  }
  const key = throttleKey('email', input.email)
  const matched = await throttledCredentialCheck(ctx, key, meta, credential?.password, input.password, {
    targetUserId: found?.id,
    clearOnSuccess: false,
  })
  if (!found || !credential?.password || !matched) {
    throw await refuse(!found ? 'UNKNOWN_USER' : !credential?.password ? 'NO_CREDENTIAL' : 'INVALID_PASSWORD')
  }
  if (ctx.config().emailAndPassword.requireEmailVerification && !found.emailVerified) {
    await clearPasswordFailures(ctx, key)
    await recordAudit(ctx, { type: 'user.sign-in', outcome: 'failure', targetUserId: found.id, detail: { reason: 'EMAIL_NOT_VERIFIED' }, meta })
    // A fresh link goes out first, so the refused user can verify (SPEC §8, reference §4.1).
    await sendVerificationEmailIfEnabled(ctx, found, input.callbackURL)
    throw fail(403, 'EMAIL_NOT_VERIFIED')
  }
  try {
    // One commit for the session and its audit event: each commit is an fsync.
    return await ctx.storage.transaction(async () => {
      await clearPasswordFailures(ctx, key)
      const created = await createSession(ctx, found, { rememberMe: input.rememberMe, meta })
      await recordAudit(ctx, { type: 'user.sign-in', actorUserId: found.id, target: created.session.id, meta })
      return created
    })
  } catch (e) {
    if (e instanceof APIError) {
      await recordAudit(ctx, { type: 'user.sign-in', outcome: 'failure', targetUserId: found.id, detail: { reason: e.code }, meta })
    }
    throw e
  }
}
