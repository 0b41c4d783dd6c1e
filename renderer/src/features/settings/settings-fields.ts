/**
 * The Settings area: every configuration key (SPEC §9 names) in a section, with a human label and
 * one line of help. tests/panel/settings-fields.test.ts walks the config schema and proves that
 * each leaf key has a field here or is listed in EDITED_ELSEWHERE.
 */
export type FieldKind =
  | 'switch'
  | 'inverted'
  | 'number'
  /** A number that may be left empty (the key is removed, its default applies). */
  | 'optional-number'
  | 'seconds'
  | 'optional-seconds'
  | 'text'
  | 'optional-text'
  | 'tags'
  | 'select'
  | 'json'
  | 'tristate'
  | 'origins'

export interface FieldSpec {
  path: string
  label: string
  /** One line of help under the label. */
  help: string
  kind: FieldKind
  options?: Array<{ value: string; label: string }>
  /** select: the key may be left unset (its default applies); this option's label says what that means. */
  unsetLabel?: string
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
    id: 'application',
    title: 'Application and URLs',
    description: 'Which web apps may use this server, and how requests reach it.',
    fields: [
      {
        path: 'trustedOrigins',
        label: 'Trusted origins',
        help: 'Web apps allowed to sign users in and receive redirects, e.g. https://app.example.com, *.example.com or myapp://.',
        kind: 'origins',
      },
      {
        path: 'advanced.disableCSRFCheck',
        label: 'Check where form posts come from',
        help: 'Refuses sign-ins and cookie-carrying posts from origins that are not trusted. Keep this on.',
        kind: 'inverted',
      },
      { path: 'disabledPaths', label: 'Turned-off endpoints', help: 'Endpoints that answer 404, e.g. /sign-up/email.', kind: 'tags' },
      {
        path: 'advanced.ipAddress.trustedProxies',
        label: 'Reverse proxies',
        help: 'Addresses or ranges (CIDR) of proxies whose forwarded client address is believed.',
        kind: 'tags',
      },
      {
        path: 'advanced.ipAddress.ipAddressHeaders',
        label: 'Client address headers',
        help: 'Headers a trusted proxy puts the client address in.',
        kind: 'tags',
      },
      {
        path: 'advanced.ipAddress.disableIpTracking',
        label: 'Do not record client addresses',
        help: 'Sessions and the audit log keep no IP address.',
        kind: 'switch',
      },
      {
        path: 'hostedPages.enabled',
        label: 'Hosted sign-in pages',
        help: 'Serve the sign-in, sign-up, password reset, consent and sign-out pages under {base path}/ui/.',
        kind: 'switch',
      },
      {
        path: 'appName',
        label: 'Application name on the pages',
        help: 'Shown as the heading of the hosted pages; empty uses the mail application name.',
        kind: 'optional-text',
      },
      {
        path: 'hostedPages.logo',
        label: 'Logo on the pages',
        help: 'An https:// address of an image, or a path on this server; empty shows the name only.',
        kind: 'optional-text',
      },
      {
        path: 'hostedPages.color',
        label: 'Colour of the pages',
        help: 'Buttons and links, as #rrggbb; button text turns black or white to stay readable.',
        kind: 'text',
      },
    ],
  },
  {
    id: 'sign-in',
    title: 'Sign-in and passwords',
    description: 'Email and password accounts, email verification and usernames.',
    fields: [
      {
        path: 'emailAndPassword.enabled',
        label: 'Email and password sign-in',
        help: 'Users sign in with an email address and a password.',
        kind: 'switch',
      },
      {
        path: 'emailAndPassword.disableSignUp',
        label: 'Close sign-up',
        help: 'Only an administrator can create new accounts.',
        kind: 'switch',
      },
      {
        path: 'emailAndPassword.autoSignIn',
        label: 'Sign in right after sign-up',
        help: 'A new account starts with a session.',
        kind: 'switch',
      },
      { path: 'emailAndPassword.minPasswordLength', label: 'Shortest password', help: 'In characters.', kind: 'number', min: 1 },
      { path: 'emailAndPassword.maxPasswordLength', label: 'Longest password', help: 'In characters.', kind: 'number', min: 1 },
      {
        path: 'security.rejectCommonPasswords',
        label: 'Refuse common passwords',
        help: 'Passwords found in a list of the most used ones are refused.',
        kind: 'switch',
      },
      {
        path: 'emailAndPassword.requireEmailVerification',
        label: 'Require a verified email',
        help: 'Users cannot sign in until they follow the link in the verification email.',
        kind: 'switch',
      },
      {
        path: 'emailVerification.sendVerificationEmail',
        label: 'Verification emails',
        help: 'Users can ask for an email that confirms their address.',
        kind: 'switch',
      },
      {
        path: 'emailVerification.sendOnSignUp',
        label: 'Send the verification email at sign-up',
        help: 'Without being asked.',
        kind: 'switch',
      },
      {
        path: 'emailVerification.autoSignInAfterVerification',
        label: 'Sign in when the link is followed',
        help: 'Following the verification link also opens a session.',
        kind: 'switch',
      },
      {
        path: 'emailVerification.expiresIn',
        label: 'Verification link lifetime',
        help: 'How long the link in the email works.',
        kind: 'seconds',
      },
      {
        path: 'emailAndPassword.sendResetPassword',
        label: 'Password reset by email',
        help: 'Users who forgot their password get a reset link.',
        kind: 'switch',
      },
      {
        path: 'emailAndPassword.resetPasswordTokenExpiresIn',
        label: 'Password reset link lifetime',
        help: 'How long the reset link works.',
        kind: 'seconds',
      },
      {
        path: 'emailAndPassword.revokeSessionsOnPasswordReset',
        label: 'Sign out everywhere after a reset',
        help: 'A password reset ends every session of the account.',
        kind: 'switch',
      },
      {
        path: 'username.minUsernameLength',
        label: 'Shortest username',
        help: 'For sign-in with a username, in characters.',
        kind: 'number',
        min: 1,
      },
      { path: 'username.maxUsernameLength', label: 'Longest username', help: 'In characters.', kind: 'number', min: 1 },
      {
        path: 'magicLink.enabled',
        label: 'Magic links',
        help: 'People can ask for a sign-in link by email (better-auth magic link).',
        kind: 'switch',
      },
      { path: 'magicLink.expiresIn', label: 'Magic link lifetime', help: 'A link older than this is refused.', kind: 'seconds' },
      {
        path: 'magicLink.disableSignUp',
        label: 'No new accounts by magic link',
        help: 'A link to an unknown address creates no account.',
        kind: 'switch',
      },
      {
        path: 'magicLink.rateLimit.window',
        label: 'Magic link limit window',
        help: 'Seconds over which link requests are counted.',
        kind: 'seconds',
      },
      { path: 'magicLink.rateLimit.max', label: 'Magic link requests per window', help: 'Per client address.', kind: 'number', min: 1 },
      {
        path: 'emailOTP.enabled',
        label: 'Email codes',
        help: 'People can sign in, verify or reset with a code sent by email.',
        kind: 'switch',
      },
      { path: 'emailOTP.otpLength', label: 'Email code length', help: 'Digits in each code.', kind: 'number', min: 4 },
      { path: 'emailOTP.expiresIn', label: 'Email code lifetime', help: 'A code older than this is refused.', kind: 'seconds' },
      {
        path: 'emailOTP.allowedAttempts',
        label: 'Guesses per code',
        help: 'Wrong guesses before the code is void.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'emailOTP.disableSignUp',
        label: 'No new accounts by email code',
        help: 'A code for an unknown address creates no account.',
        kind: 'switch',
      },
      {
        path: 'emailOTP.rateLimit.window',
        label: 'Email code limit window',
        help: 'Seconds over which code requests are counted.',
        kind: 'seconds',
      },
      { path: 'emailOTP.rateLimit.max', label: 'Email code requests per window', help: 'Per client address.', kind: 'number', min: 1 },
      {
        path: 'emailOTP.changeEmail.enabled',
        label: 'Change email by code',
        help: 'A signed-in person confirms a new address with a code sent to it.',
        kind: 'switch',
      },
      {
        path: 'emailOTP.changeEmail.verifyCurrentEmail',
        label: 'Also confirm the current address',
        help: 'A code sent to the current address is needed first.',
        kind: 'switch',
      },
      {
        path: 'oneTimeToken.enabled',
        label: 'One-time tokens',
        help: 'A signed-in app can mint a single-use token for its session.',
        kind: 'switch',
      },
      {
        path: 'oneTimeToken.expiresIn',
        label: 'One-time token lifetime',
        help: 'In minutes, as better-auth counts it.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'oneTimeToken.disableClientRequest',
        label: 'Server-side one-time tokens only',
        help: 'Browsers cannot ask for a token themselves.',
        kind: 'switch',
      },
      {
        path: 'oneTimeToken.disableSetSessionCookie',
        label: 'Verify without a cookie',
        help: 'Verifying a token answers the session but sets no cookie.',
        kind: 'switch',
      },
      {
        path: 'oneTimeToken.storeToken',
        label: 'How tokens are stored',
        help: 'Hashed keeps a database reader from using a token.',
        kind: 'select',
        options: [
          { value: 'plain', label: 'Plain' },
          { value: 'hashed', label: 'Hashed' },
        ],
      },
      {
        path: 'lastLoginMethod.enabled',
        label: 'Remember the last sign-in method',
        help: 'A cookie tells the app how the person last signed in.',
        kind: 'switch',
      },
      { path: 'lastLoginMethod.cookieName', label: 'Last-method cookie name', help: 'The cookie the app reads.', kind: 'text' },
      { path: 'lastLoginMethod.maxAge', label: 'Last-method cookie lifetime', help: 'How long the browser keeps it.', kind: 'seconds' },
      {
        path: 'lastLoginMethod.storeInDatabase',
        label: 'Keep the last method on the user',
        help: 'Also stored as the user field lastLoginMethod.',
        kind: 'switch',
      },
      {
        path: 'deviceAuthorization.enabled',
        label: 'Device sign-in',
        help: 'A CLI, TV or kiosk shows a code; a signed-in person approves it at /ui/device (RFC 8628).',
        kind: 'switch',
      },
      {
        path: 'deviceAuthorization.expiresIn',
        label: 'Device code lifetime',
        help: 'A code not approved and collected within this time is refused.',
        kind: 'seconds',
        min: 1,
      },
      {
        path: 'deviceAuthorization.interval',
        label: 'Device polling interval',
        help: 'A device asking again sooner is told to slow down.',
        kind: 'seconds',
        min: 1,
      },
      {
        path: 'deviceAuthorization.userCodeLength',
        label: 'Device user code length',
        help: 'Characters the person types.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'deviceAuthorization.deviceCodeLength',
        label: 'Device code length',
        help: 'Characters of the secret code the device keeps.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'deviceAuthorization.verificationUri',
        label: 'Device approval page',
        help: 'Where the device sends people; empty uses the hosted page /ui/device.',
        kind: 'optional-text',
      },
      {
        path: 'deviceAuthorization.clientIds',
        label: 'Allowed device clients',
        help: 'client_id values accepted; empty accepts any.',
        kind: 'tags',
      },
      {
        path: 'anonymous.enabled',
        label: 'Anonymous users',
        help: 'Apps can sign visitors in without an account; signing up later replaces the anonymous user.',
        kind: 'switch',
      },
      {
        path: 'anonymous.emailDomainName',
        label: 'Anonymous address domain',
        help: 'Empty: addresses at anonymous.placeholder.invalid.',
        kind: 'optional-text',
      },
      {
        path: 'anonymous.disableDeleteAnonymousUser',
        label: 'Keep anonymous users',
        help: 'Not deleted when their owner signs up or in, nor by the app.',
        kind: 'switch',
      },
    ],
  },
  {
    id: 'multi-factor',
    title: 'Two-factor and passkeys',
    description: 'Second factors at sign-in: authenticator apps, mailed codes, backup codes and passkeys.',
    fields: [
      {
        path: 'twoFactor.enabled',
        label: 'Allow two-factor sign-in',
        help: 'Users can add an authenticator app, mailed codes and backup codes.',
        kind: 'switch',
      },
      {
        path: 'twoFactor.issuer',
        label: 'Name in authenticator apps',
        help: 'Shown beside the code in the app; empty uses the mail app name.',
        kind: 'optional-text',
      },
      {
        path: 'twoFactor.totpOptions.disable',
        label: 'Turn off authenticator apps',
        help: 'Only mailed codes and backup codes remain as second factors.',
        kind: 'switch',
      },
      {
        path: 'twoFactor.totpOptions.digits',
        label: 'Digits per app code',
        help: '6 or 8; most authenticator apps show 6.',
        kind: 'number',
        min: 6,
      },
      {
        path: 'twoFactor.totpOptions.period',
        label: 'Seconds per app code',
        help: 'How long each code is shown; apps expect 30.',
        kind: 'number',
        min: 15,
      },
      {
        path: 'twoFactor.totpOptions.window',
        label: 'Codes accepted either side',
        help: 'Time steps of clock drift tolerated (1 accepts the previous and the next code).',
        kind: 'number',
        min: 0,
      },
      {
        path: 'twoFactor.otpOptions.enabled',
        label: 'Codes by mail',
        help: 'Users can ask for a one-time code sent to their address.',
        kind: 'switch',
      },
      {
        path: 'twoFactor.otpOptions.period',
        label: 'Minutes a mailed code lasts',
        help: 'After this the user asks for a new code.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'twoFactor.otpOptions.digits',
        label: 'Digits per mailed code',
        help: 'Length of the code in the mail.',
        kind: 'number',
        min: 6,
      },
      {
        path: 'twoFactor.otpOptions.allowedAttempts',
        label: 'Tries per mailed code',
        help: 'Wrong entries allowed before the code is void.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'twoFactor.backupCodeOptions.amount',
        label: 'Backup codes per user',
        help: 'Single-use codes for when the phone is lost.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'twoFactor.backupCodeOptions.length',
        label: 'Characters per backup code',
        help: 'Longer codes are harder to guess.',
        kind: 'number',
        min: 8,
      },
      {
        path: 'twoFactor.allowedAttempts',
        label: 'Tries per sign-in challenge',
        help: 'Wrong codes allowed before the user must sign in again.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'twoFactor.trustDeviceMaxAge',
        label: 'Trusted browser lasts',
        help: 'A browser marked as trusted skips the second step this long.',
        kind: 'seconds',
      },
      {
        path: 'twoFactor.twoFactorCookieMaxAge',
        label: 'Time to enter the code',
        help: 'How long the second step waits after the password.',
        kind: 'seconds',
      },
      {
        path: 'twoFactor.enforcement.roles',
        label: 'Roles that must use a second factor',
        help: 'e.g. admin: these users must enrol an app or a passkey.',
        kind: 'tags',
      },
      {
        path: 'twoFactor.enforcement.gracePeriod',
        label: 'Time to enrol',
        help: 'After the first sign-in under the rule; then sign-in is refused until they enrol.',
        kind: 'seconds',
      },
      {
        path: 'passkey.enabled',
        label: 'Allow passkeys',
        help: 'Users can register passkeys and sign in without a password.',
        kind: 'switch',
      },
      {
        path: 'passkey.rpID',
        label: 'Passkey domain',
        help: 'The host name passkeys are bound to; empty uses the base URL’s host.',
        kind: 'optional-text',
      },
      {
        path: 'passkey.rpName',
        label: 'Name shown when registering',
        help: 'Shown by the browser or phone; empty uses the mail app name.',
        kind: 'optional-text',
      },
      {
        path: 'passkey.origin',
        label: 'Pages allowed to use passkeys',
        help: 'Origins of the sign-in pages; empty uses the base URL and the trusted origins.',
        kind: 'tags',
      },
    ],
  },
  {
    id: 'sessions',
    title: 'Sessions and cookies',
    description: 'How long people stay signed in, and the cookies that carry their session.',
    fields: [
      { path: 'session.expiresIn', label: 'Session lifetime', help: 'A session unused for this long ends.', kind: 'seconds' },
      {
        path: 'session.updateAge',
        label: 'Extend the session after',
        help: 'A session used after this age gets a new full lifetime.',
        kind: 'seconds',
      },
      {
        path: 'session.disableSessionRefresh',
        label: 'Never extend sessions',
        help: 'Sessions end at their first expiry, however much they are used.',
        kind: 'switch',
      },
      {
        path: 'session.freshAge',
        label: 'Recent sign-in window',
        help: 'Sensitive changes (email, account deletion) need a sign-in this recent; 0 turns the check off.',
        kind: 'seconds',
      },
      {
        path: 'session.cookieCache.enabled',
        label: 'Cache the session in a cookie',
        help: 'Fewer database reads; a revoked session may live on until the cache expires.',
        kind: 'switch',
      },
      { path: 'session.cookieCache.maxAge', label: 'Cookie cache lifetime', help: 'How long the cached copy is trusted.', kind: 'seconds' },
      {
        path: 'advanced.cookiePrefix',
        label: 'Cookie name prefix',
        help: 'Cookies are named <prefix>.session_token and so on.',
        kind: 'text',
      },
      { path: 'advanced.useSecureCookies', label: 'Secure cookies', help: 'Cookies sent over HTTPS only.', kind: 'tristate' },
      {
        path: 'bearer.enabled',
        label: 'Bearer tokens',
        help: 'Apps may send the session token in an Authorization header.',
        kind: 'switch',
      },
      {
        path: 'bearer.requireSignature',
        label: 'Signed bearer tokens only',
        help: 'An unsigned session token in the header is refused.',
        kind: 'switch',
      },
      {
        path: 'multiSession.enabled',
        label: 'Several accounts per browser',
        help: 'A browser keeps a session for each account and switches between them.',
        kind: 'switch',
      },
      {
        path: 'multiSession.maximumSessions',
        label: 'Accounts per browser',
        help: 'The most sessions one browser keeps.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'advanced.crossSubDomainCookies.enabled',
        label: 'Share cookies with sibling hosts',
        help: 'Cookies carry a Domain, so apps behind forward auth receive the session.',
        kind: 'switch',
      },
      { path: 'advanced.crossSubDomainCookies.domain', label: 'Cookie domain', help: 'Empty: the base URL host.', kind: 'optional-text' },
    ],
  },
  {
    id: 'rate-limits',
    title: 'Rate limits and lockout',
    description: 'Defences against floods and password guessing.',
    fields: [
      { path: 'rateLimit.enabled', label: 'Rate limiting', help: 'Too many requests from one client are answered 429.', kind: 'switch' },
      { path: 'rateLimit.window', label: 'Window', help: 'The period requests are counted over.', kind: 'seconds', min: 1 },
      { path: 'rateLimit.max', label: 'Requests per window', help: 'Per client and endpoint.', kind: 'number', min: 1 },
      {
        path: 'rateLimit.storage',
        label: 'Where counts are kept',
        help: 'Memory is fastest but per instance; the database keeps counts across restarts and shares them between instances, as does secondary storage (--redis-url).',
        kind: 'select',
        unsetLabel: 'By deployment (PostgreSQL: Redis with --redis-url, else the database; SQLite: memory)',
        options: [
          { value: 'memory', label: 'Memory' },
          { value: 'database', label: 'Database' },
          { value: 'secondary-storage', label: 'Secondary storage (Redis)' },
        ],
      },
      {
        path: 'rateLimit.strictPaths',
        label: 'Sensitive endpoints',
        help: 'Endpoints (prefix match) with the stricter limit below.',
        kind: 'tags',
      },
      {
        path: 'rateLimit.strict.window',
        label: 'Sensitive endpoints: window',
        help: 'The period their requests are counted over.',
        kind: 'seconds',
        min: 1,
      },
      { path: 'rateLimit.strict.max', label: 'Sensitive endpoints: requests per window', help: 'Per client.', kind: 'number', min: 1 },
      {
        path: 'rateLimit.customRules',
        label: 'Rules for other endpoints',
        help: 'Endpoint (or prefix ending in *) → {"window": seconds, "max": requests}.',
        kind: 'json',
      },
      {
        path: 'security.accountLockout.enabled',
        label: 'Lock accounts after failed passwords',
        help: 'Stops password guessing against one account from many addresses.',
        kind: 'switch',
      },
      {
        path: 'security.accountLockout.maxFailures',
        label: 'Failed passwords before a lock',
        help: 'Counted within the period below.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'security.accountLockout.window',
        label: 'Counting period',
        help: 'Failures older than this are forgotten.',
        kind: 'seconds',
        min: 1,
      },
      {
        path: 'security.accountLockout.lockDuration',
        label: 'Lock duration',
        help: 'The account unlocks by itself after this.',
        kind: 'seconds',
        min: 1,
      },
      {
        path: 'security.passwordHashQueue',
        label: 'Password checks waiting at most',
        help: 'Beyond this many, the server answers 503 at once instead of slowing down.',
        kind: 'number',
        min: 1,
      },
    ],
  },
  {
    id: 'users',
    title: 'Users and accounts',
    description: 'What people may do with their own account, and how provider accounts link to it.',
    fields: [
      {
        path: 'user.changeEmail.enabled',
        label: 'Users may change their email',
        help: 'The new address is confirmed by a link.',
        kind: 'switch',
      },
      {
        path: 'user.changeEmail.sendChangeEmailVerification',
        label: 'Ask the current address first',
        help: 'A confirmation goes to the old address before the change.',
        kind: 'switch',
      },
      {
        path: 'user.changeEmail.updateEmailWithoutVerification',
        label: 'Change an unverified address at once',
        help: 'Off: the change waits for the link mailed to the new address, so a stolen session cannot move the account.',
        kind: 'switch',
      },
      {
        path: 'user.changeEmail.requireFreshSession',
        label: 'Email change needs a recent sign-in',
        help: 'See "Recent sign-in window" under Sessions.',
        kind: 'switch',
      },
      { path: 'user.deleteUser.enabled', label: 'Users may delete their account', help: 'From the app, through the API.', kind: 'switch' },
      {
        path: 'user.deleteUser.sendDeleteAccountVerification',
        label: 'Confirm deletion by email',
        help: 'The account is deleted only when the mailed link is followed.',
        kind: 'switch',
      },
      {
        path: 'user.deleteUser.deleteTokenExpiresIn',
        label: 'Deletion link lifetime',
        help: 'How long the mailed link works.',
        kind: 'seconds',
      },
      {
        path: 'account.accountLinking.enabled',
        label: 'Link provider accounts',
        help: 'Signing in with a provider joins the account with the same email.',
        kind: 'switch',
      },
      {
        path: 'account.accountLinking.trustedProviders',
        label: 'Providers trusted for linking',
        help: 'Their email is believed even when they do not say it is verified.',
        kind: 'tags',
      },
      {
        path: 'account.accountLinking.allowDifferentEmails',
        label: 'Link accounts with another email',
        help: 'A signed-in user may link a provider account whose email differs.',
        kind: 'switch',
      },
      {
        path: 'account.accountLinking.allowUnlinkingAll',
        label: 'Allow unlinking the last sign-in method',
        help: 'A user could lock themselves out.',
        kind: 'switch',
      },
      {
        path: 'user.additionalFields',
        label: 'Extra profile fields',
        help: 'name → {"type": "string" | "number" | "boolean" | "date", "required", "defaultValue", "input"}.',
        kind: 'json',
      },
      {
        path: 'verification.disableCleanup',
        label: 'Keep expired links',
        help: 'Expired reset, deletion and sign-in links stay in the database (for debugging).',
        kind: 'switch',
      },
    ],
  },
  {
    id: 'organizations',
    title: 'Organizations',
    description: 'Teams of users who share an app: who creates them, limits and invitations.',
    fields: [
      {
        path: 'organization.allowUserToCreateOrganization',
        label: 'Users may create organizations',
        help: 'Otherwise only an administrator can.',
        kind: 'switch',
      },
      { path: 'organization.organizationLimit', label: 'Organizations per user', help: 'Empty: no limit.', kind: 'optional-number' },
      {
        path: 'organization.creatorRole',
        label: 'Role of the creator',
        help: 'The role given to whoever creates an organization.',
        kind: 'text',
      },
      {
        path: 'organization.membershipLimit',
        label: 'Members per organization',
        help: 'Invitations beyond this are refused.',
        kind: 'number',
        min: 1,
      },
      {
        path: 'organization.invitationLimit',
        label: 'Pending invitations per organization',
        help: 'Waiting invitations at most.',
        kind: 'number',
      },
      {
        path: 'organization.invitationExpiresIn',
        label: 'Invitation lifetime',
        help: 'How long an invitation can be accepted.',
        kind: 'seconds',
      },
      {
        path: 'organization.cancelPendingInvitationsOnReInvite',
        label: 'A new invitation replaces the pending one',
        help: 'Inviting the same address again cancels the earlier invitation.',
        kind: 'switch',
      },
      {
        path: 'organization.invitationURL',
        label: 'Invitation link',
        help: 'Where the link in the mail points; {id} is replaced by the invitation. Empty: this server.',
        kind: 'optional-text',
      },
      { path: 'organization.teams.enabled', label: 'Teams', help: 'Organizations can have teams inside them.', kind: 'switch' },
      { path: 'organization.teams.maximumTeams', label: 'Teams per organization', help: 'Empty: no limit.', kind: 'optional-number' },
      {
        path: 'organization.teams.allowRemovingAllTeams',
        label: 'Allow removing the last team',
        help: 'An organization may end up with no team.',
        kind: 'switch',
      },
      {
        path: 'organization.roles',
        label: 'Custom organization roles',
        help: 'role → resource → allowed actions, added to owner, admin and member.',
        kind: 'json',
      },
    ],
  },
  {
    id: 'admin',
    title: 'Admin roles',
    description: 'Who counts as an administrator, roles for new users, bans and impersonation.',
    fields: [
      { path: 'admin.defaultRole', label: 'Role of new users', help: 'Given at sign-up.', kind: 'text' },
      { path: 'admin.adminRoles', label: 'Administrator roles', help: 'Users with one of these roles are administrators.', kind: 'tags' },
      {
        path: 'admin.adminUserIds',
        label: 'Administrators by user id',
        help: 'These users pass every permission check, whatever their role.',
        kind: 'tags',
      },
      {
        path: 'admin.impersonationSessionDuration',
        label: 'Impersonation lasts',
        help: 'How long an administrator may act as another user.',
        kind: 'seconds',
        min: 1,
      },
      { path: 'admin.defaultBanReason', label: 'Ban reason when none is given', help: 'Shown to the banned user.', kind: 'text' },
      { path: 'admin.defaultBanExpiresIn', label: 'Ban length when none is given', help: 'Empty: until lifted.', kind: 'optional-seconds' },
      {
        path: 'admin.bannedUserMessage',
        label: 'Message to banned users',
        help: 'The answer a banned user gets at sign-in.',
        kind: 'text',
      },
      { path: 'admin.roles', label: 'Custom admin roles', help: 'role → {"user": [actions], "session": [actions]}.', kind: 'json' },
    ],
  },
  {
    id: 'mail',
    title: 'Mail',
    description: 'How outgoing mail presents itself. The SMTP server is set in the Email view.',
    fields: [
      { path: 'mail.appName', label: 'Application name', help: 'Named in the subject and text of every email.', kind: 'text' },
      { path: 'mail.from', label: 'Sender', help: 'The From address, e.g. Acme <no-reply@acme.example>.', kind: 'text' },
    ],
  },
]

