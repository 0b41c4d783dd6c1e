import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { APIError, fail } from '../../core/errors.js'
import { createSession, deleteUserSessions, isSessionFresh, type SessionWithUser, type UserRow } from '../../core/sessions.js'
import { throttledPasswordCheck, throttleKey } from '../../core/throttle.js'
import { findCredentialAccount, findUserByEmail, findUserById, listAccountRows, normalizeEmail } from '../../core/user-store.js'
import {
  deleteUserRows,
  readAdditionalFields,
  readFeatureUserFields,
  storeCredentialPassword,
  updateUserColumns,
} from '../../core/users.js'
import { consumeVerification, createVerification } from '../../core/verification.js'
import { hashPassword, verifyPassword } from '../../crypto/password.js'
import { generateLowerToken } from '../../crypto/random.js'
import { emailPasswordError } from '../email-password/errors.js'
import { assertPasswordPolicy } from '../email-password/password-policy.js'
import {
  createEmailVerificationToken,
  sendChangeEmailConfirmation,
  sendChangeEmailVerification,
  sendVerificationEmailIfEnabled,
} from '../email-password/verification.js'
import { accountError } from './errors.js'
import { deleteAccountEmail } from './mail.js'
import { deleteAccountRow } from './store.js'

/**
 * The signed-in user's own account (SPEC §4–§6): profile, password, email, linked accounts and
 * deletion. Every function takes the caller's resolved session; the HTTP layer only parses input
 * and shapes cookies. set-password is server-only: the control panel calls it, HTTP does not.
 */

// ---------------------------------------------------------------------------------------------
// Profile

const validation = (field: string, expected: string) =>
  new APIError(400, 'VALIDATION_ERROR', `[body.${field}] expected ${expected}`, {}, field)

/**
 * POST /update-user: name, image, feature columns (username) and configured additional fields
 * from a free-form record. An `email` key is refused (EMAIL_CAN_NOT_BE_UPDATED); unknown keys are
 * ignored; a body naming nothing to change is refused (NO_FIELDS_TO_UPDATE).
 */
export async function updateUser(
  ctx: AuthContext,
  current: SessionWithUser,
  input: Record<string, unknown>,
  meta: RequestMeta,
): Promise<UserRow> {
  if (input.email !== undefined) throw accountError(400, 'EMAIL_CAN_NOT_BE_UPDATED')
  const { name, image, ...rest } = input
  const patch: Partial<UserRow> = {}
  if (name !== undefined) {
    if (typeof name !== 'string') throw validation('name', 'a string')
    patch.name = name
  }
  if (image !== undefined) {
    if (image !== null && typeof image !== 'string') throw validation('image', 'a string or null')
    patch.image = image
  }
  // username / displayUsername: the username feature's rules (length, characters, uniqueness).
  Object.assign(patch, await readFeatureUserFields(ctx, rest, { mode: 'update', currentUserId: current.user.id }))
  const additional = readAdditionalFields(ctx, rest, 'update')
  if (Object.keys(additional).length > 0) patch.additionalFields = { ...(current.user.additionalFields ?? {}), ...additional }
  // better-auth 1.7: a body naming no field it can update is refused.
  if (Object.keys(patch).length === 0) throw accountError(400, 'NO_FIELDS_TO_UPDATE')
  patch.updatedAt = new Date(ctx.clock.now())
  await updateUserColumns(ctx, current.user.id, patch)
  await recordAudit(ctx, {
    type: 'user.updated',
    actorUserId: current.user.id,
    detail: { fields: [...Object.keys(patch).filter((k) => k !== 'updatedAt' && k !== 'additionalFields'), ...Object.keys(additional)] },
    meta,
  })
  return { ...current.user, ...patch }
}

// ---------------------------------------------------------------------------------------------
// Passwords

/**
 * Checks the current password of a signed-in user, under the same per-account throttle as
 * sign-in (a stolen session must not become an oracle for the password).
 */
