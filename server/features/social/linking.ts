import { signUpRefusal } from '../../core/sign-up-gate.js'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { findUserByEmail, findUserById, insertUser, normalizeEmail } from '../../core/users.js'
import { encryptSecret, revealSecret } from '../../crypto/encrypt.js'
import { generateId } from '../../crypto/random.js'
import { type CallbackErrorCode, OAuthFlowError } from './errors.js'
import type { ProviderOptions } from './options.js'
import { type AccountRow, findProviderAccount, insertAccount as insertAccountRow, updateAccount, updateUserProfile } from './store.js'
import type { MappedUser, OAuthTokens } from './types.js'

export type { AccountRow } from './store.js'

const TOKEN_PURPOSE = 'oauth-token'

/** Provider tokens are sealed before they reach the database (encryption at rest). */
export function sealToken(ctx: AuthContext, token: string | undefined | null): string | null | undefined {
  if (token === undefined) return undefined
  if (token === null) return null
  return encryptSecret(ctx.secret, token, TOKEN_PURPOSE)
}

/** Opens a stored token; tokens stored in clear (an imported better-auth database) are read as is. */
export const openToken = (ctx: AuthContext, stored: string | null): string | null => revealSecret(ctx.secret, stored, TOKEN_PURPOSE)

/** The account columns a token set updates; undefined values leave a column unchanged. */
export function tokenColumns(ctx: AuthContext, tokens: OAuthTokens) {
  const columns: Partial<AccountRow> = {}
  if (tokens.accessToken !== undefined) columns.accessToken = sealToken(ctx, tokens.accessToken)
  if (tokens.refreshToken !== undefined) columns.refreshToken = sealToken(ctx, tokens.refreshToken)
  if (tokens.idToken !== undefined) columns.idToken = sealToken(ctx, tokens.idToken)
  if (tokens.accessTokenExpiresAt !== undefined) columns.accessTokenExpiresAt = tokens.accessTokenExpiresAt
  if (tokens.refreshTokenExpiresAt !== undefined) columns.refreshTokenExpiresAt = tokens.refreshTokenExpiresAt
  if (tokens.scopes.length > 0) columns.scope = tokens.scopes.join(',')
  return columns
}

async function insertAccount(
  ctx: AuthContext,
  userId: string,
  providerId: string,
  profile: MappedUser,
  tokens: OAuthTokens,
): Promise<AccountRow> {
  const now = new Date(ctx.clock.now())
  const row = {
    id: generateId(),
    accountId: profile.id,
    providerId,
    userId,
    accessToken: null,
    refreshToken: null,
    idToken: null,
    accessTokenExpiresAt: null,
    refreshTokenExpiresAt: null,
    scope: null,
    password: null,
    createdAt: now,
    updatedAt: now,
    ...tokenColumns(ctx, tokens),
  } satisfies AccountRow
  await insertAccountRow(ctx, row)
  return row
}

export async function updateAccountTokens(ctx: AuthContext, row: AccountRow, tokens: OAuthTokens): Promise<void> {
  await updateAccount(ctx, row.id, { ...tokenColumns(ctx, tokens), updatedAt: new Date(ctx.clock.now()) })
}

/** SPEC §5 Account linking: not disabled, and the provider is trusted or vouches for the email. */
function linkingAllowed(ctx: AuthContext, providerId: string, profile: MappedUser): boolean {
  const linking = ctx.config().account.accountLinking
  return linking.enabled && (linking.trustedProviders.includes(providerId) || profile.emailVerified)
}

export interface SignInInput {
  providerId: string
  options: ProviderOptions
  profile: MappedUser
  tokens: OAuthTokens
  requestSignUp: boolean
  meta: RequestMeta
}

/**
 * SPEC §4 Social sign-in: finds the user by the provider account, else by email (linking the
 * account when the rules allow), else creates the user with the account. Errors carry the
 * callback's error codes (account_not_linked, signup_disabled, unable_to_create_user…).
 */
