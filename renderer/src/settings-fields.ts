/** Labels, help and editors for the configuration keys (SPEC §9 names); unknown keys get a generic editor. */
export type FieldKind = 'switch' | 'inverted' | 'number' | 'seconds' | 'text' | 'tags' | 'select' | 'json' | 'tristate'

export interface FieldSpec {
  path: string
  label: string
  description?: string
  kind: FieldKind
  options?: Array<{ value: string; label: string }>
  min?: number
}

export interface SectionSpec {
  id: string
  title: string
  description: string
  fields: FieldSpec[]
}

export const SECTIONS: SectionSpec[] = [
  {
    id: 'requests',
    title: 'Requests and CSRF',
    description: 'How requests from browsers are checked before any endpoint runs.',
    fields: [
      {
        path: 'advanced.disableCSRFCheck',
        label: 'Check the Origin of POST requests',
        description: 'Refuses cookie-carrying POSTs (and sign-in/up) from origins that are not trusted. Keep this on.',
        kind: 'inverted',
      },
      { path: 'disabledPaths', label: 'Disabled paths', description: 'Endpoints that answer 404, e.g. /sign-up/email', kind: 'tags' },
      { path: 'advanced.ipAddress.ipAddressHeaders', label: 'Client IP headers', kind: 'tags' },
      { path: 'advanced.ipAddress.trustedProxies', label: 'Trusted proxies', description: 'Peers whose forwarding headers are believed (addresses or CIDR ranges).', kind: 'tags' },
      { path: 'advanced.ipAddress.disableIpTracking', label: 'Do not record IP addresses', kind: 'switch' },
    ],
  },
  {
    id: 'rate-limit',
    title: 'Rate limiting',
    description: 'Requests per client and path in a sliding window; strict paths get their own rule.',
    fields: [
      { path: 'rateLimit.enabled', label: 'Rate limiting enabled', kind: 'switch' },
      { path: 'rateLimit.window', label: 'Window', kind: 'seconds', min: 1 },
      { path: 'rateLimit.max', label: 'Requests per window', kind: 'number', min: 1 },
      {
        path: 'rateLimit.storage',
        label: 'Storage',
        description: 'Memory is fastest; database survives restarts.',
        kind: 'select',
        options: [
          { value: 'memory', label: 'Memory' },
          { value: 'database', label: 'Database (rateLimit table)' },
        ],
      },
      { path: 'rateLimit.strictPaths', label: 'Strict paths (prefix match)', kind: 'tags' },
      { path: 'rateLimit.strict.window', label: 'Strict window', kind: 'seconds', min: 1 },
      { path: 'rateLimit.strict.max', label: 'Strict requests per window', kind: 'number', min: 1 },
      {
        path: 'rateLimit.customRules',
        label: 'Custom rules',
        description: 'Path (or prefix ending in *) → {"window": seconds, "max": requests}',
        kind: 'json',
      },
    ],
  },
  {
    id: 'passwords',
    title: 'Passwords and sign-up',
    description: 'Email and password accounts.',
    fields: [
      { path: 'emailAndPassword.enabled', label: 'Email and password sign-in', kind: 'switch' },
      { path: 'emailAndPassword.disableSignUp', label: 'Disable sign-up', kind: 'switch' },
      { path: 'emailAndPassword.minPasswordLength', label: 'Minimum password length', kind: 'number', min: 1 },
      { path: 'emailAndPassword.maxPasswordLength', label: 'Maximum password length', kind: 'number', min: 1 },
      { path: 'emailAndPassword.requireEmailVerification', label: 'Require a verified email to sign in', kind: 'switch' },
      { path: 'emailAndPassword.autoSignIn', label: 'Sign in right after sign-up', kind: 'switch' },
      { path: 'emailAndPassword.resetPasswordTokenExpiresIn', label: 'Password reset link lifetime', kind: 'seconds' },
      { path: 'emailAndPassword.revokeSessionsOnPasswordReset', label: 'Revoke sessions on password reset', kind: 'switch' },
      { path: 'emailAndPassword.sendResetPassword', label: 'Password reset by email', kind: 'switch' },
      { path: 'emailVerification.sendVerificationEmail', label: 'Verification emails', kind: 'switch' },
      { path: 'emailVerification.sendOnSignUp', label: 'Send a verification email on sign-up', kind: 'switch' },
      { path: 'emailVerification.autoSignInAfterVerification', label: 'Sign in after verification', kind: 'switch' },
      { path: 'emailVerification.expiresIn', label: 'Verification link lifetime', kind: 'seconds' },
    ],
  },
  {
    id: 'sessions',
    title: 'Sessions and cookies',
    description: 'Lifetimes are in seconds. Changes apply to the next request.',
    fields: [
      { path: 'session.expiresIn', label: 'Session lifetime', kind: 'seconds' },
      { path: 'session.updateAge', label: 'Refresh after', kind: 'seconds' },
      { path: 'session.freshAge', label: 'Fresh for', description: '0 disables the freshness check.', kind: 'seconds' },
      { path: 'session.disableSessionRefresh', label: 'Never extend sessions', kind: 'switch' },
      { path: 'session.cookieCache.enabled', label: 'Session data cookie cache', kind: 'switch' },
      { path: 'session.cookieCache.maxAge', label: 'Cookie cache lifetime', kind: 'seconds' },
      { path: 'advanced.cookiePrefix', label: 'Cookie prefix', description: 'Cookie names are <prefix>.session_token and so on.', kind: 'text' },
      { path: 'advanced.useSecureCookies', label: 'Secure cookies', kind: 'tristate' },
    ],
  },
  {
    id: 'accounts',
    title: 'Users and accounts',
    description: 'What signed-in users may do with their own account.',
    fields: [
      { path: 'user.changeEmail.enabled', label: 'Users may change their email', kind: 'switch' },
      { path: 'user.deleteUser.enabled', label: 'Users may delete their account', kind: 'switch' },
      { path: 'user.deleteUser.deleteTokenExpiresIn', label: 'Account deletion link lifetime', kind: 'seconds' },
      { path: 'account.accountLinking.enabled', label: 'Account linking', kind: 'switch' },
      { path: 'account.accountLinking.trustedProviders', label: 'Providers trusted for linking', kind: 'tags' },
      { path: 'account.accountLinking.allowDifferentEmails', label: 'Allow linking different emails', kind: 'switch' },
      { path: 'account.accountLinking.allowUnlinkingAll', label: 'Allow unlinking the last account', kind: 'switch' },
      {
        path: 'user.additionalFields',
        label: 'Additional user fields',
        description: 'name → {"type": "string"|"number"|"boolean"|"date", "required", "defaultValue", "input"}',
        kind: 'json',
      },
    ],
  },
]

