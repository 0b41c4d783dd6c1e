import { z } from 'zod'
import { describeInvalidTrustedOrigin } from '../core/trusted-origins.js'
import { passkeyConfig } from '../features/passkey/config.js'
import { magicLinkConfig } from '../features/magic-link/config.js'
import { emailOTPConfig } from '../features/email-otp/config.js'
import { twoFactorConfig } from '../features/two-factor/config.js'
import { socialProvidersConfig } from '../features/social/config.js'
import { apiKeyConfig } from '../features/api-key/config.js'
import { bearerConfig } from '../features/bearer/config.js'
import { multiSessionConfig } from '../features/multi-session/config.js'
import { oneTimeTokenConfig } from '../features/one-time-token/config.js'
import { lastLoginMethodConfig } from '../features/last-login-method/config.js'
import { genericOAuthConfig } from '../features/generic-oauth/config.js'
import { deviceAuthorizationConfig } from '../features/device-authorization/config.js'
import { anonymousConfig } from '../features/anonymous/config.js'
import { jwtConfig } from '../features/jwt/config.js'
import { organizationConfig } from '../features/organization/config.js'
import { oidcProviderConfig } from '../features/oidc-provider/config.js'
import { backupConfigSchema } from '../features/backup/config.js'
import { accountConfig, changeEmailConfig, deleteUserConfig } from '../features/account/config.js'
import { emailAndPasswordConfig, emailVerificationConfig } from '../features/email-password/config.js'
import { usernameConfig } from '../features/username/config.js'
import { adminConfig } from '../features/admin/config.js'
import { hostedPagesConfig } from '../features/hosted-pages/config.js'
import { metricsConfig } from '../features/metrics/config.js'
import { forwardAuthConfig } from '../features/forward-auth/config.js'

/**
 * The runtime configuration. Keys use better-auth's option names wherever one exists so
 * that better-auth users recognise them; every default comes from SPEC §9.
 * Durations are in seconds, like better-auth's options.
 */

const seconds = z.number().int().min(0)

export const trustedOriginEntry = z.string().superRefine((value, ctx) => {
  const problem = describeInvalidTrustedOrigin(value)
  if (problem) ctx.addIssue({ code: 'custom', message: problem })
})

const additionalField = z.object({
  type: z.enum(['string', 'number', 'boolean', 'date']),
  required: z.boolean().default(false),
  defaultValue: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
  /** false: clients may not set it (better-auth's `input: false`). */
  input: z.boolean().default(true),
})

const rateLimitRule = z.object({ window: z.number().int().min(1), max: z.number().int().min(1) })

