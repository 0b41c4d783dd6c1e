import type { AuthContext, RequestMeta } from '../../core/context.js'
import { normalizeEmail } from '../../core/user-store.js'
import { assertValidEmail } from '../../core/users.js'
import { createVerification, deleteVerifications, findVerification } from '../../core/verification.js'
import { randomString } from '../../crypto/random.js'
import { type Actor, audit, authorize } from './actor.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

/**
 * An administrator's sign-up invitation (issue 47 §2): with `signUp.mode: "invitation"`, the
 * address may create its account (any way of signing up) until the invitation expires. Stored in
 * the verification table as `sign-up-invitation:<email>`; the link the admin sends or copies opens
 * the hosted sign-up page with the address filled in. Made from the panel (Users) and by
 * `gatehouse user invite --email <email>`; needs `user:create`.
 */
export const SIGN_UP_INVITATION_TTL = 7 * 86_400

const identifier = (email: string) => `sign-up-invitation:${email}`

export interface SignUpInvitation {
  email: string
  /** The hosted sign-up page for this address. */
  link: string
  expiresAt: number
}

export async function inviteToSignUp(
  ctx: AuthContext,
  actor: Actor,
  input: { email: string },
  meta: RequestMeta | null,
): Promise<SignUpInvitation> {
  const event = { type: 'admin.invite-sign-up', meta }
  await authorize(ctx, actor, ['user', 'create'], 'YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS', event)
  assertValidEmail(input.email)
  const email = normalizeEmail(input.email)
  // A new invitation replaces the address's earlier one (its link keeps working: the address is what counts).
  await deleteVerifications(ctx, identifier(email))
  const row = await createVerification(ctx, identifier(email), randomString(32), SIGN_UP_INVITATION_TTL)
  await audit(ctx, actor, event, { detail: { email, expiresAt: row.expiresAt.toISOString() } })
  return { email, link: hostedPageURL(ctx, 'sign-up', { email, invitation: row.value }), expiresAt: row.expiresAt.getTime() }
}

/** Whether the (lower-cased) address holds an unexpired sign-up invitation: the admin feature's `invitesSignUp`. */
export async function invitedToSignUp(ctx: AuthContext, email: string): Promise<boolean> {
  return (await findVerification(ctx, identifier(email))) !== undefined
}
