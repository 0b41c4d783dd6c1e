import { AsyncLocalStorage } from 'node:async_hooks'
import { isIP } from 'node:net'
import type Provider from 'oidc-provider'
import type { ClientInstance } from 'oidc-provider'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import { idleOff } from '../../core/idle-scope.js'
import { generateId } from '../../crypto/random.js'
import type { Logger } from '../../log.js'
import type { OidcLogoutDeliveryRow } from './schema.js'
import { isLocalHost } from './clients.js'
import {
  backchannelClients,
  claimLogoutDeliveries,
  dropLogoutDelivery,
  dropStaleLogoutDeliveries,
  dueLogoutClients,
  findClient,
  finishLogoutDelivery,
  oidcSessionsOf,
  postponeClientDeliveries,
  queueLogoutDeliveries,
  setBackchannelState,
} from './store.js'

/**
 * OpenID Connect Back-Channel Logout 1.0. When a Gatehouse session ends (the hosted sign-out page,
 * RP-initiated end-session, an admin's revocation, a ban, the person's deletion: core's
 * `sessionsEnded`), every client its OIDC sessions signed in to that has a
 * `backchannel_logout_uri` is owed a logout token. The notice is queued in the database in the
 * same transaction as the sign-out (never sent while it answers), and a background job claims due
 * rows (one instance per row), signs the token with oidc-provider (`typ logout+jwt`, `sid`) and
 * POSTs it, retrying with backoff across restarts. oidc-provider's own end-session notices go
 * through the same queue (provider.ts replaces its Client#backchannelLogout).
 */

/** How long a claimed row is this instance's before another may take it (a crash mid-delivery). */
const CLAIM_MS = 30_000
/** The first retry's delay; then as long as the client has been failing, up to MAX_BACKOFF_MS. */
const FIRST_RETRY_MS = 10_000
const MAX_BACKOFF_MS = 3_600_000
/** Rows a client's lane claims (and sends at once) at a time, and its rounds per run. */
const BATCH = 20
const MAX_ROUNDS = 50
/** Clients served at once by one run (each in its own lane). */
const MAX_LANES = 64

/** The retry delay of a client failing for `failingMs`: 10 s, then about doubling, at most hourly. */
export const retryDelay = (failingMs: number): number => Math.min(Math.max(FIRST_RETRY_MS, failingMs), MAX_BACKOFF_MS)

/**
 * One delivery's time limit: a real timer by default (oidc-provider's 2.5 s); replaceable so tests
 * fire it themselves (provider.ts's `fetch` puts it on every back-channel POST).
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
export const trustedDelivery = idleOff(new AsyncLocalStorage<{ trusted: boolean; stop: AbortSignal }>())

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

const errorText = (error: unknown): string =>
  (error instanceof Error
    ? error.cause instanceof Error
      ? `${error.message}: ${error.cause.message}`
      : error.message
    : String(error)
  ).slice(0, 300)

/** Per context: clients whose lane runs in this instance now (a new run leaves them to it), those lanes, and their stop. */
interface Lanes {
  clients: Set<string>
  running: Set<Promise<number>>
  stop: AbortController
}
const lanesOf = new WeakMap<AuthContext, Lanes>()

function lanes(ctx: AuthContext): Lanes {
  let state = lanesOf.get(ctx)
  if (!state) {
    state = { clients: new Set(), running: new Set(), stop: new AbortController() }
    lanesOf.set(ctx, state)
  }
  return state
}

/**
 * The server stops: deliveries in flight are cut off and their lanes end without recording an
 * outcome (their rows stay claimed for CLAIM_MS, then any instance takes them again). `inFlight`:
 * the delivery runs the caller started, awaited as well.
 */
export async function stopDeliveries(ctx: AuthContext, inFlight: Iterable<Promise<unknown>> = []): Promise<void> {
  const state = lanesOf.get(ctx)
  state?.stop.abort()
  // The runs begun before the stop (their first queries, before any lane) finish too, so none of
  // them queries a database that is being closed; an aborted state starts no lane meanwhile.
  await Promise.allSettled([...inFlight, ...(state?.running ?? [])])
  if (state) lanesOf.delete(ctx)
}

/**
 * One client's deliveries, apart from every other client's: it claims its due rows a batch at a
 * time and sends them at once; the first failure marks the client failing (the panel shows it,
 * with the error) and puts its other due rows off to the same retry, unattempted, so a hanging or
 * dead RP costs one timeout per retry, whatever its queue. Returns how many were sent.
 */