/**
 * Keys with a control in another view, or read only at start-up. Feature folders that edit their
 * own configuration in their own view add their key here.
 */
export const EDITED_ELSEWHERE: Record<string, string> = {
  basePath: 'read at start-up: shown under Application and URLs, changed with --config and a restart',
  socialProviders: 'the Providers view',
  'mail.smtp': 'the Email view (SMTP server, test email)',
  apiKey: 'the API keys view (its settings card)',
  jwt: 'the Signing keys view',
  backup: 'the Backups view (schedule and retention)',
  oidcProvider: 'the Single sign-on view (switch, groups claim, lifetimes)',
  database: 'read at start-up: --database-url / GATEHOUSE_DATABASE_URL (or --config) and a restart',
  secondaryStorage: 'read at start-up: --redis-url / GATEHOUSE_REDIS_URL (or --config) and a restart',
  forwardAuth: 'the Protected apps view (rules, default policy, proxy snippets)',
  metrics: 'read at start-up: --metrics-address / GATEHOUSE_METRICS_ADDRESS (or --config) and a restart',
  log: 'read at start-up: --log-format / --log-level (or GATEHOUSE_LOG_FORMAT / GATEHOUSE_LOG_LEVEL, or --config)',
}

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export function getPath(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), value)
}

export function setPath(target: Json, path: string, value: unknown): void {
  const keys = path.split('.')
  let node = target
  for (const key of keys.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {}
    node = node[key] as Json
  }
  node[keys[keys.length - 1] as string] = value
}

