import { createRequire } from 'node:module'
import { z } from 'zod'
import { describeInvalidTrustedOrigin } from './trusted-origins.js'
import { rateLimitRule } from './rate-limit-rule.js'
import { secret } from './secret.js'

/**
 * The runtime configuration's core sections. Keys use better-auth's option names wherever one
 * exists so that better-auth users recognise them; every default comes from SPEC §9.
 * Durations are in seconds, like better-auth's options.
 *
 * The whole schema (these sections plus every feature's, gathered by bin/gen-features.js into
 * server/features/config-sections.ts) is assembled one floor up, in server/config-schema.ts, which
 * hands it down: its type through the `WholeConfig` interface below (a module augmentation), its
 * value through `provideConfigSchema` (the config store and the secret marks read it). Nothing in
 * config/ imports a feature.
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

/** The `mail` section: the sender, the app name, SMTP, and the edited message templates. */
function mailSection() {
  return z
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
          password: secret(z.string()).optional(),
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
    .prefault({})
}

/** The `session` section: lifetimes, refresh and the cookie cache (better-auth's option names). */
function sessionSection() {
  return z
    .object({
      expiresIn: seconds.default(604800),
      updateAge: seconds.default(86400),
      freshAge: seconds.default(86400),
      disableSessionRefresh: z.boolean().default(false),
      cookieCache: z.object({ enabled: z.boolean().default(false), maxAge: seconds.default(300) }).prefault({}),
    })
    .prefault({})
}

/** The `database` section: the shared PostgreSQL database of several instances. */
function databaseSection() {
  return z
    .object({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
        .optional(),
      /** Connections of the PostgreSQL pool of each instance. */
      poolSize: z.number().int().min(1).max(1000).default(10),
    })
    .prefault({})
}

/** The `secondaryStorage` section: Redis or Valkey. */
function secondaryStorageSection() {
  return z
    .object({
      url: z
        .string()
        .regex(/^(redis|rediss|valkey|valkeys):\/\//, 'must start with redis:// or rediss://')
        .optional(),
    })
    .prefault({})
}

/** The `rateLimit` section: the general and strict rules, where counters are kept, and custom rules. */
function rateLimitSection() {
  return z
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
    .prefault({})
}

/** The `security` section: the hash queue, account lockout and common-password refusal. */
function securitySection() {
  return z
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
    .prefault({})
}

/** The `log` section: the server log's format and level. */
function logSection() {
  return z
    .object({
      format: z.enum(['text', 'json']).default('text'),
      level: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
    })
    .prefault({})
}

/** The `advanced` section: cookies (prefix, Secure, cross-subdomain Domain), the CSRF check, client IP addresses. */
function advancedSection() {
  return z
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
    .prefault({})
}

/**
 * The config schema: the core sections, `sections` (the features' root sections) and
 * `userSections` (the features' sections under `user`) mounted beside them. The larger core
 * sections are built by their own functions above (fresh schema objects at each build, as before).
 */
export function buildConfigSchema<S extends z.ZodRawShape, U extends z.ZodRawShape>(sections: S, userSections: U) {
  return z.object({
    /** better-auth's `appName`: the name the hosted pages show (unset: mail.appName). */
    appName: z.string().min(1).max(100).optional(),
    basePath: z
      .string()
      .regex(/^\/[A-Za-z0-9/_-]*$/, 'must start with / and contain only path characters')
      .default('/api/auth'),
    trustedOrigins: z.array(trustedOriginEntry).default([]),
    disabledPaths: z.array(z.string().startsWith('/')).default([]),
    /** Verification records (reset, delete-account, OAuth state): expired ones are removed at each lookup. */
    verification: z.object({ disableCleanup: z.boolean().default(false) }).prefault({}),
    /**
     * What Gatehouse asserts to other apps (core/admission.ts): with `requireVerifiedEmail`, forward
     * auth, SAML, LDAP and the OIDC provider vouch only for people whose email is verified.
     * better-auth's own API keeps `emailAndPassword.requireEmailVerification`.
     */
    identity: z.object({ requireVerifiedEmail: z.boolean().default(true) }).prefault({}),
    /** Outgoing mail: every message goes through the outbox; SMTP delivers it when configured. */
    mail: mailSection(),
    session: sessionSection(),
    /**
     * The shared database (several instances): postgres://… selects PostgreSQL (--database-url /
     * GATEHOUSE_DATABASE_URL win over it); absent, the data directory's SQLite file.
     */
    database: databaseSection(),
    /** Redis or Valkey as better-auth's secondary storage (--redis-url / GATEHOUSE_REDIS_URL win over it). */
    secondaryStorage: secondaryStorageSection(),
    rateLimit: rateLimitSection(),
    user: z
      .object({
        additionalFields: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), additionalField).default({}),
        // user.changeEmail, user.deleteUser: the account feature's (bin/gen-features.js gathers them).
        ...userSections,
      })
      // Every section under `user` has its defaults; `{}` cannot be checked against a generic U.
      .prefault({} as never),
    /**
     * Who may create an account (issue 47 §2; core/sign-up-gate.ts): `open` anyone who reaches the
     * server (better-auth's behaviour), `invitation` only an address with a pending organization
     * invitation or an admin's sign-up invitation, `closed` nobody (admins still create users).
     * Applies to every way a user is created by signing in: email and password, social and generic
     * OAuth, magic link, email code. better-auth's own `disableSignUp` options keep working beside it.
     */
    signUp: z.object({ mode: z.enum(['open', 'invitation', 'closed']).default('open') }).prefault({}),
    /** Gatehouse's own defences beyond better-auth (docs/SECURITY.md). */
    security: securitySection(),
    /**
     * The server's log (docs/OBSERVABILITY.md): `text` (one readable line) or `json` (one object per
     * line); lines below `level` are dropped (`debug` adds a line per answered request).
     */
    log: logSection(),
    advanced: advancedSection(),
    // Every section a feature folder owns (its config.ts `configSections`), gathered by bin/gen-features.js.
    ...sections,
  })
}