async function assertCurrentPassword(
  ctx: AuthContext,
  userId: string,
  password: string,
  meta: RequestMeta,
  action: string,
  field: string,
): Promise<void> {
  const credential = await findCredentialAccount(ctx, userId)
  if (!credential?.password) throw fail(400, 'CREDENTIAL_ACCOUNT_NOT_FOUND')
  const owner = await findUserById(ctx, userId)
  const key = throttleKey('email', owner?.email ?? userId)
  const hash = credential.password
  if (!(await throttledPasswordCheck(ctx, key, meta, () => verifyPassword(hash, password), { targetUserId: userId }))) {
    await recordAudit(ctx, { type: action, outcome: 'failure', actorUserId: userId, detail: { reason: 'INVALID_PASSWORD' }, meta })
    throw fail(400, 'INVALID_PASSWORD', 'INVALID_PASSWORD', field)
  }
}

export interface ChangePasswordInput {
  newPassword: string
  currentPassword: string
  revokeOtherSessions?: boolean
}

/**
 * POST /change-password. With revokeOtherSessions every session of the user (the current one
 * included) is deleted and a new one is returned (SPEC §4 Password change).
 */
export async function changePassword(
  ctx: AuthContext,
  current: SessionWithUser,
  input: ChangePasswordInput,
  meta: RequestMeta,
): Promise<{ user: UserRow; session: SessionWithUser | null }> {
  const created = await changeOwnPassword(ctx, current.user, input, meta, async () => {
    if (!input.revokeOtherSessions) return null
    await deleteUserSessions(ctx, current.user.id)
    return await createSession(ctx, current.user, { meta })
  })
  return { user: current.user, session: created }
}

/**
 * A user changes their own password with the current one: the policy, the throttled check of the
 * current password, the new hash (and `inTransaction`'s writes) in one commit, the audit event and
 * the notice. POST /change-password and LDAP's password modify (RFC 3062) both go through here.
 */
export async function changeOwnPassword<T>(
  ctx: AuthContext,
  owner: UserRow,
  input: { newPassword: string; currentPassword: string; revokeOtherSessions?: boolean },
  meta: RequestMeta,
  inTransaction: () => Promise<T | null> = async () => null,
): Promise<T | null> {
  await assertPasswordPolicy(ctx, input.newPassword, [owner.email, owner.name], 'newPassword')
  await assertCurrentPassword(ctx, owner.id, input.currentPassword, meta, 'user.password-changed', 'currentPassword')
  const hash = await hashPassword(input.newPassword)
  const result = await ctx.storage.transaction(async () => {
    await storeCredentialPassword(ctx, owner.id, hash, { reason: 'password-changed', actorUserId: owner.id, meta })
    return await inTransaction()
  })
  await recordAudit(ctx, {
    type: 'user.password-changed',
    actorUserId: owner.id,
    detail: { revokedSessions: Boolean(input.revokeOtherSessions) },
    meta,
  })
  return result
}

/**
 * Sets a password for a user who has none (e.g. signed up through a social provider): server
 * only (better-auth's set-password is not routed over HTTP); the control panel calls this.
 */
export async function setPassword(ctx: AuthContext, userId: string, newPassword: string, meta: RequestMeta | null = null): Promise<void> {
  await assertPasswordPolicy(ctx, newPassword, [], 'newPassword')
  const existing = await findCredentialAccount(ctx, userId)
  if (existing?.password) throw accountError(400, 'PASSWORD_ALREADY_SET')
  if (!existing && !(await findUserById(ctx, userId))) throw fail(404, 'USER_NOT_FOUND')
  await storeCredentialPassword(ctx, userId, await hashPassword(newPassword), { reason: 'password-set', actorUserId: null, meta })
  await recordAudit(ctx, { type: 'user.password-set', targetUserId: userId, meta })
}

// ---------------------------------------------------------------------------------------------
// Email change

export interface ChangeEmailResult {
  /** The user as it now is (the address changed only with `updateEmailWithoutVerification`). */
  user: UserRow
  changed: boolean
}

/**
 * POST /change-email (SPEC §4 Email change), as better-auth 1.7:
 * - an unverified address is replaced at once only with `user.changeEmail.updateEmailWithoutVerification`
 *   (the new one then gets a verification mail when verification mail is on); by default a
 *   verification link goes to the new address and the address changes when it is followed
 *   (GET /verify-email, token `requestType: "change-email-verification"`), so a session alone
 *   cannot move an account to another mailbox (issue 31 §5);
 * - a verified one stays until the owner approves the change from the confirmation mail sent to it;
 * - a new address that already has an account gets the same `{status: true}` and nothing changes
 *   (a token is still signed so both paths do the same work).
 */
