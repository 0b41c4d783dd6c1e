import { eq } from 'drizzle-orm'
import { user } from '../db/schema.js'
import { recordAudit } from './audit.js'
import { throttledCredentialCheck, throttleKey } from './throttle.js'
import type { AuthContext, RequestMeta } from './context.js'
import { sendVerificationEmailIfEnabled } from './email-verification.js'
import { APIError } from './errors.js'
import { createSession, type SessionWithUser, type UserRow } from './sessions.js'
import { assertPasswordLength } from './password-policy.js'
import { findCredentialAccount } from './user-store.js'

/**
 * Username feature (SPEC §5 Username, §8 Username, reference §1.3 and §4.2): sign-in by
 * username, and the username rules shared by sign-up, update-user and the admin endpoints.
 * Messages are the spec's; codes are current better-auth's keys.
 */
export const USERNAME_ERR = {
  INVALID_USERNAME_OR_PASSWORD: 'invalid username or password',
  EMAIL_NOT_VERIFIED: 'email not verified',
  USERNAME_IS_ALREADY_TAKEN: 'username is already taken. please try another.',
  USERNAME_TOO_SHORT: 'username is too short',
  USERNAME_TOO_LONG: 'username is too long',
  INVALID_USERNAME: 'username is invalid',
  INVALID_DISPLAY_USERNAME: 'display username is invalid',
} as const

export type UsernameErrorKey = keyof typeof USERNAME_ERR

export const usernameError = (status: 401 | 403 | 422, key: UsernameErrorKey): APIError =>
  new APIError(status, key, USERNAME_ERR[key])

const ALLOWED = /^[a-zA-Z0-9_.]+$/

/** Usernames are unique in lower case (SPEC §3). */
export const normalizeUsername = (username: string): string => username.toLowerCase()

/** The length and character rules; null when the username is acceptable. */
export function usernameProblem(ctx: AuthContext, username: string): UsernameErrorKey | null {
  const { minUsernameLength, maxUsernameLength } = ctx.config().username
  if (username.length < minUsernameLength) return 'USERNAME_TOO_SHORT'
  if (username.length > maxUsernameLength) return 'USERNAME_TOO_LONG'
  if (!ALLOWED.test(username)) return 'INVALID_USERNAME'
  return null
}

export function assertValidUsername(ctx: AuthContext, username: string): void {
  const problem = usernameProblem(ctx, username)
  if (problem) throw usernameError(422, problem)
}

export function findUserByUsername(ctx: AuthContext, username: string): UserRow | undefined {
  return ctx.db.select().from(user).where(eq(user.username, normalizeUsername(username))).get()
}

/** POST /is-username-available: the rules first (422), then whether anyone holds it. */
export function isUsernameAvailable(ctx: AuthContext, username: string): boolean {
  if (!username) throw usernameError(422, 'INVALID_USERNAME')
  assertValidUsername(ctx, username)
  return findUserByUsername(ctx, username) === undefined
}

export interface UsernameFields {
  username?: string | null
  displayUsername?: string | null
}

/**
 * Reads `username` / `displayUsername` from a free-form body (sign-up, update-user, admin
 * create/update) and returns the columns to write: the username validated, lower-cased and
 * checked for uniqueness (the user's own current one is accepted), displayUsername defaulting to
 * the username as typed. On creation a valid displayUsername alone also becomes the username
 * (current better-auth). Returns {} when neither field is present.
 */