const CURATED = new Set(SECTIONS.flatMap((s) => s.fields.map((f) => f.path)))
const elsewhere = (path: string) => Object.keys(EDITED_ELSEWHERE).some((p) => path === p || path.startsWith(`${p}.`))

const humanize = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase())

/**
 * Keys of the effective config that no section names (a feature added since): a generic field
 * each, so nothing is ever unreachable. The settings test keeps this list empty for known keys.
 */
export function uncoveredFields(effective: Json): FieldSpec[] {
  const out: FieldSpec[] = []
  const walk = (value: unknown, path: string) => {
    if (path && (CURATED.has(path) || elsewhere(path))) return
    if (isPlainObject(value) && Object.keys(value).length > 0 && !CURATED_PARENT(path)) {
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k)
      return
    }
    if (!path) return
    const kind: FieldKind =
      typeof value === 'boolean'
        ? 'switch'
        : typeof value === 'number'
          ? 'number'
          : typeof value === 'string'
            ? 'text'
            : Array.isArray(value) && value.every((v) => typeof v === 'string')
              ? 'tags'
              : 'json'
    out.push({ path, label: path.split('.').map(humanize).join(' › '), help: `Configuration key ${path}.`, kind })
  }
  walk(effective, '')
  return out
}

/** A curated json field covers everything under it (records such as roles). */
const CURATED_PARENT = (path: string) => CURATED.has(path)

