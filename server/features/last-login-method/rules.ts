import type { SignInAttempt } from '../../core/sign-in.js'

/**
 * The value better-auth's last-login-method plugin records for a sign-in, from Gatehouse's
 * attempt. better-auth derives it from the request path (defaultResolveMethod): /sign-in/email and
 * /sign-up/email → `email`, a provider's /callback/:id → the provider id, the passkey
 * authentication → `passkey`, /magic-link/verify → `magic-link`, /sign-in/email-otp → `email-otp`;
 * every other path (username, a two-factor step, email verification, anonymous, one-time token)
 * records nothing, and so do we.
 */
export function lastLoginMethodOf(attempt: SignInAttempt): string | null {
  switch (attempt.method) {
    case 'email':
    case 'passkey':
    case 'magic-link':
    case 'email-otp':
      return attempt.method
    case 'social': {
      const provider = attempt.detail?.provider
      return typeof provider === 'string' ? provider : null
    }
    default:
      return null
  }
}