export async function changeEmail(
  ctx: AuthContext,
  current: SessionWithUser,
  input: { newEmail: string; callbackURL?: string | null },
  meta: RequestMeta,
): Promise<ChangeEmailResult> {
  const conf = ctx.config().user.changeEmail
  if (!conf.enabled) throw accountError(400, 'CHANGE_EMAIL_DISABLED')
  // Taking over an account by changing its address should need a recent sign-in (docs/SECURITY.md).
  if (conf.requireFreshSession && !isSessionFresh(ctx, current.session)) throw fail(403, 'SESSION_NOT_FRESH')
  const newEmail = normalizeEmail(input.newEmail)
  if (newEmail === current.user.email) throw accountError(400, 'EMAIL_IS_THE_SAME')
  const unchanged = { user: current.user, changed: false }
  // Before the address is looked up: a refusal here must not depend on whether it has an account.
  const atOnce = !current.user.emailVerified && conf.updateEmailWithoutVerification
  const verificationMail = ctx.config().emailVerification.sendVerificationEmail
  if (current.user.emailVerified ? !conf.sendChangeEmailVerification : !atOnce && !verificationMail) {
    throw emailPasswordError(400, 'VERIFICATION_EMAIL_NOT_ENABLED')
  }
  if (await findUserByEmail(ctx, newEmail)) {
    await createEmailVerificationToken(ctx, { email: current.user.email, updateTo: newEmail, userId: current.user.id })
    await recordAudit(ctx, {
      type: 'user.email-change-requested',
      actorUserId: current.user.id,
      detail: { to: newEmail, refused: 'address taken' },
      meta,
    })
    return unchanged
  }

  if (atOnce) {
    const patch = { email: newEmail, emailVerified: false, updatedAt: new Date(ctx.clock.now()) }
    try {
      await updateUserColumns(ctx, current.user.id, patch)
    } catch (e) {
      // Taken between the check and the write.
      if (e instanceof APIError && e.code === 'USER_ALREADY_EXISTS') throw accountError(400, 'COULDNT_UPDATE_YOUR_EMAIL')
      throw e
    }
    const updated: UserRow = { ...current.user, ...patch }
    await recordAudit(ctx, {
      type: 'user.email-changed',
      actorUserId: updated.id,
      detail: { from: current.user.email, to: newEmail, confirmed: false },
      meta,
    })
    await sendVerificationEmailIfEnabled(ctx, updated, input.callbackURL)
    return { user: updated, changed: true }
  }

  if (!current.user.emailVerified) {
    await sendChangeEmailVerification(ctx, current.user, newEmail, input.callbackURL)
    await recordAudit(ctx, {
      type: 'user.email-change-requested',
      actorUserId: current.user.id,
      detail: { to: newEmail, via: 'new-address' },
      meta,
    })
    return unchanged
  }

  await sendChangeEmailConfirmation(ctx, current.user, newEmail, input.callbackURL)
  await recordAudit(ctx, { type: 'user.email-change-requested', actorUserId: current.user.id, detail: { to: newEmail }, meta })
  return unchanged
}

// ---------------------------------------------------------------------------------------------
// Deletion

export type DeleteUserMessage = 'User deleted' | 'Verification email sent'

const deleteIdentifier = (token: string) => `delete-account-${token}`

function assertDeleteEnabled(ctx: AuthContext): void {
  if (!ctx.config().user.deleteUser.enabled) throw fail(404, 'NOT_FOUND')
}

/** A user deleting their own account (password, fresh session or mailed token already checked). */
async function deleteOwnAccount(ctx: AuthContext, userId: string, meta: RequestMeta): Promise<void> {
  await deleteUserRows(ctx, userId, { actorUserId: userId, meta })
  await recordAudit(ctx, { type: 'user.deleted', actorUserId: userId, targetUserId: userId, meta })
}

async function deleteWithToken(ctx: AuthContext, current: SessionWithUser, token: string, meta: RequestMeta): Promise<void> {
  if (!(await consumeVerification(ctx, deleteIdentifier(token), current.user.id))) throw fail(404, 'INVALID_TOKEN')
  await deleteOwnAccount(ctx, current.user.id, meta)
}

