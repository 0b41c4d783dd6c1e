/**
 * The `ldap.*` settings as the LDAP view edits them, read from the effective config through the
 * Settings operations (no import of the LDAP server's code: the view works, showing defaults,
 * on a server whose build has no `ldap` section).
 */

/** The `ldap.*` keys this view edits, with their defaults (the LDAP feature's config section). */
export interface LdapForm {
  enabled: boolean
  address: string
  ldapsAddress: string
  baseDN: string
  searchRoles: string[]
  allowMainPasswordWithSecondFactor: boolean
  idleTimeout: number
}

export const LDAP_DEFAULTS: LdapForm = {
  enabled: false,
  address: '127.0.0.1:3890',
  ldapsAddress: '',
  baseDN: 'dc=gatehouse,dc=lan',
  searchRoles: ['admin'],
  allowMainPasswordWithSecondFactor: false,
  idleTimeout: 300,
}

/** The effective config's `ldap` section as this form, read defensively (absent or odd keys: the defaults). */
export function ldapFormOf(effective: Record<string, unknown> | undefined): LdapForm & { present: boolean; tls: boolean } {
  const raw = effective?.ldap
  const l = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>
  const str = (v: unknown, d: string) => (typeof v === 'string' ? v : d)
  const tls = l.tls && typeof l.tls === 'object' ? (l.tls as Record<string, unknown>) : null
  return {
    present: raw !== undefined,
    enabled: typeof l.enabled === 'boolean' ? l.enabled : LDAP_DEFAULTS.enabled,
    address: str(l.address, LDAP_DEFAULTS.address),
    ldapsAddress: str(l.ldapsAddress, LDAP_DEFAULTS.ldapsAddress),
    baseDN: str(l.baseDN, LDAP_DEFAULTS.baseDN),
    searchRoles: Array.isArray(l.searchRoles) ? l.searchRoles.filter((r): r is string => typeof r === 'string') : LDAP_DEFAULTS.searchRoles,
    allowMainPasswordWithSecondFactor:
      typeof l.allowMainPasswordWithSecondFactor === 'boolean'
        ? l.allowMainPasswordWithSecondFactor
        : LDAP_DEFAULTS.allowMainPasswordWithSecondFactor,
    idleTimeout: typeof l.idleTimeout === 'number' ? l.idleTimeout : LDAP_DEFAULTS.idleTimeout,
    tls: Boolean(tls?.cert && tls?.key),
  }
}

export const FIELD_PATHS = Object.keys(LDAP_DEFAULTS).map((k) => `ldap.${k}`)

/** The settings patch for the form: `ldapsAddress` empty removes the key (no LDAPS listener). */
export function ldapPatch(form: LdapForm): Record<string, unknown> {
  return {
    ldap: {
      enabled: form.enabled,
      address: form.address.trim(),
      ldapsAddress: form.ldapsAddress.trim() || null,
      baseDN: form.baseDN.trim(),
      searchRoles: form.searchRoles,
      allowMainPasswordWithSecondFactor: form.allowMainPasswordWithSecondFactor,
      idleTimeout: form.idleTimeout,
    },
  }
}

/** The form's values by dotted path, as a save compares them with what the view read (config-save.ts). */
export function ldapValues(form: LdapForm): Record<string, unknown> {
  const section = ldapPatch(form).ldap as Record<string, unknown>
  return Object.fromEntries(Object.entries(section).map(([key, value]) => [`ldap.${key}`, value]))
}
