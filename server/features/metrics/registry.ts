import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { AuthContext } from '../../core/context.js'
import type { ForwardAuthOutcome, ServerEvents, SignInMethod, SignInOutcome } from '../../core/events.js'
import { RequestStats } from './requests.js'
import { scrapeCounts } from './store.js'

const FORWARD_AUTH_OUTCOMES: readonly ForwardAuthOutcome[] = [
  'bypass',
  'allowed',
  'unauthenticated',
  'second-factor',
  'unverified',
  'forbidden',
]

/** The OIDC grant types a label may name; any other is `other`. */
const GRANTS = new Set(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'])

/** Sign-in methods a label may name; a feature's new method shows as itself once added here. */
const SIGN_IN_METHODS = new Set([
  'email',
  'username',
  'social',
  'passkey',
  'two-factor',
  'email-verification',
  'magic-link',
  'email-otp',
  'anonymous',
  'ldap',
])

/**
 * The server's Prometheus registry and the `ctx.events` that feeds it. Counters not on the hot
 * path are prom-client's own; requests are counted by RequestStats; the gauges read from the
 * database (sessions, users, outbox) are computed when scraped.
 */
export function createMetrics(ctx: AuthContext): { registry: Registry; events: ServerEvents } {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // Gauges named like counters, which `promtool check metrics` refuses; the per-type
  // nodejs_active_handles / _requests / _resources gauges say the same.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
    registry.removeSingleMetric(name)
  const requests = new RequestStats()
  registry.registerMetric(requests.counterMetric() as never)
  registry.registerMetric(requests.histogramMetric() as never)

  const signIns = new Counter({
    name: 'gatehouse_sign_ins_total',
    help: 'Sign-in attempts by method and outcome (success, second-factor, wrong-credentials, banned, locked, refused, error)',
    labelNames: ['method', 'outcome'],
    registers: [registry],
  })
  const refusals = new Counter({
    name: 'gatehouse_refusals_total',
    help: 'Requests refused by a defence: rate-limit (per client) or lockout (per account password lockout)',
    labelNames: ['reason'],
    registers: [registry],
  })
  // Counted on the hot path (every get-session) into plain numbers, handed over when scraped.
  const lookups = { hit: 0, miss: 0 }
  new Counter({
    name: 'gatehouse_session_cache_lookups_total',
    help: 'Session lookups answered by the in-memory session cache (hit) or sent to the database (miss)',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset()
      this.labels('hit').inc(lookups.hit)
      this.labels('miss').inc(lookups.miss)
    },
  })
  const oidcTokens = new Counter({
    name: 'gatehouse_oidc_tokens_issued_total',
    help: 'Token responses of the OpenID provider by grant type',
    labelNames: ['grant'],
    registers: [registry],
  })
  const samlAssertions = new Counter({
    name: 'gatehouse_saml_assertions_total',
    help: 'SAML identity provider: assertions issued, and requests refused (outcome issued|refused)',
    labelNames: ['outcome'],
    registers: [registry],
  })
  for (const outcome of ['issued', 'refused']) samlAssertions.labels(outcome).inc(0)
  const mail = new Counter({
    name: 'gatehouse_mail_deliveries_total',
    help: 'Outbox delivery attempts by result (sent, failed)',
    labelNames: ['result'],
    registers: [registry],
  })
  const jobs = new Gauge({
    name: 'gatehouse_job_last_success_timestamp_seconds',
    help: 'When a background job (backup, oidc-cleanup) last finished successfully, in Unix seconds',
    labelNames: ['job'],
    registers: [registry],
  })
  // Forward auth answers every protected request: counted into plain numbers, handed over when scraped.
  const decisions = new Map<number, number[]>()
  new Counter({
    name: 'gatehouse_forward_auth_decisions_total',
    help: 'Forward-auth answers to the reverse proxy by deciding rule (rules[i], defaultPolicy, malformed-path) and outcome',
    labelNames: ['rule', 'outcome'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [rule, counts] of decisions) {
        const label = rule >= 0 ? `rules[${rule}]` : rule === -1 ? 'defaultPolicy' : 'malformed-path'
        counts.forEach((n, i) => {
          if (n > 0) this.labels(label, FORWARD_AUTH_OUTCOMES[i] as string).inc(n)
        })
      }
    },
  })
  for (const result of ['sent', 'failed']) mail.labels(result).inc(0)
  for (const reason of ['rate-limit', 'lockout']) refusals.labels(reason).inc(0)

  // Read from the database once per scrape, shared by the three gauges that show it.
  let counting: Promise<Awaited<ReturnType<typeof scrapeCounts>>> | null = null
  const counts = () => {
    counting ??= scrapeCounts(ctx).finally(() => {
      setImmediate(() => {
        counting = null
      })
    })
    return counting
  }
  new Gauge({
    name: 'gatehouse_sessions_active',
    help: 'Sessions not expired',
    registers: [registry],
    async collect() {
      this.set((await counts()).activeSessions)
    },
  })
  new Gauge({
    name: 'gatehouse_users',
    help: 'User accounts',
    registers: [registry],
    async collect() {
      this.set((await counts()).users)
    },
  })
  new Gauge({
    name: 'gatehouse_mail_outbox_messages',
    help: 'Messages in the mail outbox by status (queued, sending, sent, failed)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset()
      for (const status of ['queued', 'sending', 'sent', 'failed']) this.labels(status).set(0)
      for (const row of (await counts()).outbox) this.labels(row.status).set(row.messages)
    },
  })
  const pool = ctx.storage.poolStats
  if (pool) {
    new Gauge({
      name: 'gatehouse_db_pool_connections',
      help: 'PostgreSQL pool connections of this instance by state (in-use, idle), and requests waiting for one (waiting)',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const stats = pool()
        this.labels('in-use').set(stats.total - stats.idle)
        this.labels('idle').set(stats.idle)
        this.labels('waiting').set(stats.waiting)
      },
    })
  }

  // LDAP searches, counted into a plain number, handed over when scraped.
  let ldapSearches = 0
  new Counter({
    name: 'gatehouse_ldap_searches_total',
    help: 'Searches answered by the LDAP directory (its binds are gatehouse_sign_ins_total{method="ldap"})',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(ldapSearches)
    },
  })

  const events: ServerEvents = {
    requestAnswered: (route, method, status, ms) => requests.record(route, method, status, ms),
    signIn: (method: SignInMethod, outcome: SignInOutcome) => signIns.labels(SIGN_IN_METHODS.has(method) ? method : 'other', outcome).inc(),
    refused: (kind) => refusals.labels(kind).inc(),
    sessionCache: (hit) => {
      if (hit) lookups.hit++
      else lookups.miss++
    },
    oidcToken: (grant) => oidcTokens.labels(GRANTS.has(grant) ? grant : 'other').inc(),
    mailDelivery: (sent) => mail.labels(sent ? 'sent' : 'failed').inc(),
    samlAssertion: (outcome) => samlAssertions.labels(outcome).inc(),
    jobSucceeded: (job) => jobs.labels(job).set(ctx.clock.now() / 1000),
    forwardAuthDecision: (rule, outcome) => {
      let counts = decisions.get(rule)
      if (!counts) {
        counts = FORWARD_AUTH_OUTCOMES.map(() => 0)
        decisions.set(rule, counts)
      }
      const i = FORWARD_AUTH_OUTCOMES.indexOf(outcome)
      counts[i] = (counts[i] ?? 0) + 1
    },
    ldapSearch: () => {
      ldapSearches++
    },
  }
  return { registry, events }
}