export function readUsernameFields(
  ctx: AuthContext,
  input: Record<string, unknown>,
  options: { mode: 'create' | 'update'; currentUserId?: string | null },
): UsernameFields {
  const rawUsername = input.username
  const rawDisplay = input.displayUsername
  if (rawUsername !== undefined && rawUsername !== null && typeof rawUsername !== 'string') {
    throw new APIError(400, 'VALIDATION_ERROR', '[body.username] Invalid input: expected string')
  }
  if (rawDisplay !== undefined && rawDisplay !== null && typeof rawDisplay !== 'string') {
    throw new APIError(400, 'VALIDATION_ERROR', '[body.displayUsername] Invalid input: expected string')
  }
  let username = rawUsername ?? undefined
  const displayUsername = rawDisplay ?? undefined
  if (username === undefined && displayUsername !== undefined && options.mode === 'create') {
    if (usernameProblem(ctx, displayUsername) === null) username = displayUsername
  }
  const out: UsernameFields = {}
  if (rawUsername === null && options.mode === 'update') out.username = null
  if (username !== undefined) {
    assertValidUsername(ctx, username)
    const holder = findUserByUsername(ctx, username)
    if (holder && holder.id !== options.currentUserId) throw usernameError(422, 'USERNAME_IS_ALREADY_TAKEN')
    out.username = normalizeUsername(username)
    out.displayUsername = displayUsername ?? username
  } else if (displayUsername !== undefined) {
    out.displayUsername = displayUsername
  } else if (rawDisplay === null && options.mode === 'update') {
    out.displayUsername = null
  }
  return out
}

/** True for the SQLite error of a second user taking the same username at the same moment. */
export function isUsernameConflict(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed: user\.username/.test(error.message)
}

export interface SignInUsernameInput {
  username: string
  password: string
  rememberMe?: boolean
  /** Where the verification link (sent when the email is unverified) leads afterwards. */
  callbackURL?: string
}

/**
 * POST /sign-in/username. Any miss (unknown username, no credential account, no password,
 * wrong password) is the same 401, and an unknown username still costs a hash computation.
 * Bans are enforced by createSession.
 */
export async function signInUsername(
  ctx: AuthContext,
  input: SignInUsernameInput,
  meta: RequestMeta,
): Promise<SessionWithUser> {
  const refuse = async (reason: string, target: UserRow | undefined) => {
    await recordAudit(ctx, {
      type: 'user.sign-in',
      outcome: 'failure',
      targetUserId: target?.id ?? null,
      detail: { method: 'username', reason, username: input.username ? normalizeUsername(input.username) : null },
      meta,
    })
    return usernameError(401, 'INVALID_USERNAME_OR_PASSWORD')
  }
  if (!input.username || !input.password) throw await refuse('MISSING_CREDENTIALS', undefined)
  assertValidUsername(ctx, input.username)
  if (input.password.length > ctx.config().emailAndPassword.maxPasswordLength) assertPasswordLength(ctx, input.password)
  const found = findUserByUsername(ctx, input.username)
  const credential = found ? await findCredentialAccount(ctx, found.id) : undefined
  // Per-account throttle (docs/SECURITY.md): a known account shares its counter with email
  // sign-in; an unknown username is counted under its own name, so both answer alike.
  const key = found ? throttleKey('email', found.email) : throttleKey('username', normalizeUsername(input.username))
  const matched = await throttledCredentialCheck(ctx, key, meta, credential?.password, input.password, { targetUserId: found?.id })
  if (!found || !credential?.password) throw await refuse(found ? 'NO_CREDENTIAL' : 'UNKNOWN_USER', found)
  if (!matched) throw await refuse('INVALID_PASSWORD', found)
  if (ctx.config().emailAndPassword.requireEmailVerification && !found.emailVerified) {
    await recordAudit(ctx, {
      type: 'user.sign-in',
      outcome: 'failure',
      targetUserId: found.id,
      detail: { method: 'username', reason: 'EMAIL_NOT_VERIFIED' },
      meta,
    })
    // A fresh verification link goes out first, so the refused user can verify (SPEC §8 Username).
    await sendVerificationEmailIfEnabled(ctx, found, input.callbackURL)
    throw usernameError(403, 'EMAIL_NOT_VERIFIED')
  }
  try {
    const created = await createSession(ctx, found, { rememberMe: input.rememberMe, meta })
    await recordAudit(ctx, {
      type: 'user.sign-in',
      actorUserId: found.id,
      target: created.session.id,
      detail: { method: 'username' },
      meta,
    })
    return created
  } catch (e) {
    if (e instanceof APIError) {
      await recordAudit(ctx, {
        type: 'user.sign-in',
        outcome: 'failure',
        targetUserId: found.id,
        detail: { method: 'username', reason: e.code },
        meta,
      })
    }
    throw e
  }
}