/** Keys edited elsewhere: their own section (trusted origins), read-only, or another view. */
/** Titles of the generic sections (one per top-level key that no curated section covers). */
export const GROUP_TITLES: Record<string, { title: string; description: string }> = {
  admin: { title: 'Administration and roles', description: 'Who counts as an administrator, roles, bans and impersonation.' },
  organization: { title: 'Organizations', description: 'Creation, limits, invitations, teams and custom roles.' },
  username: { title: 'Usernames', description: 'Sign-in with a username.' },
  security: { title: 'Defences', description: 'Password-hash queue, account lockout and common-password rejection.' },
  verification: { title: 'Verification records', description: 'One-time tokens for resets, deletions and OAuth state.' },
  emailVerification: { title: 'Email verification', description: 'Verification links.' },
  user: { title: 'Users', description: 'Account self-service.' },
}

export const HANDLED_ELSEWHERE = ['trustedOrigins', 'basePath', 'socialProviders', 'providers', 'mail', 'email', 'smtp']

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export function getPath(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), value)
}

const humanize = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/^./, (c) => c.toUpperCase())
    .replace(/\bIn\b$/, 'in (seconds)')

/** Leaves of the effective config that no curated section covers (new features' keys). */
export function otherFields(effective: Json): FieldSpec[] {
  const curated = new Set(SECTIONS.flatMap((s) => s.fields.map((f) => f.path)))
  const out: FieldSpec[] = []
  const walk = (value: unknown, path: string) => {
    if (curated.has(path)) return
    if (HANDLED_ELSEWHERE.includes(path.split('.')[0] ?? '')) return
    if (isPlainObject(value) && Object.keys(value).length > 0 && !path.endsWith('Fields') && !path.endsWith('Rules')) {
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k)
      return
    }
    if (!path) return
    const key = path.split('.').pop() ?? path
    const label = [...path.split('.').slice(1, -1).map(humanize), humanize(key)].join(' › ')
    const kind: FieldKind =
      typeof value === 'boolean'
        ? 'switch'
        : typeof value === 'number'
          ? /(expiresIn|Age|window)$/i.test(key)
            ? 'seconds'
            : 'number'
          : typeof value === 'string'
            ? 'text'
            : Array.isArray(value) && value.every((v) => typeof v === 'string')
              ? 'tags'
              : 'json'
    out.push({ path, label, kind })
  }
  walk(effective, '')
  return out
}

/** The nested patch that turns `before` into `after` (arrays and records replace whole). */
/** The change from `before` to `after` as a JSON Merge Patch: a removed key becomes `null`. */
export function diff(before: unknown, after: unknown): unknown {
  if (isPlainObject(before) && isPlainObject(after)) {
    const out: Json = {}
    for (const key of Object.keys(after)) {
      const d = diff(before[key], after[key])
      if (d !== undefined) out[key] = d
    }
    for (const key of Object.keys(before)) if (!(key in after)) out[key] = null
    return Object.keys(out).length ? out : undefined
  }
  return JSON.stringify(before) === JSON.stringify(after) ? undefined : after
}
