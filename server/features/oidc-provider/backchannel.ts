import { AsyncLocalStorage } from 'node:async_hooks'
import { isIP } from 'node:net'
import type Provider from 'oidc-provider'
import type { ClientInstance } from 'oidc-provider'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import { idleOff } from '../../idle-scope.js'
import { generateId } from '../../crypto/random.js'
import type { Logger } from '../../log.js'
import { Outbox } from '../../core/outbox.js'
import type { OidcClientRow, OidcLogoutDeliveryRow } from './schema.js'
import { isLocalHost } from './clients.js'
import { backchannelClients, findClient, logoutDeliveryStore, oidcSessionsOf, queueLogoutDeliveries, setBackchannelState } from './store.js'

/**
 * OpenID Connect Back-Channel Logout 1.0. When a Gatehouse session ends (the hosted sign-out page,
 * RP-initiated end-session, an admin's revocation, a ban, the person's deletion: core's
 * `sessionsEnded`), every client its OIDC sessions signed in to that has a
 * `backchannel_logout_uri` is owed a logout token. The notice is queued in the database in the
 * same transaction as the sign-out (never sent while it answers), and the outbox engine
 * (core/outbox.ts) claims due rows (one instance per row), signs the token with oidc-provider
 * (`typ logout+jwt`, `sid`) and POSTs it, retrying with backoff across restarts. oidc-provider's
 * own end-session notices go through the same queue (provider.ts replaces its
 * Client#backchannelLogout).
 */

/** How long a claimed row is this instance's before another may take it (a crash mid-delivery). */
const CLAIM_MS = 30_000
/** The first retry after 10 s; then as long as the client has been failing (about doubling), at most hourly. */
const BACKOFF = { firstMs: 10_000, maxMs: 3_600_000 }
/** Rows a client's lane claims (and sends at once) at a time. */
const BATCH = 20
/** Clients served at once by one run (each in its own lane). */
const MAX_LANES = 64

/**
 * One delivery's time limit: a real timer by default (oidc-provider's 2.5 s); replaceable so tests
 * fire it themselves (the outbox engine puts it on every delivery, provider.ts's `fetch` on its POST).
 */
export const deliveryTimeout = {
  ms: 2_500,
  signal: (ms: number): AbortSignal => AbortSignal.timeout(ms),
}

/**
 * The delivery being made (provider.ts's `fetch` reads it): whether it may reach loopback and
 * private addresses. Admin-registered clients may (Gatehouse serves the LAN); self-registered ones
 * only when their host is in `oidcProvider.registration.allowedHosts`.
 */
export const trustedDelivery = idleOff(new AsyncLocalStorage<{ trusted: boolean; signal: AbortSignal }>())

/**
 * Whether a self-registered client's back-channel logout URI could ever be delivered: not when its
 * host is a loopback, private or other special-use address (`isSpecialUseIP`, oidc-provider's own
 * guard, which the delivery keeps for such clients) or a name of this machine or the local network
 * (`localhost`, `*.local`, `*.lan`, `*.home.arpa`, `*.internal`, a single label), unless the host
 * is in `allowedHosts`. The reason it would be refused, or undefined.
 */
export function undeliverableReason(
  uri: string,
  allowedHosts: readonly string[],
  isSpecialUseIP: (address: string) => boolean,
): string | undefined {
  if (hostAllowed(allowedHosts, uri)) return undefined
  let host: string
  try {
    host = new URL(uri).hostname.replace(/^\[|\]$/g, '').toLowerCase()
  } catch {
    return undefined
  }
  const literal = isIP(host) !== 0
  if (literal ? isSpecialUseIP(host) : isLocalHost(host))
    return `backchannel_logout_uri: ${host} is a loopback, private or local-network address, which back-channel logout reaches for a self-registered client only when the administrator lists it in oidcProvider.registration.allowedHosts`
  return undefined
}

interface Claims {
  accountId?: string
  authorizations?: Record<string, { sid?: string } | undefined>
}

/** Wakes the delivery job of a context soon after a notice was queued (set by the feature's start). */
const wakers = new WeakMap<AuthContext, () => void>()

export function setDeliveryWaker(ctx: AuthContext, wake: (() => void) | undefined): void {
  if (wake) wakers.set(ctx, wake)
  else wakers.delete(ctx)
}

const wake = (ctx: AuthContext): void => wakers.get(ctx)?.()

function delivery(ctx: AuthContext, clientId: string, accountId: string, sid: string): OidcLogoutDeliveryRow {
  const now = new Date(ctx.clock.now())
  return {
    id: generateId(),
    clientId,
    accountId,
    sid,
    attempts: 0,
    nextAttemptAt: now,
    claimedUntil: null,
    sentAt: null,
    lastError: null,
    createdAt: now,
  }
}

/** core's sessionsEnded hook: queues a notice per client each ended session's OIDC sessions signed in to. Queries only. */
export async function queueEndedSessions(ctx: AuthContext, gatehouseSessionIds: readonly string[]): Promise<void> {
  if (!ctx.config().oidcProvider.enabled) return
  const payloads = await oidcSessionsOf(ctx, gatehouseSessionIds)
  if (payloads.length === 0) return
  const owed: { clientId: string; accountId: string; sid: string }[] = []
  for (const text of payloads) {
    const claims = JSON.parse(text) as Claims
    if (!claims.accountId) continue
    for (const [clientId, authorization] of Object.entries(claims.authorizations ?? {}))
      if (authorization?.sid) owed.push({ clientId, accountId: claims.accountId, sid: authorization.sid })
  }
  const clients = await backchannelClients(ctx, [...new Set(owed.map((o) => o.clientId))])
  const rows = owed.filter((o) => clients.has(o.clientId)).map((o) => delivery(ctx, o.clientId, o.accountId, o.sid))
  if ((await queueLogoutDeliveries(ctx, rows)) > 0) wake(ctx)
}