/**
 * The change from `before` to `after` as a JSON Merge Patch (RFC 7386): a removed key becomes
 * `null`, so its default applies again; arrays replace whole.
 */
export function diff(before: unknown, after: unknown): unknown {
  if (after === undefined) return before === undefined ? undefined : null
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

/** The patch of one section: only its fields, each as a merge patch of its own value. */
export function sectionPatch(fields: FieldSpec[], before: Json, values: Record<string, unknown>): Json | undefined {
  const patch: Json = {}
  let changed = false
  for (const f of fields) {
    if (!(f.path in values)) continue
    const d = diff(getPath(before, f.path), values[f.path])
    if (d === undefined) continue
    setPath(patch, f.path, d)
    changed = true
  }
  return changed ? patch : undefined
}

/** A value as the review list shows it. */
export function describeValue(spec: FieldSpec, value: unknown): string {
  if (value === undefined || value === null || value === '') {
    if (spec.kind === 'tristate') return 'automatic'
    return spec.kind.startsWith('optional') ? 'not set' : 'empty'
  }
  if (spec.kind === 'inverted') return value ? 'off' : 'on'
  if (typeof value === 'boolean') return value ? 'on' : 'off'
  if (spec.kind === 'seconds' || spec.kind === 'optional-seconds') return `${value} s`
  if (Array.isArray(value)) return value.length ? value.join(', ') : 'none'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}
