import type { CounterDeclaration } from '../../core/events.js'

export const LDAP_SEARCHES = 'gatehouse_ldap_searches_total'

/** The directory's counters (Feature `metrics`); its binds are sign-ins, `gatehouse_sign_ins_total{method="ldap"}`. */
export const ldapMetrics: readonly CounterDeclaration[] = [
  {
    name: LDAP_SEARCHES,
    help: 'Searches answered by the LDAP directory (its binds are gatehouse_sign_ins_total{method="ldap"})',
    zeros: [[]],
  },
]
