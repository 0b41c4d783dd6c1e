import { IconSettings } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The settings feature in the control panel (renderer/src/features/panel-feature.ts). */
export const settingsPanel = definePanelFeature({
  name: 'settings',
  views: [{ name: 'settings', label: 'Settings', icon: IconSettings, Page: lazy(() => import('./SettingsPage')), aliases: ['security'] }],
  settings: [
    {
      section: 'application',
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
        {
          path: 'disabledPaths',
          label: 'Turned-off endpoints',
          help: 'Endpoints that answer 404, e.g. /sign-up/email.',
          kind: 'tags',
        },
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
          path: 'appName',
          label: 'Application name on the pages',
          help: 'Shown as the heading of the hosted pages; empty uses the mail application name.',
          kind: 'optional-text',
        },
      ],
    },
    {
      section: 'sign-in',
      placement: 'last',
      fields: [
        {
          path: 'security.rejectCommonPasswords',
          label: 'Refuse common passwords',
          help: 'Passwords found in a list of the most used ones are refused.',
          kind: 'switch',
        },
      ],
    },
    {
      section: 'sessions',
      fields: [
        {
          path: 'session.expiresIn',
          label: 'Session lifetime',
          help: 'A session unused for this long ends.',
          kind: 'seconds',
        },
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
        {
          path: 'session.cookieCache.maxAge',
          label: 'Cookie cache lifetime',
          help: 'How long the cached copy is trusted.',
          kind: 'seconds',
        },
        {
          path: 'advanced.cookiePrefix',
          label: 'Cookie name prefix',
          help: 'Cookies are named <prefix>.session_token and so on.',
          kind: 'text',
        },
        {
          path: 'advanced.useSecureCookies',
          label: 'Secure cookies',
          help: 'Cookies sent over HTTPS only.',
          kind: 'tristate',
        },
      ],
    },
    {
      section: 'sessions',
      placement: 'last',
      fields: [
        {
          path: 'advanced.crossSubDomainCookies.enabled',
          label: 'Share cookies with sibling hosts',
          help: 'Cookies carry a Domain, so apps behind forward auth receive the session.',
          kind: 'switch',
        },
        {
          path: 'advanced.crossSubDomainCookies.domain',
          label: 'Cookie domain',
          help: 'Empty: the base URL host.',
          kind: 'optional-text',
        },
      ],
    },
    {
      section: 'rate-limits',
      fields: [
        {
          path: 'rateLimit.enabled',
          label: 'Rate limiting',
          help: 'Too many requests from one client are answered 429.',
          kind: 'switch',
        },
        {
          path: 'rateLimit.window',
          label: 'Window',
          help: 'The period requests are counted over.',
          kind: 'seconds',
          min: 1,
        },
        {
          path: 'rateLimit.max',
          label: 'Requests per window',
          help: 'Per client and endpoint.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'rateLimit.storage',
          label: 'Where counts are kept',
          help: 'Memory is fastest but per instance; the database keeps counts across restarts and shares them between instances, as does secondary storage (--redis-url).',
          kind: 'select',
          unsetLabel: 'By deployment (PostgreSQL: Redis with --redis-url, else the database; SQLite: memory)',
          options: [
            {
              value: 'memory',
              label: 'Memory',
            },
            {
              value: 'database',
              label: 'Database',
            },
            {
              value: 'secondary-storage',
              label: 'Secondary storage (Redis)',
            },
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
        {
          path: 'rateLimit.strict.max',
          label: 'Sensitive endpoints: requests per window',
          help: 'Per client.',
          kind: 'number',
          min: 1,
        },
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
      section: 'users',
      placement: 'last',
      fields: [
        {
          path: 'user.additionalFields',
          label: 'Extra profile fields',
          help: 'name → {"type": "string" | "number" | "boolean" | "date", "required", "defaultValue", "input"}.',
          kind: 'json',
        },
        {
          path: 'identity.requireVerifiedEmail',
          label: 'Vouch only for verified emails',
          help: 'Forward auth, SAML, LDAP and OIDC refuse a person until their email address is verified.',
          kind: 'switch',
        },
        {
          path: 'signUp.mode',
          label: 'Who may create an account',
          help: 'Open: anyone who reaches the server. By invitation: only an email with a pending organization invitation or an administrator’s invite link. Closed: nobody; administrators create accounts.',
          kind: 'select',
          options: [
            { value: 'open', label: 'Anyone (open)' },
            { value: 'invitation', label: 'By invitation only' },
            { value: 'closed', label: 'Nobody (closed)' },
          ],
        },
        {
          path: 'verification.disableCleanup',
          label: 'Keep expired links',
          help: 'Expired reset, deletion and sign-in links stay in the database (for debugging).',
          kind: 'switch',
        },
      ],
    },
  ],
  editedElsewhere: {
    basePath: 'read at start-up: shown under Application and URLs, changed with --config and a restart',
    database: 'read at start-up: --database-url / GATEHOUSE_DATABASE_URL (or --config) and a restart',
    secondaryStorage: 'read at start-up: --redis-url / GATEHOUSE_REDIS_URL (or --config) and a restart',
    log: 'read at start-up: --log-format / --log-level (or GATEHOUSE_LOG_FORMAT / GATEHOUSE_LOG_LEVEL, or --config)',
  },
})
