/** Audit events as sentences: what happened, and the detail as readable text instead of JSON. */

const TITLES: Record<string, string> = {
  'user.sign-up': 'Signed up',
  'user.sign-in': 'Signed in',
  'user.sign-out': 'Signed out',
  'user.updated': 'Profile updated',
  'user.deleted': 'Account deleted',
  'user.delete-requested': 'Asked to delete the account',
  'user.password-changed': 'Changed the password',
  'user.password-set': 'Password set',
  'user.password-reset': 'Reset the password',
  'user.password-reset-requested': 'Asked for a password reset',
  'user.email-verified': 'Verified the email address',
  'user.verification-email-sent': 'Verification email sent',
  'user.email-change-requested': 'Asked to change the email address',
  'user.email-changed': 'Email address changed',
  'session.revoked': 'Session ended',
  'session.revoked-all': 'Every session ended',
  'session.revoked-others': 'Other sessions ended',
  'session.expired': 'Session expired',
  'account.linked': 'Provider account linked',
  'account.unlinked': 'Provider account unlinked',
  'security.rate-limited': 'Too many requests',
  'security.csrf-refused': 'Request from an untrusted origin refused',
  'security.account-locked': 'Account locked after failed passwords',
  'security.account-unlocked': 'Account unlocked',
  'admin.impersonate-user': 'Impersonation started',
  'admin.stop-impersonating': 'Impersonation ended',
  'provider.test-sign-in': 'Provider test sign-in',
  'oidc.token-issued': 'Token issued to an application (single sign-on)',
  'oidc.token-refused': 'Token refused to an application',
  'oidc.code-issued': 'Signed in to an application (single sign-on)',
  'oidc.authorization-refused': 'Application sign-in refused',
  'oidc.access-denied': 'Not allowed to use an application',
  'oidc.consent-granted': 'Allowed an application',
  'oidc.consent-denied': 'Denied an application',
  'oidc.grant-revoked': 'Application access revoked',
  'oidc.signed-out': 'Signed out of an application',
  'oidc.client-created': 'Application registered (single sign-on)',
  'oidc.client-updated': 'Application changed',
  'oidc.client-secret-rotated': 'Application secret rotated',
  'oidc.client-deleted': 'Application deleted',
  'config.changed': 'Configuration changed',
}

/** Failure codes in words. */
const REASONS: Record<string, string> = {
  INVALID_PASSWORD: 'wrong password',
  INVALID_EMAIL_OR_PASSWORD: 'wrong email or password',
  UNKNOWN_EMAIL: 'no account with this email',
  EMAIL_NOT_VERIFIED: 'email not verified yet',
  USER_ALREADY_EXISTS: 'the email is already registered',
  BANNED_USER: 'the user is banned',
  ACCOUNT_LOCKED: 'the account is locked',
  signup_disabled: 'sign-up is closed',
  account_not_linked: 'the provider account is not linked',
}

const humanize = (text: string) =>
  text
    .replace(/[._-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase())

export function eventTitle(type: string): string {
  return TITLES[type] ?? humanize(type)
}

const PROVIDER_NAMES: Record<string, string> = { github: 'GitHub', gitlab: 'GitLab', linkedin: 'LinkedIn', tiktok: 'TikTok', vk: 'VK' }
const providerName = (id: string) => PROVIDER_NAMES[id] ?? id.charAt(0).toUpperCase() + id.slice(1)

function value(v: unknown): string {
  if (v === null || v === undefined) return '—'
  if (typeof v === 'boolean') return v ? 'yes' : 'no'
  if (Array.isArray(v)) return v.map(value).join(', ')
  // An object (a generic OAuth provider in a config change): its fields in words, no JSON.
  if (typeof v === 'object')
    return `(${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k} ${value(x)}`)
      .join(', ')})`
  return String(v)
}

/** A configuration value before or after a change: an empty list says so. */
const changed = (v: unknown): string => (Array.isArray(v) && v.length === 0 ? '(none)' : value(v))

/** The detail as a short sentence, e.g. "Reason: wrong password · email: ada@example.com". */
export function eventDetail(detail: Record<string, unknown> | null): string {
  if (!detail) return ''
  const parts: string[] = []
  for (const [key, v] of Object.entries(detail)) {
    if (key === 'concealed' || (key === 'keys' && Array.isArray(detail.changes))) continue
    if (key === 'changes' && Array.isArray(v)) {
      // config.changed: each key with its old and new value (secrets arrive masked).
      for (const c of v as Array<{ key: string; from: unknown; to: unknown }>) parts.push(`${c.key}: ${changed(c.from)} → ${changed(c.to)}`)
      continue
    }
    if (key === 'reason' && typeof v === 'string') parts.push(`Reason: ${REASONS[v] ?? v}${REASONS[v] ? ` (${v})` : ''}`)
    else if ((key === 'provider' || key === 'providerId') && typeof v === 'string') parts.push(`with ${providerName(v)}`)
    else if (key === 'via' || key === 'actor')
      continue // the Actor column says who and through what
    else if (key === 'revokedSessions')
      parts.push(typeof v === 'number' ? `${v} sessions ended` : v ? 'other sessions ended' : 'other sessions kept')
    else if (key === 'fields' && Array.isArray(v)) parts.push(`changed: ${v.join(', ')}`)
    else parts.push(`${humanize(key).toLowerCase()}: ${value(v)}`)
  }
  return parts.join(' · ')
}

/**
 * Who acted when no user did, in words: the desktop's OS account (`os:<name>`), the start-up
 * (recovery) link, or the channel a change came through (`via`: the panel, the server, the start).
 */
export function actorName(label: string): string {
  if (label.startsWith('os:')) return `${label.slice(3)} (this computer's account)`
  if (label === 'recovery-link') return 'the start-up link'
  if (label === 'start') return 'the start-up options'
  return `the ${label}`
}
