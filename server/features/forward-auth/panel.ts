import { admitToFace } from '../../core/sign-in-table.js'
import { findUserByEmail } from '../../core/user-store.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { refuseConflicts } from '../../panel-frame/errors.js'
import type { ForwardAuthPolicy } from './config.js'
import { refusedOutcome, subjectOf } from './access.js'
import { decide, describeDecider, matchRule, type Outcome, parseTarget } from './rules.js'
import { proxySnippets } from './snippets.js'

const STATUS: Record<Outcome, number> = {
  bypass: 200,
  allowed: 200,
  unauthenticated: 401,
  'second-factor': 401,
  unverified: 401,
  enrol: 401,
  forbidden: 403,
}

/** The "Protected apps" view: the rules, their snippets, and what a user gets for a URL. */
export const forwardAuthPanel = (env: PanelEnv) => ({
  'forwardAuth.get'() {
    const config = env.gatehouse.ctx.config()
    const apiURL = env.apiURL()
    const { enabled, defaultPolicy, rules } = config.forwardAuth
    const cross = config.advanced.crossSubDomainCookies
    return {
      enabled,
      defaultPolicy,
      rules,
      endpoints: { authRequest: `${apiURL}/forward-auth/auth-request`, forwardAuth: `${apiURL}/forward-auth/forward-auth` },
      snippets: rules.map((rule) => proxySnippets(apiURL, rule.domain)),
      crossSubDomainCookies: { enabled: cross.enabled, domain: cross.domain ?? null },
    }
  },

  async 'forwardAuth.save'({
    base,
    ...patch
  }: {
    enabled?: boolean
    defaultPolicy?: ForwardAuthPolicy
    rules?: never[]
    base?: Record<string, unknown>
  }) {
    // Only what this admin changed, and only over what they saw (the configuration's one rule).
    await refuseConflicts(env.gatehouse.ctx, { forwardAuth: patch }, base)
    env.gatehouse.config.update({ forwardAuth: patch })
    await env.gatehouse.config.flushed()
    return { success: true }
  },

  async 'forwardAuth.test'(input: { url: string; email: string; secondFactor: boolean }) {
    const { ctx } = env.gatehouse
    const target = parseTarget(input.url)
    if (!target) return { status: 400, outcome: 'invalid-url' as const, rule: null, headers: {} }
    const matched = matchRule(ctx.config().forwardAuth, target)
    const rule = describeDecider(matched.decider)
    if (!input.email.trim()) {
      const outcome = decide(matched, null)
      return { status: STATUS[outcome], outcome, rule, headers: {} }
    }
    const user = await findUserByEmail(ctx, input.email.trim().toLowerCase())
    if (!user) return { status: 0, outcome: 'unknown-user' as const, rule, headers: {} }
    // The same admission as the endpoint's (core/admission.ts), before the rule's subject.
    const refusal = matched.policy === 'bypass' ? null : await admitToFace(ctx, { user }, 'forward-auth')
    if (refusal) {
      const outcome = refusedOutcome(refusal)
      return { status: STATUS[outcome], outcome, rule, headers: {} }
    }
    const { subject, headers } = await subjectOf(ctx, user, input.secondFactor)
    const outcome = decide(matched, subject)
    return { status: STATUS[outcome], outcome, rule, headers: outcome === 'allowed' ? Object.fromEntries(headers) : {} }
  },
})
