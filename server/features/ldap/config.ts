import { z } from 'zod'
import { rateLimitRule } from '../../config/rate-limit-rule.js'
import type { ConfigCheck } from '../../feature.js'
import { BUILT_IN_ROLES } from '../admin/access.js'

/** `host:port`, the host an IPv4 address, a name, or an IPv6 address in brackets (`[::1]:3890`). */
export const LDAP_ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/

const address = (example: string) =>
  z
    .string()
    .regex(LDAP_ADDRESS, `must be host:port, e.g. ${example}`)
    .refine((value) => Number(LDAP_ADDRESS.exec(value)?.[2]) <= 65535, 'the port must be 0-65535')

/**
 * `ldap.*`: the read-only LDAP directory over the same users and groups (issue 36, docs/LDAP.md).
 * Off by default; read at start (a change takes effect at the next start), except `searchRoles`
 * and `allowMainPasswordWithSecondFactor`, read at every operation. That every role in
 * `searchRoles` is known (built-in or in `admin.roles`) is checked with the whole config
 * (config/schema.ts).
 */
export const ldapConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** The plain listener (StartTLS on it when `tls` is set); LLDAP's port by default. */
    address: address('127.0.0.1:3890').default('127.0.0.1:3890'),
    baseDN: z
      .string()
      .trim()
      .regex(/^[A-Za-z][A-Za-z0-9-]*=[^,]+(,[A-Za-z][A-Za-z0-9-]*=[^,]+)*$/, 'must be a DN such as dc=gatehouse,dc=lan')
      .default('dc=gatehouse,dc=lan'),
    /** Users holding one of these roles search the whole directory (apps bind as such a service user). */
    searchRoles: z.array(z.string().min(1)).default(['admin']),
    /** PEM files: StartTLS on `address`, and the certificate of `ldapsAddress`. */
    tls: z.object({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
    /** An LDAPS listener (TLS from the first byte); needs `tls`. */
    ldapsAddress: address('0.0.0.0:6360').optional(),
    /**
     * A simple bind with a password on a connection without TLS (no StartTLS, not LDAPS) is
     * refused `confidentialityRequired` (13) before its password is looked at. Unset: true whenever
     * `tls` or `ldapsAddress` is set (`tlsRequired`). Read at every bind.
     */
    requireTLS: z.boolean().optional(),
    /** Seconds an idle connection stays open. */
    idleTimeout: z.number().int().min(1).max(86_400).default(300),
    /** Open connections per client address (an IPv4 address, an IPv6 /64, as the HTTP rate limiter groups them). */
    maxConnectionsPerAddress: z.number().int().min(1).max(100_000).default(64),
    /** Open LDAP connections in all (file descriptors stay for HTTP); past it a new one gets a Notice of Disconnection (unavailable). */
    maxConnections: z.number().int().min(1).max(1_000_000).default(1024),
    /**
     * Simple binds with a password per source (an IPv4 address, an IPv6 /64), counted by the HTTP
     * request limiter (same store, same algorithm, off with `rateLimit.enabled: false`): at most
     * `max` failed binds per `window` seconds, then every bind from that source (a correct password
     * too) is answered `busy` (51) without its password being checked, until the window has passed.
     * A bind that succeeds does not use up the allowance. Unset: the HTTP sign-in rule
     * (`/sign-in/email` under `rateLimit`: `strict`, 3 per 10 s, or a matching `customRules` entry).
     * Read at every bind.
     */
    rateLimit: rateLimitRule.optional(),
    /** Users with a second factor may bind with their main password (it bypasses the second factor). */
    allowMainPasswordWithSecondFactor: z.boolean().default(false),
    /**
     * A search without the paged-results control returns at most this many entries, then
     * `sizeLimitExceeded` (4); paged searches are not cut. Read at every search.
     */
    maxUnpagedEntries: z.number().int().min(1).max(10_000_000).default(5000),
    /**
     * What one message may cost, checked while it is read, before it is decoded whole (docs/LDAP.md
     * "Limits"): a length prefix over `maxMessageBytes` closes the connection at once; a filter with
     * more clauses or deeper nesting, or a value longer than `maxValueBytes`, is answered
     * `adminLimitExceeded` (11). Read at every message.
     */
    limits: z
      .object({
        maxMessageBytes: z
          .object({
            /** Before the connection is bound (anonymous, or a bind refused). */
            beforeBind: z
              .number()
              .int()
              .min(1024)
              .max(16 * 1024 * 1024)
              .default(64 * 1024),
            /** Once bound as a person. */
            afterBind: z
              .number()
              .int()
              .min(1024)
              .max(16 * 1024 * 1024)
              .default(1024 * 1024),
          })
          .prefault({}),
        /** Filter items (each and, or, not, equality, substring, presence… counts one). */
        maxFilterClauses: z.number().int().min(1).max(100_000).default(512),
        /** Nesting of and/or/not in a filter. */
        maxFilterDepth: z.number().int().min(1).max(256).default(32),
        /** The longest single value in a message (a DN, an assertion value, a password, an attribute name). */
        maxValueBytes: z
          .number()
          .int()
          .min(64)
          .max(16 * 1024 * 1024)
          .default(16 * 1024),
      })
      .prefault({}),
  })
  .refine((c) => !c.ldapsAddress || c.tls, { path: ['ldapsAddress'], message: 'needs ldap.tls (cert and key)' })
  .prefault({})

export type LdapConfig = z.output<typeof ldapConfig>

/** Whether a password may be sent only over TLS: `requireTLS`, by default whenever TLS is configured. */
export function tlsRequired(conf: Pick<LdapConfig, 'requireTLS' | 'tls' | 'ldapsAddress'>): boolean {
  return conf.requireTLS ?? (conf.tls !== undefined || conf.ldapsAddress !== undefined)
}

/** The host and port of a valid listener address. */
export function parseLdapAddress(value: string): { host: string; port: number } {
  const match = LDAP_ADDRESS.exec(value)
  if (!match?.[1] || !match[2]) throw new Error(`invalid address ${value}`)
  return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) }
}

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { ldap: ldapConfig }

/** A role LDAP lets search the whole directory must exist, or no service user could ever hold it. */
export const configChecks: ConfigCheck<{ ldap: LdapConfig; admin: { roles: Readonly<Record<string, unknown>> } }> = ({ ldap, admin }) =>
  ldap.searchRoles
    .filter((role) => !(role in BUILT_IN_ROLES) && !(role in admin.roles))
    .map((role) => ({ path: ['ldap', 'searchRoles'], message: `"${role}" is not a known role (built-in, or declared in admin.roles)` }))
