import type { AuthContext } from './context.js'
import { hooksWith } from '../http/feature-hooks.js'

/**
 * Whether a new account may be created for an address now (issue 47 §2, config `signUp.mode`):
 * the one rule every way of signing up asks before it creates the user (email and password,
 * social and generic OAuth, magic link, email code). Each answers a refusal in its own protocol's
 * words (better-auth's "sign-up disabled" code for `closed`). With `invitation`, an address is
 * invited when a feature says so (`invitesSignUp`: a pending organization invitation, an admin's
 * sign-up invitation). Admin-created and imported users are not sign-ups.
 */
export type SignUpRefusal = 'closed' | 'invitation-required'

export async function signUpRefusal(ctx: AuthContext, email: string): Promise<SignUpRefusal | null> {
  const mode = ctx.config().signUp.mode
  if (mode === 'open') return null
  if (mode === 'closed') return 'closed'
  const address = email.trim().toLowerCase()
  for (const feature of hooksWith(ctx, 'invitesSignUp')) if (await feature.invitesSignUp(ctx, address)) return null
  return 'invitation-required'
}

/**
 * Whether anyone who reaches the server can create an account now (`signUp.mode` open and a way
 * to sign up enabled: `methods`), and whether an email must be verified before the account is
 * signed in (`verificationRequired`) or before the apps are told of it (`appsRequireVerified`). The
 * Overview and the start-up log say so.
 */
export interface SignUpExposure {
  mode: 'open' | 'invitation' | 'closed'
  open: boolean
  methods: string[]
  verificationRequired: boolean
  /** identity.requireVerifiedEmail: the faces (forward auth, SAML, LDAP, OIDC) vouch only for a verified address. */
  appsRequireVerified: boolean
}

export function signUpExposure(ctx: AuthContext): SignUpExposure {
  const config = ctx.config()
  const methods: string[] = []
  if (config.emailAndPassword.enabled && !config.emailAndPassword.disableSignUp) methods.push('email and password')
  if (config.magicLink.enabled && !config.magicLink.disableSignUp) methods.push('magic link')
  if (config.emailOTP.enabled && !config.emailOTP.disableSignUp) methods.push('email code')
  for (const [id, provider] of Object.entries(config.socialProviders)) {
    if (provider?.enabled && provider.clientId && !provider.disableSignUp) methods.push(id)
  }
  const mode = config.signUp.mode
  return {
    mode,
    open: mode === 'open' && methods.length > 0,
    methods,
    verificationRequired: config.emailAndPassword.requireEmailVerification,
    appsRequireVerified: config.identity.requireVerifiedEmail,
  }
}
