import type { RequestMeta } from './context.js'

/**
 * Credentials that stand beside the password (app passwords) die with the steps that evict an
 * intruder (issue 47 §4): a password change or reset, an admin's set-password, a ban, "revoke all
 * sessions", a proof of the email's ownership that strips unproven access, and deleting the person.
 * Each of those steps calls `credentialsRevoked` once; the features that keep such credentials
 * (their `credentialsRevoked` hook, attached per context by features-of.ts) revoke and audit them.
 * Its own module, as session-ends.ts, because core's users and sessions modules call it and the
 * Feature type names them. Tool contexts (the CLI) attach nothing: no CLI command takes such a step.
 */

/**
 * Why: `password-changed` the person changed it themself (the one reason
 * `appPasswords.keepOnPasswordChange` may keep app passwords across); `password-reset` a mailed
 * link or code; `password-set` an admin (set-user-password, the panel); `banned`;
 * `sessions-revoked` the person's revoke-sessions or an admin's revoke-user-sessions;
 * `email-proven` an email-primary proof reached an unverified account (its unproven access goes);
 * `deleted` the person is deleted.
 */
export type RevocationReason =
  | 'password-changed'
  | 'password-reset'
  | 'password-set'
  | 'banned'
  | 'sessions-revoked'
  | 'email-proven'
  | 'deleted'

export interface CredentialRevocation {
  userId: string
  reason: RevocationReason
  /** Who took the step (the person, an admin); null when no signed-in user did (the panel's caller is named by the audit). */
  actorUserId: string | null
  meta: RequestMeta | null
}

type Listener = (ctx: object, revocation: CredentialRevocation) => Promise<void>

const listeners = new WeakMap<object, Listener>()

export function setCredentialRevocationListener(ctx: object, listener: Listener): void {
  listeners.set(ctx, listener)
}

/** The user's credentials beside the password are revoked; joins the caller's transaction (listeners only run queries). */
export async function credentialsRevoked(ctx: object, revocation: CredentialRevocation): Promise<void> {
  await listeners.get(ctx)?.(ctx, revocation)
}