/** oidc-provider's end-session notice for one client, queued like the others (at most once per client and sid). */
export async function queueLogout(ctx: AuthContext, clientId: string, accountId: string, sid: string): Promise<void> {
  if ((await queueLogoutDeliveries(ctx, [delivery(ctx, clientId, accountId, sid)])) > 0) wake(ctx)
}

/** oidc-provider's original Client#backchannelLogout (signs the logout token and POSTs it). */
export type SendLogout = (this: ClientInstance, sub: string, sid: string) => Promise<void>
export const originalSenders = new WeakMap<Provider, SendLogout>()

function hostAllowed(allowed: readonly string[], uri: string): boolean {
  try {
    const host = new URL(uri).hostname.toLowerCase()
    return allowed.some((entry) => entry.toLowerCase() === host)
  } catch {
    return false
  }
}

/** What a client's notices are delivered to: oidc-provider's client, its row, whether it may reach the LAN, the sender. */
interface LogoutTarget {
  client: ClientInstance
  stored: OidcClientRow
  trusted: boolean
  send: SendLogout
}

/** Per context: its queue of logout notices on the outbox engine. */
const outboxes = new WeakMap<AuthContext, Outbox<OidcLogoutDeliveryRow, LogoutTarget>>()

/**
 * The back-channel logout queue of a context on the outbox engine (core/outbox.ts: claim, lease,
 * time limit, backoff, max age, one lane per client): a destination is a client, its deliveries
 * signed and POSTed by oidc-provider (20 at a time, each limited by `deliveryTimeout`), its failure
 * marked on the client (the panel shows it) and retried after `retryDelay` of how long it has been
 * failing; notices older than `oidcProvider.backchannelLogout.maxRetryAge` are given up.
 */
export function logoutOutbox(
  ctx: AuthContext,
  providerOf: () => Promise<Provider>,
  logger: () => Logger,
): Outbox<OidcLogoutDeliveryRow, LogoutTarget> {
  let outbox = outboxes.get(ctx)
  if (outbox) return outbox
  outbox = new Outbox<OidcLogoutDeliveryRow, LogoutTarget>(
    {
      store: logoutDeliveryStore(ctx),
      leaseMs: CLAIM_MS,
      timeoutMs: deliveryTimeout.ms,
      timer: (ms) => deliveryTimeout.signal(ms),
      batch: BATCH,
      maxLanes: MAX_LANES,
      backoff: BACKOFF,
      maxAgeMs: () => ctx.config().oidcProvider.backchannelLogout.maxRetryAge * 1000,
      paused: () => !ctx.config().oidcProvider.enabled,
      async target(clientId) {
        const provider = await providerOf()
        const send = originalSenders.get(provider)
        if (!send) throw new Error('the OIDC provider has no back-channel sender')
        const stored = await findClient(ctx, clientId)
        const client = stored?.backchannelLogoutUri ? await provider.Client.find(clientId) : undefined
        // The client was deleted or no longer takes notices: nothing is owed any more.
        if (!stored?.backchannelLogoutUri || !client) return null
        const trusted =
          stored.registeredByToken === null || hostAllowed(ctx.config().oidcProvider.registration.allowedHosts, stored.backchannelLogoutUri)
        return { client, stored, trusted, send }
      },
      deliver: (row, { client, trusted, send }, signal) =>
        trustedDelivery.run({ trusted, signal }, () => send.call(client, row.accountId, row.sid)),
      async settled(row, _target, error) {
        if (error !== null) return
        await recordAudit(ctx, {
          type: 'oidc.backchannel-logout',
          actorUserId: null,
          targetUserId: row.accountId,
          target: row.clientId,
          detail: { attempts: row.attempts },
        })
      },
      failing: (clientId, { error, retryAt }) =>
        logger().warn(`Back-channel logout to client ${clientId} failed, retrying at ${retryAt.toISOString()}: ${error}`),
      async recovered(clientId, { stored }) {
        if (stored.backchannelFailingSince) await setBackchannelState(ctx, clientId, 'healthy')
      },
      expired: (clientId, count, maxAgeMs) =>
        logger().warn(
          `Back-channel logout to client ${clientId}: ${count} notice(s) given up, undelivered for ${maxAgeMs / 1000} s (oidcProvider.backchannelLogout.maxRetryAge)`,
        ),
      runFailed: (error) => logger().error('Back-channel logout delivery failed:', error),
    },
    // Soon after a notice is queued: once the sign-out's transaction has committed.
    { clock: ctx.clock, wakeDelayMs: 20 },
  )
  outboxes.set(ctx, outbox)
  return outbox
}

/**
 * The server stops: deliveries in flight are cut off and their lanes end without recording an
 * outcome (their rows stay claimed for CLAIM_MS, then any instance takes them again); the runs
 * under way are awaited, so none queries a database that is being closed.
 */
export async function stopDeliveries(ctx: AuthContext): Promise<void> {
  const outbox = outboxes.get(ctx)
  outboxes.delete(ctx)
  await outbox?.stop()
}