let tldts: typeof import('tldts') | null = null
/**
 * tldts (the Public Suffix List, ~150 kB of code and its trie on the heap), loaded at the first
 * cookie domain checked rather than at every start: most installations set none (issue 39). A
 * synchronous require, as zod's refinements are synchronous; Node's, so the bundle leaves it out.
 */
const publicSuffixes = (): typeof import('tldts') => {
  tldts ??= createRequire(import.meta.url)('tldts') as typeof import('tldts')
  return tldts
}

/**
 * Whether browsers accept `Domain=<domain>` on a cookie: not an IP address, and not a public suffix
 * of the Public Suffix List, ICANN and private sections alike (`home.arpa`, `co.uk`, `github.io`;
 * tldts also treats an unknown single label such as `lan` or `localhost` as one). Chromium refuses
 * such a Domain attribute, so every sign-in would be lost.
 */
export function registrableCookieDomain(domain: string): boolean {
  const name = domain.replace(/^\./, '').toLowerCase()
  return publicSuffixes().getDomain(name, { allowPrivateDomains: true }) !== null
}

/**
 * The whole schema's type, filled one floor up: server/config-schema.ts declares
 * `interface WholeConfig { schema: typeof configSchema }` for this module (TypeScript's module
 * augmentation), so config/, db/, core/ and http/ name the whole config without importing a feature.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by server/config-schema.ts's module augmentation
export interface WholeConfig {}
/** The whole config schema (core sections only when nothing filled `WholeConfig`). */
export type WholeConfigSchema = WholeConfig extends { schema: infer S extends z.ZodType }
  ? S
  : ReturnType<typeof buildConfigSchema<Record<never, never>, Record<never, never>>>

export type GatehouseConfig = z.output<WholeConfigSchema>
export type GatehouseConfigInput = z.input<WholeConfigSchema>

let provided: WholeConfigSchema | null = null

/** The composition floor (server/config-schema.ts) hands the whole schema down, once, as it loads. */
export function provideConfigSchema(schema: WholeConfigSchema): void {
  provided = schema
}

/** The whole config schema, as server/config-schema.ts provided it. */
export function wholeConfigSchema(): WholeConfigSchema {
  if (!provided) throw new Error('no config schema: import server/config-schema.ts (the composition floor) first')
  return provided
}
export type AdditionalField = z.output<typeof additionalField>

/** "emailAndPassword.minPasswordLength: Too small: expected number to be >=1" — one line, naming the field. */
export function describeConfigError(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'invalid configuration'
  const path = issue.path.map(String).join('.')
  return path ? `${path}: ${issue.message}` : issue.message
}
