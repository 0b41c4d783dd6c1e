import type { CounterDeclaration } from '../../core/events.js'

export const SAML_ASSERTIONS = 'gatehouse_saml_assertions_total'

/** The SAML identity provider's counters (Feature `metrics`). */
export const samlMetrics: readonly CounterDeclaration[] = [
  {
    name: SAML_ASSERTIONS,
    help: 'SAML identity provider: assertions issued, and requests refused (outcome issued|refused)',
    labels: [{ name: 'outcome', values: ['issued', 'refused'] }],
    zeros: [['issued'], ['refused']],
  },
]