async function lane(
  ctx: AuthContext,
  provider: Provider,
  send: SendLogout,
  clientId: string,
  logger: Logger,
  stop: AbortSignal,
): Promise<number> {
  let sent = 0
  for (let round = 0; round < MAX_ROUNDS && !stop.aborted; round++) {
    const claimedAt = ctx.clock.now()
    const rows = await claimLogoutDeliveries(ctx, new Date(claimedAt), new Date(claimedAt + CLAIM_MS), BATCH, clientId)
    if (rows.length === 0) break
    const stored = await findClient(ctx, clientId)
    const client = stored?.backchannelLogoutUri ? await provider.Client.find(clientId) : undefined
    // The client was deleted or no longer takes notices: nothing is owed any more.
    if (!stored?.backchannelLogoutUri || !client) {
      for (const row of rows) await dropLogoutDelivery(ctx, row.id)
      continue
    }
    const trusted =
      stored.registeredByToken === null || hostAllowed(ctx.config().oidcProvider.registration.allowedHosts, stored.backchannelLogoutUri)
    const outcomes = await Promise.all(
      rows.map((row) =>
        trustedDelivery
          .run({ trusted, stop }, () => send.call(client, row.accountId, row.sid))
          .then(
            () => undefined,
            (error: unknown) => errorText(error),
          ),
      ),
    )
    if (stop.aborted) break
    const now = ctx.clock.now()
    const failed = outcomes.find((outcome) => outcome !== undefined)
    let retryAt = new Date(now)
    if (failed !== undefined) {
      const since = await setBackchannelState(ctx, clientId, { failingAt: new Date(now), error: failed })
      retryAt = new Date(now + retryDelay(now - (since?.getTime() ?? now)))
    }
    for (const [i, row] of rows.entries()) {
      const error = outcomes[i]
      if (error !== undefined) {
        await finishLogoutDelivery(ctx, row.id, { retryAt, error })
        continue
      }
      await finishLogoutDelivery(ctx, row.id, { sentAt: new Date(now) })
      sent++
      await recordAudit(ctx, {
        type: 'oidc.backchannel-logout',
        actorUserId: null,
        targetUserId: row.accountId,
        target: row.clientId,
        detail: { attempts: row.attempts },
      })
    }
    if (failed !== undefined) {
      await postponeClientDeliveries(ctx, clientId, new Date(now), retryAt, failed)
      logger.warn(`Back-channel logout to client ${clientId} failed, retrying at ${retryAt.toISOString()}: ${failed}`)
      break
    }
    if (stored.backchannelFailingSince) await setBackchannelState(ctx, clientId, 'healthy')
    if (rows.length < BATCH) break
  }
  return sent
}

/**
 * Sends the due deliveries, each client in its own lane (a client whose lane this instance is
 * running already is left to it); first gives up notices older than
 * `oidcProvider.backchannelLogout.maxRetryAge`. Returns how many were sent. Several instances may
 * run it at once (each row is claimed by one).
 */
export async function deliverDueLogouts(ctx: AuthContext, provider: Provider, logger: Logger): Promise<number> {
  const send = originalSenders.get(provider)
  if (!send) return 0
  const now = ctx.clock.now()
  const maxAge = ctx.config().oidcProvider.backchannelLogout.maxRetryAge
  const dropped = await dropStaleLogoutDeliveries(ctx, new Date(now - maxAge * 1000))
  for (const clientId of new Set(dropped)) {
    const count = dropped.filter((id) => id === clientId).length
    logger.warn(
      `Back-channel logout to client ${clientId}: ${count} notice(s) given up, undelivered for ${maxAge} s (oidcProvider.backchannelLogout.maxRetryAge)`,
    )
  }
  const state = lanes(ctx)
  if (state.stop.signal.aborted) return 0
  const clients = (await dueLogoutClients(ctx, new Date(now), MAX_LANES)).filter((id) => !state.clients.has(id))
  const counts = await Promise.all(
    clients.map((clientId) => {
      state.clients.add(clientId)
      const running = lane(ctx, provider, send, clientId, logger, state.stop.signal).finally(() => {
        state.clients.delete(clientId)
        state.running.delete(running)
      })
      state.running.add(running)
      return running
    }),
  )
  return counts.reduce((a, b) => a + b, 0)
}
