import type { AuthContext } from '../../core/context.js'
import type { CounterDeclaration } from '../../core/events.js'
import type { Decider, Outcome } from './rules.js'

const DECISIONS = 'gatehouse_forward_auth_decisions_total'
const OUTCOMES: readonly Outcome[] = ['bypass', 'allowed', 'unauthenticated', 'second-factor', 'unverified', 'enrol', 'forbidden']

/** Forward auth's counters (Feature `metrics`): its answers to the reverse proxy. */
export const forwardAuthMetrics: readonly CounterDeclaration[] = [
  {
    name: DECISIONS,
    help: 'Forward-auth answers to the reverse proxy by deciding rule (rules[i], defaultPolicy, malformed-path) and outcome',
    // The rule label is bounded by forwardAuth.rules (one value per rule).
    labels: [{ name: 'rule' }, { name: 'outcome', values: OUTCOMES }],
  },
]

/** `rules[i]` labels, made once per index: every proxied request counts one. */
const ruleLabels: string[] = []

function ruleLabel(index: number): string {
  let label = ruleLabels[index]
  if (label === undefined) {
    label = `rules[${index}]`
    ruleLabels[index] = label
  }
  return label
}

export function countDecision(ctx: AuthContext, decider: Decider, outcome: Outcome): void {
  const rule = decider.kind === 'rule' ? ruleLabel(decider.index) : decider.kind === 'default' ? 'defaultPolicy' : 'malformed-path'
  ctx.events.count(DECISIONS, rule, outcome)
}
