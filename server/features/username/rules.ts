import type { AuthContext } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import type { UserFieldsOptions } from '../../core/users.js'
import { isUniqueViolation } from '../../db/storage.js'
import { type UsernameErrorKey, usernameError } from './errors.js'
import { findUserByUsername, normalizeUsername } from './store.js'

/**
 * The username rules (SPEC §5 Username, reference §1.3): length and characters, availability, and
 * the username / displayUsername columns read from sign-up, update-user and admin input.
 */

const ALLOWED = /^[a-zA-Z0-9_.]+$/

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

/** POST /is-username-available: the rules first (422), then whether anyone holds it. */
export async function isUsernameAvailable(ctx: AuthContext, username: string): Promise<boolean> {
  if (!username) throw usernameError(422, 'INVALID_USERNAME')
  assertValidUsername(ctx, username)
  return (await findUserByUsername(ctx, username)) === undefined
}

export interface UsernameFields {
  username?: string | null
  displayUsername?: string | null
}

const notAString = (field: string) => new APIError(400, 'VALIDATION_ERROR', `[body.${field}] Invalid input: expected string`, {}, field)

/**
 * Reads `username` / `displayUsername` from a free-form body (sign-up, update-user, admin
 * create/update) and returns the columns to write: the username validated, lower-cased and
 * checked for uniqueness (the user's own current one is accepted), displayUsername defaulting to
 * the username as typed. On creation a valid displayUsername alone also becomes the username
 * (current better-auth). Returns {} when neither field is present. The feature's `readUserFields`.
 */
export async function readUsernameFields(
  ctx: AuthContext,
  input: Record<string, unknown>,
  options: UserFieldsOptions,
): Promise<UsernameFields> {
  const rawUsername = input.username
  const rawDisplay = input.displayUsername
  if (rawUsername !== undefined && rawUsername !== null && typeof rawUsername !== 'string') throw notAString('username')
  if (rawDisplay !== undefined && rawDisplay !== null && typeof rawDisplay !== 'string') throw notAString('displayUsername')
  let username = rawUsername ?? undefined
  const displayUsername = rawDisplay ?? undefined
  if (username === undefined && displayUsername !== undefined && options.mode === 'create') {
    if (usernameProblem(ctx, displayUsername) === null) username = displayUsername
  }
  const out: UsernameFields = {}
  if (rawUsername === null && options.mode === 'update') out.username = null
  if (username !== undefined) {
    assertValidUsername(ctx, username)
    const holder = await findUserByUsername(ctx, username)
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

/** A second user taking the same username at the same moment: the feature's `userFieldClash`. */
export const usernameClash = (error: unknown): APIError | undefined =>
  isUniqueViolation(error, 'user.username') ? usernameError(422, 'USERNAME_IS_ALREADY_TAKEN') : undefined

/**
 * The person's short login name on every face that has one (forward auth's `Remote-User`, LDAP's
 * `uid`, SAML's `uid`, OIDC's `preferred_username`): the username in lower case, else the email.
 * tests/unit/one-copy.test.ts fails on a second copy of it in server/.
 */
export const loginNameOf = (user: { username?: string | null; email: string }): string =>
  user.username ? normalizeUsername(user.username) : user.email