export const configSchema = z
  .object({
    /** better-auth's `appName`: the name the hosted pages show (unset: mail.appName). */
    appName: z.string().min(1).max(100).optional(),
    basePath: z
      .string()
      .regex(/^\/[A-Za-z0-9/_-]*$/, 'must start with / and contain only path characters')
      .default('/api/auth'),
    trustedOrigins: z.array(trustedOriginEntry).default([]),
    disabledPaths: z.array(z.string().startsWith('/')).default([]),
    emailAndPassword: emailAndPasswordConfig,
    emailVerification: emailVerificationConfig,
    /** Verification records (reset, delete-account, OAuth state): expired ones are removed at each lookup. */
    verification: z.object({ disableCleanup: z.boolean().default(false) }).prefault({}),
    /** Outgoing mail: every message goes through the outbox; SMTP delivers it when configured. */
    mail: z
      .object({
        from: z.string().min(3).default('Gatehouse <no-reply@localhost>'),
        appName: z.string().min(1).default('Gatehouse'),
        smtp: z
          .object({
            /** smtp://user:pass@host:port or smtps://... (--smtp-url / GATEHOUSE_SMTP_URL win over it). */
            url: z
              .string()
              .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
              .optional(),
            host: z.string().min(1).optional(),
            port: z.number().int().min(1).max(65535).optional(),
            secure: z.boolean().optional(),
            user: z.string().optional(),
            password: z.string().optional(),
          })
          .prefault({}),
        /**
         * Edited messages by kind (verification, password-reset, …): subject and plain-text body with
         * {{placeholders}} (server/mail/custom-templates.ts); a kind not here uses the built-in one.
         */
        templates: z
          .record(
            z.string().regex(/^[a-z0-9-]{1,60}$/, 'a message kind'),
            z.object({ subject: z.string().trim().min(1).max(200), body: z.string().trim().min(1).max(20_000) }).strict(),
          )
          .default({}),
      })
      .prefault({}),
    session: z
      .object({
        expiresIn: seconds.default(604800),
        updateAge: seconds.default(86400),
        freshAge: seconds.default(86400),
        disableSessionRefresh: z.boolean().default(false),
        cookieCache: z.object({ enabled: z.boolean().default(false), maxAge: seconds.default(300) }).prefault({}),
      })
      .prefault({}),
    /**
     * The shared database (several instances): postgres://… selects PostgreSQL (--database-url /
     * GATEHOUSE_DATABASE_URL win over it); absent, the data directory's SQLite file.
     */
    database: z
      .object({
        url: z
          .string()
          .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
          .optional(),
        /** Connections of the PostgreSQL pool of each instance. */
        poolSize: z.number().int().min(1).max(1000).default(10),
      })
      .prefault({}),
    /** Redis or Valkey as better-auth's secondary storage (--redis-url / GATEHOUSE_REDIS_URL win over it). */
    secondaryStorage: z
      .object({
        url: z
          .string()
          .regex(/^(redis|rediss|valkey|valkeys):\/\//, 'must start with redis:// or rediss://')
          .optional(),
      })
      .prefault({}),
    rateLimit: z
      .object({
        enabled: z.boolean().default(true),
        window: z.number().int().min(1).default(10),
        max: z.number().int().min(1).default(100),
        /**
         * secondary-storage: the Redis/Valkey of --redis-url (shared by every instance; atomic counters).
         * Unset: by deployment (server/core/rate-limit.ts effectiveRateLimitStorage): on PostgreSQL
         * "secondary-storage" with --redis-url, else "database"; on SQLite "memory".
         */
        storage: z.enum(['memory', 'database', 'secondary-storage']).optional(),
        /** Paths (prefix match) that get the strict rule. */
        strictPaths: z.array(z.string().startsWith('/')).default(['/sign-in', '/sign-up', '/change-password', '/change-email']),
        strict: rateLimitRule.default({ window: 10, max: 3 }),
        /** Exact path (or prefix ending in `*`) → rule, applied after the built-in ones. */
        customRules: z.record(z.string(), rateLimitRule).default({}),
      })
      .prefault({}),
    user: z
      .object({
        additionalFields: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), additionalField).default({}),
        changeEmail: changeEmailConfig,
        deleteUser: deleteUserConfig,
      })
      .prefault({}),
    /** socialProviders.<id>: the 18 OAuth providers (server/features/social/options.ts). */
    socialProviders: socialProvidersConfig,
    /** account.accountLinking (server/features/account/config.ts; social sign-in links by it too). */
    account: accountConfig,
    organization: organizationConfig,
    /** Administrator feature (SPEC §6 Admin, reference §8): roles, bans, impersonation. */
    admin: adminConfig,
    /** Username feature (SPEC §5 Username). */
    username: usernameConfig,
    twoFactor: twoFactorConfig,
    passkey: passkeyConfig,
    magicLink: magicLinkConfig,
    emailOTP: emailOTPConfig,
    /** Scheduled backups (server/features/backup). */
    backup: backupConfigSchema,
    /** Gatehouse's own defences beyond better-auth (docs/SECURITY.md). */
    security: z
      .object({
        /** Password hashes waiting for a thread; beyond this the server answers 503 at once. */
        passwordHashQueue: z.number().int().min(1).default(64),
        /** Per-account throttling of password checks (OWASP ASVS 2.2.1). */
        accountLockout: z
          .object({
            enabled: z.boolean().default(true),
            maxFailures: z.number().int().min(1).default(10),
            window: z.number().int().min(1).default(900),
            lockDuration: z.number().int().min(1).default(900),
          })
          .prefault({}),
        /** Refuse passwords found in a common-password dictionary (zxcvbn-ts). */
        rejectCommonPasswords: z.boolean().default(false),
      })
      .prefault({}),
    apiKey: apiKeyConfig,
    bearer: bearerConfig,
    oneTimeToken: oneTimeTokenConfig,
    multiSession: multiSessionConfig,
    lastLoginMethod: lastLoginMethodConfig,
    /** genericOAuth.config: any OAuth 2.0 / OpenID Connect provider (server/features/generic-oauth). */
    genericOAuth: genericOAuthConfig,
    deviceAuthorization: deviceAuthorizationConfig,
    anonymous: anonymousConfig,
    jwt: jwtConfig,
    /** Gatehouse's hosted end-user pages (server/features/hosted-pages). */
    hostedPages: hostedPagesConfig,
    oidcProvider: oidcProviderConfig,
    /** The Prometheus listener (server/features/metrics; docs/OBSERVABILITY.md). */
    metrics: metricsConfig,
    /**
     * The server's log (docs/OBSERVABILITY.md): `text` (one readable line) or `json` (one object per
     * line); lines below `level` are dropped (`debug` adds a line per answered request).
     */
    log: z
      .object({
        format: z.enum(['text', 'json']).default('text'),
        level: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
      })
      .prefault({}),
    /** Gatehouse in front of apps without a sign-in of their own (server/features/forward-auth). */
    forwardAuth: forwardAuthConfig,
    advanced: z
      .object({
        cookiePrefix: z
          .string()
          .regex(/^[A-Za-z0-9_.-]+$/, 'may contain only letters, digits, "_", "." and "-"')
          .default('better-auth'),
        /** Unset: secure cookies exactly when the base URL is https. */
        useSecureCookies: z.boolean().optional(),
        disableCSRFCheck: z.boolean().default(false),
        /**
         * better-auth's option: every cookie gets `Domain=<domain>` (unset: the base URL's host name),
         * so that apps on sibling host names (forward auth behind the same proxy) receive the session.
         */
        crossSubDomainCookies: z
          .object({
            enabled: z.boolean().default(false),
            domain: z
              .string()
              .trim()
              .regex(/^\.?[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/, 'must be a host name such as "example.lan"')
              .optional(),
          })
          .prefault({}),
        ipAddress: z
          .object({
            ipAddressHeaders: z.array(z.string().min(1)).default(['x-forwarded-for']),
            disableIpTracking: z.boolean().default(false),
            /** Peers whose forwarding headers are believed. */
            trustedProxies: z.array(z.string().min(1)).default(['127.0.0.1', '::1']),
          })
          .prefault({}),
      })
      .prefault({}),
  })
  .superRefine((c, ctx) => {
    if (c.emailAndPassword.minPasswordLength > c.emailAndPassword.maxPasswordLength) {
      ctx.addIssue({
        code: 'custom',
        path: ['emailAndPassword', 'minPasswordLength'],
        message: 'must not exceed emailAndPassword.maxPasswordLength',
      })
    }
    if (c.username.minUsernameLength > c.username.maxUsernameLength) {
      ctx.addIssue({
        code: 'custom',
        path: ['username', 'minUsernameLength'],
        message: 'must not exceed username.maxUsernameLength',
      })
    }
  })

export type GatehouseConfig = z.output<typeof configSchema>
export type GatehouseConfigInput = z.input<typeof configSchema>
export type AdditionalField = z.output<typeof additionalField>

/** "emailAndPassword.minPasswordLength: Too small: expected number to be >=1" — one line, naming the field. */
export function describeConfigError(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'invalid configuration'
  const path = issue.path.map(String).join('.')
  return path ? `${path}: ${issue.message}` : issue.message
}
