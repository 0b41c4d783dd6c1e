import { z } from 'zod'

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
    /** Seconds an idle connection stays open. */
    idleTimeout: z.number().int().min(1).max(86_400).default(300),
    /** Open connections per client address. */
    maxConnectionsPerAddress: z.number().int().min(1).max(100_000).default(64),
    /** Users with a second factor may bind with their main password (it bypasses the second factor). */
    allowMainPasswordWithSecondFactor: z.boolean().default(false),
  })
  .refine((c) => !c.ldapsAddress || c.tls, { path: ['ldapsAddress'], message: 'needs ldap.tls (cert and key)' })
  .prefault({})

export type LdapConfig = z.output<typeof ldapConfig>

/** The host and port of a valid listener address. */
export function parseLdapAddress(value: string): { host: string; port: number } {
  const match = LDAP_ADDRESS.exec(value)
  if (!match?.[1] || !match[2]) throw new Error(`invalid address ${value}`)
  return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) }
}

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { ldap: ldapConfig }