/**
 * POST /delete-user. Order as better-auth: a given password is checked first; a token deletes
 * through the mailed-link logic; with `sendDeleteAccountVerification` a link is mailed (a user
 * with a password must give it); otherwise the password or a fresh session authorises deletion.
 */
export async function deleteUser(
  ctx: AuthContext,
  current: SessionWithUser,
  input: { password?: string; token?: string; callbackURL?: string | null },
  meta: RequestMeta,
): Promise<DeleteUserMessage> {
  assertDeleteEnabled(ctx)
  const conf = ctx.config().user.deleteUser
  if (input.password) await assertCurrentPassword(ctx, current.user.id, input.password, meta, 'user.deleted', 'password')
  if (input.token) {
    await deleteWithToken(ctx, current, input.token, meta)
    return 'User deleted'
  }
  if (conf.sendDeleteAccountVerification) {
    if (!input.password && (await findCredentialAccount(ctx, current.user.id))?.password) {
      throw accountError(400, 'USER_ALREADY_HAS_PASSWORD')
    }
    const token = generateLowerToken(32)
    await createVerification(ctx, deleteIdentifier(token), current.user.id, conf.deleteTokenExpiresIn)
    const url = `${ctx.baseURL}/delete-user/callback?token=${token}&callbackURL=${encodeURIComponent(input.callbackURL || '/')}`
    await ctx.mailer.send(deleteAccountEmail(ctx.config().mail.appName, current.user, url, conf.deleteTokenExpiresIn))
    await recordAudit(ctx, { type: 'user.delete-requested', actorUserId: current.user.id, meta })
    return 'Verification email sent'
  }
  if (!input.password && !isSessionFresh(ctx, current.session)) throw accountError(400, 'SESSION_EXPIRED')
  await deleteOwnAccount(ctx, current.user.id, meta)
  return 'User deleted'
}

/** GET /delete-user/callback: the mailed link, opened while signed in as the same user. */
export async function confirmDeleteUser(
  ctx: AuthContext,
  current: SessionWithUser | null,
  token: string,
  meta: RequestMeta,
): Promise<void> {
  assertDeleteEnabled(ctx)
  if (!current) throw fail(404, 'FAILED_TO_GET_USER_INFO')
  await deleteWithToken(ctx, current, token, meta)
}

// ---------------------------------------------------------------------------------------------
// Linked accounts

export interface PublicAccount {
  id: string
  /** better-auth 1.2 name */
  provider: string
  /** current better-auth name */
  providerId: string
  accountId: string
  userId: string
  createdAt: Date
  updatedAt: Date
  scopes: string[]
}

export async function listAccounts(ctx: AuthContext, userId: string): Promise<PublicAccount[]> {
  return (await listAccountRows(ctx, userId)).map((a) => ({
    id: a.id,
    provider: a.providerId,
    providerId: a.providerId,
    accountId: a.accountId,
    userId: a.userId,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    scopes: a.scope ? a.scope.split(',').filter(Boolean) : [],
  }))
}

/**
 * POST /unlink-account. Accepts both wire shapes: 1.2's `{providerId, accountId?}` (accountId =
 * the provider's id for the account) and the current `{accountId}` (our account row id). The
 * last account stays unless `account.accountLinking.allowUnlinkingAll`.
 */
export async function unlinkAccount(
  ctx: AuthContext,
  current: SessionWithUser,
  input: { providerId?: string; accountId?: string },
  meta: RequestMeta,
): Promise<void> {
  const accounts = await listAccountRows(ctx, current.user.id)
  if (accounts.length === 1 && !ctx.config().account.accountLinking.allowUnlinkingAll) {
    throw accountError(400, 'FAILED_TO_UNLINK_LAST_ACCOUNT')
  }
  const match = accounts.find((a) =>
    input.providerId !== undefined
      ? a.providerId === input.providerId && (input.accountId === undefined || a.accountId === input.accountId || a.id === input.accountId)
      : a.id === input.accountId,
  )
  if (!match) throw fail(400, 'ACCOUNT_NOT_FOUND')
  await deleteAccountRow(ctx, match.id)
  await recordAudit(ctx, {
    type: 'account.unlinked',
    actorUserId: current.user.id,
    target: match.id,
    detail: { providerId: match.providerId },
    meta,
  })
}