export async function findOrCreateOAuthUser(ctx: AuthContext, input: SignInInput): Promise<{ user: UserRow; isNew: boolean }> {
  const { providerId, profile, tokens, options, meta } = input
  const linked = await findProviderAccount(ctx, providerId, profile.id)
  if (linked) {
    const owner = await findUserById(ctx, linked.userId)
    if (!owner) throw new OAuthFlowError('internal_server_error')
    await updateAccountTokens(ctx, linked, tokens)
    if (options.overrideUserInfoOnSignIn) {
      const patch = { name: profile.name || owner.name, image: profile.image ?? owner.image, updatedAt: new Date(ctx.clock.now()) }
      await updateUserProfile(ctx, owner.id, patch)
      return { user: { ...owner, ...patch }, isNew: false }
    }
    return { user: owner, isNew: false }
  }

  const email = profile.email ? normalizeEmail(profile.email) : null
  const existing = email ? await findUserByEmail(ctx, email) : undefined
  if (existing) {
    if (!linkingAllowed(ctx, providerId, profile)) {
      await recordAudit(ctx, {
        type: 'account.linked',
        outcome: 'failure',
        targetUserId: existing.id,
        detail: { provider: providerId, reason: 'account_not_linked' },
        meta,
      })
      throw new OAuthFlowError('account_not_linked')
    }
    try {
      await insertAccount(ctx, existing.id, providerId, profile, tokens)
    } catch {
      throw new OAuthFlowError('unable_to_link_account')
    }
    await recordAudit(ctx, {
      type: 'account.linked',
      actorUserId: existing.id,
      detail: { provider: providerId, accountId: profile.id },
      meta,
    })
    return { user: existing, isNew: false }
  }

  if (options.disableSignUp || (options.disableImplicitSignUp && !input.requestSignUp)) {
    await recordAudit(ctx, { type: 'user.sign-up', outcome: 'failure', detail: { provider: providerId, reason: 'signup_disabled' }, meta })
    throw new OAuthFlowError('signup_disabled')
  }
  if (!email) throw new OAuthFlowError('email_not_found')
  const refusal = await signUpRefusal(ctx, email)
  if (refusal) {
    await recordAudit(ctx, { type: 'user.sign-up', outcome: 'failure', detail: { provider: providerId, reason: refusal }, meta })
    throw new OAuthFlowError(refusal === 'closed' ? 'signup_disabled' : 'invitation_required')
  }
  let created: UserRow
  try {
    // The user and its provider account together: a user without a way in is never left behind.
    created = await ctx.storage.transaction(async () => {
      const row = await insertUser(
        ctx,
        { name: profile.name || email, email, image: profile.image, emailVerified: profile.emailVerified },
        null,
      )
      await insertAccount(ctx, row.id, providerId, profile, tokens)
      return row
    })
  } catch {
    throw new OAuthFlowError('unable_to_create_user')
  }
  await recordAudit(ctx, { type: 'user.sign-up', actorUserId: created.id, detail: { provider: providerId }, meta })
  return { user: created, isNew: true }
}

export interface LinkInput {
  providerId: string
  profile: MappedUser
  tokens: OAuthTokens
  link: { userId: string; email: string }
  meta: RequestMeta
}

/** /link-social's callback: attaches the provider account to the signed-in user who started it. */
export async function linkOAuthAccount(ctx: AuthContext, input: LinkInput): Promise<void> {
  const { providerId, profile, tokens, link, meta } = input
  const fail = async (code: CallbackErrorCode): Promise<never> => {
    await recordAudit(ctx, {
      type: 'account.linked',
      outcome: 'failure',
      targetUserId: link.userId,
      detail: { provider: providerId, reason: code },
      meta,
    })
    throw new OAuthFlowError(code)
  }
  const existing = await findProviderAccount(ctx, providerId, profile.id)
  if (existing) {
    if (existing.userId !== link.userId) await fail('account_already_linked_to_different_user')
    await updateAccountTokens(ctx, existing, tokens)
    return
  }
  if (!linkingAllowed(ctx, providerId, profile)) await fail('unable_to_link_account')
  const sameEmail = profile.email !== null && normalizeEmail(profile.email) === normalizeEmail(link.email)
  if (!sameEmail && !ctx.config().account.accountLinking.allowDifferentEmails) await fail("email_doesn't_match")
  if (!(await findUserById(ctx, link.userId))) await fail('unable_to_link_account')
  try {
    await insertAccount(ctx, link.userId, providerId, profile, tokens)
  } catch {
    return fail('unable_to_link_account')
  }
  await recordAudit(ctx, {
    type: 'account.linked',
    actorUserId: link.userId,
    detail: { provider: providerId, accountId: profile.id },
    meta,
  })
}
