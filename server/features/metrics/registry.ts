import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { AuthContext } from '../../core/context.js'
import type { CounterDeclaration, ServerEvents, SignInMethod, SignInOutcome } from '../../core/events.js'
import { featuresOf } from '../../features-of.js'
import { RequestStats } from './requests.js'
import { scrapeCounts } from './store.js'

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
  for (const result of ['sent', 'failed']) mail.labels(result).inc(0)
  for (const reason of ['rate-limit', 'lockout']) refusals.labels(reason).inc(0)

  registerDatabaseGauges(ctx, registry)

  // The features' own counters (Feature `metrics`), each counted into plain numbers, handed over when scraped.
  const declared = new Map<string, DeclaredCounter>()
  for (const feature of featuresOf(ctx)) {
    for (const declaration of feature.metrics ?? []) declared.set(declaration.name, declaredCounter(registry, declaration))
  }

  const events: ServerEvents = {
    requestAnswered: (route, method, status, ms) => requests.record(route, method, status, ms),
    signIn: (method: SignInMethod, outcome: SignInOutcome) => signIns.labels(SIGN_IN_METHODS.has(method) ? method : 'other', outcome).inc(),
    refused: (kind) => refusals.labels(kind).inc(),
    sessionCache: (hit) => {
      if (hit) lookups.hit++
      else lookups.miss++
    },
    mailDelivery: (sent) => mail.labels(sent ? 'sent' : 'failed').inc(),
    jobSucceeded: (job) => jobs.labels(job).set(ctx.clock.now() / 1000),
    count: (name, ...values) => declared.get(name)?.count(values),
  }
  return { registry, events }
}

/**
 * The gauges read from the database when scraped (sessions, users, outbox: one query per scrape,
 * shared) and, on PostgreSQL, the connection pool's.
 */
function registerDatabaseGauges(ctx: AuthContext, registry: Registry): void {
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
}

interface DeclaredCounter {
  count(values: readonly string[]): void
}

/**
 * A feature's counter: its label values checked against the declared ones (else `other`), counted
 * under one key per combination into a plain map (no prom-client work per event: forward auth
 * counts every proxied request), and handed to prom-client when scraped.
 */
function declaredCounter(registry: Registry, declaration: CounterDeclaration): DeclaredCounter {
  const labels = declaration.labels ?? []
  const allowed = labels.map((label) => (label.values ? new Set(label.values) : null))
  const SEP = '\u0001'
  const counts = new Map<string, number>()
  for (const zero of declaration.zeros ?? []) counts.set(zero.join(SEP), 0)
  new Counter({
    name: declaration.name,
    help: declaration.help,
    labelNames: labels.map((label) => label.name),
    registers: [registry],
    collect() {
      this.reset()
      for (const [key, n] of counts) {
        if (labels.length === 0) this.inc(n)
        else this.labels(...key.split(SEP)).inc(n)
      }
    },
  })
  return {
    count(values) {
      let key = ''
      for (let i = 0; i < labels.length; i++) {
        const value = values[i] ?? ''
        const known = allowed[i]
        key += (i > 0 ? SEP : '') + (known && !known.has(value) ? 'other' : value)
      }
      counts.set(key, (counts.get(key) ?? 0) + 1)
    },
  }
}
