import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The LDAP feature's refusals outside the LDAP wire (the panel's bind-and-search test), spelled here only. */
export const LDAP_ERRORS = {
  INVALID_FILTER: 'This is not an LDAP search filter: write it as in RFC 4515, e.g. (uid=alice) or (&(objectClass=person)(mail=*))',
} as const

export type LdapErrorCode = keyof typeof LDAP_ERRORS

export const ldapError = (status: ErrorStatus, code: LdapErrorCode, field?: string): APIError =>
  new APIError(status, code, LDAP_ERRORS[code], {}, field)
