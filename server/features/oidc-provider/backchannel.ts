import { AsyncLocalStorage } from 'node:async_hooks'
import type Provider from 'oidc-provider'
import type { ClientInstance } from 'oidc-provider'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import { idleOff } from '../../core/idle-scope.js'
import { generateId } from '../../crypto/random.js'
import type { Logger } from '../../log.js'
import type { OidcLogoutDeliveryRow } from './schema.js'
import {
  backchannelClients,
  claimLogoutDeliveries,
  dropLogoutDelivery,
  findClient,
  finishLogoutDelivery,
  oidcSessionsOf,
  queueLogoutDeliveries,
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
/** The first retry's delay; doubled per failed attempt up to MAX_BACKOFF_MS. */
const FIRST_RETRY_MS = 10_000
const MAX_BACKOFF_MS = 3_600_000
const BATCH = 20

export const retryDelay = (attempts: number): number => Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS)

/**
 * Whether the current delivery may reach loopback and private addresses: admin-registered clients
 * may (Gatehouse serves the LAN); self-registered ones only when their host is in
 * `oidcProvider.registration.allowedHosts` (provider.ts's `fetch` reads it).
 */
export const trustedDelivery = idleOff(new AsyncLocalStorage<boolean>())

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

function hostAllowed(ctx: AuthContext, uri: string): boolean {
  const allowed = ctx.config().oidcProvider.registration.allowedHosts
  try {
    const host = new URL(uri).hostname.toLowerCase()
    return allowed.some((entry) => entry.toLowerCase() === host)
  } catch {
    return false
  }
}

async function deliverOne(
  ctx: AuthContext,
  provider: Provider,
  send: SendLogout,
  row: OidcLogoutDeliveryRow,
  logger: Logger,
): Promise<boolean> {
  const stored = await findClient(ctx, row.clientId)
  const client = stored?.backchannelLogoutUri ? await provider.Client.find(row.clientId) : undefined
  // The client was deleted or no longer takes notices: nothing is owed any more.
  if (!stored?.backchannelLogoutUri || !client) {
    await dropLogoutDelivery(ctx, row.id)
    return false
  }
  const trusted = stored.registeredByToken === null || hostAllowed(ctx, stored.backchannelLogoutUri)
  try {
    await trustedDelivery.run(trusted, () => send.call(client, row.accountId, row.sid))
  } catch (error) {
    const message = (
      error instanceof Error ? (error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message) : String(error)
    ).slice(0, 300)
    const retryAt = new Date(ctx.clock.now() + retryDelay(row.attempts))
    await finishLogoutDelivery(ctx, row.id, { retryAt, error: message })
    logger.warn(
      `Back-channel logout to client ${row.clientId} failed (attempt ${row.attempts}), retrying at ${retryAt.toISOString()}: ${message}`,
    )
    return false
  }
  await finishLogoutDelivery(ctx, row.id, { sentAt: new Date(ctx.clock.now()) })
  await recordAudit(ctx, {
    type: 'oidc.backchannel-logout',
    actorUserId: null,
    targetUserId: row.accountId,
    target: row.clientId,
    detail: { attempts: row.attempts },
  })
  return true
}

/**
 * Claims the due deliveries and sends them; returns how many were sent. Several instances may run
 * it at once (each row is claimed by one).
 */
export async function deliverDueLogouts(ctx: AuthContext, provider: Provider, logger: Logger): Promise<number> {
  const send = originalSenders.get(provider)
  if (!send) return 0
  let sent = 0
  for (;;) {
    const now = ctx.clock.now()
    const rows = await claimLogoutDeliveries(ctx, new Date(now), new Date(now + CLAIM_MS), BATCH)
    if (rows.length === 0) return sent
    const results = await Promise.all(rows.map((row) => deliverOne(ctx, provider, send, row, logger)))
    sent += results.filter(Boolean).length
    if (rows.length < BATCH) return sent
  }
}
