/**
 * The magic-link plugin's refusals. GET /magic-link/verify answers them as a redirect to the error
 * callback URL with `?error=<code>` (better-auth's redirectWithError), never as JSON.
 */
export const MAGIC_LINK_ERRORS = {
  INVALID_TOKEN: 'Invalid token',
  new_user_signup_disabled: 'Sign up is disabled for this address',
  failed_to_create_user: 'Failed to create user',
  user_not_found: 'User not found',
  two_factor_required: 'A second factor is required',
} as const

export type MagicLinkErrorKey = keyof typeof MAGIC_LINK_ERRORS
