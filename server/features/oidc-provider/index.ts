import type { IncomingMessage, ServerResponse } from 'node:http'
import type Provider from 'oidc-provider'
import type { AuthContext } from '../../core/context.js'
import { defineFeature } from '../../feature.js'
import type { Logger } from '../../log.js'
import type { RouteContext } from '../../http/route.js'
import { resolveRequestSession } from '../../http/session.js'
import { jwksJSON } from '../jwt/keys.js'
import { dropEndedSession, gatehouseRequest } from './adapter.js'
import { WriteBatch } from './batch.js'
import { handleInteraction } from './interaction.js'
import { oidcPanel } from './panel.js'
import { oidcProviderRoutes } from './routes.js'
import {
  INTERACTION_PREFIX,
  internalRegistrationToken,
  OFFLINE_ASKED,
  OIDC_ROUTES,
  providerCache,
  requestState,
  SCOPES,
} from './provider.js'
import { refundRegistration, registrationRequest, spendRegistration } from './registration.js'
import { fastToken } from './token-fast.js'
import { deleteExpiredModels, deleteOldLogoutDeliveries } from './store.js'
import { logoutOutbox, queueEndedSessions, setDeliveryWaker, stopDeliveries } from './backchannel.js'
import { OIDC_ERRORS } from './errors.js'
import * as tables from './schema.js'
import { configSections } from './config.js'
import { oidcMetrics } from './metrics.js'

/** How often the back-channel logout queue is checked for due deliveries (retries, other instances' notices). */
const DELIVERY_POLL_MS = 2_000

const DISCOVERY = '/.well-known/openid-configuration'
const AS_METADATA = '/.well-known/oauth-authorization-server'

const caches = new WeakMap<AuthContext, ReturnType<typeof providerCache>>()
let logger: Logger = { info() {}, warn() {}, error: (m, e) => console.error(m, e ?? '') }

function cacheFor(ctx: AuthContext): ReturnType<typeof providerCache> {
  let cache = caches.get(ctx)
  if (!cache) {
    cache = providerCache(ctx, logger)
    caches.set(ctx, cache)
  }
  return cache
}

/**
 * Sends the due back-channel logout notices now (the background job's body; tests drive it).
 * Returns how many were sent.
 */
export async function runLogoutDeliveries(ctx: AuthContext): Promise<number> {
  return logoutOutboxOf(ctx).run()
}

/** The context's back-channel logout queue on the outbox engine (backchannel.ts). */
const logoutOutboxOf = (ctx: AuthContext) =>
  logoutOutbox(
    ctx,
    () => cacheFor(ctx).get(),
    () => logger,
  )

/** Why the last token requests went to oidc-provider instead of the fast path (tests read it). */
export const fastTokenHandOvers: string[] = []
const fastTokenHandOver = (why: string): void => {
  fastTokenHandOvers.push(why)
  if (fastTokenHandOvers.length > 100) fastTokenHandOvers.shift()
}

const callbacks = new WeakMap<Provider, ReturnType<Provider['callback']>>()

/** Koa composes its middleware in callback(): once per provider instance. */
function callbackOf(provider: Provider): ReturnType<Provider['callback']> {
  let cb = callbacks.get(provider)
  if (!cb) {
    cb = provider.callback()
    callbacks.set(provider, cb)
  }
  return cb
}

const isOidcPath = (path: string): boolean =>
  path.startsWith('/oauth2/') || path === DISCOVERY || path === AS_METADATA || path.startsWith(INTERACTION_PREFIX)

/** The authorization request's query with OFFLINE_ASKED set by us alone (see provider.ts). */
function markOfflineAsked(query: URLSearchParams): string {
  const params = new URLSearchParams(query)
  params.delete(OFFLINE_ASKED)
  const scopes = (params.get('scope') ?? '').split(' ')
  const prompts = (params.get('prompt') ?? '').split(' ')
  if (scopes.includes('offline_access') && !prompts.includes('consent')) params.set(OFFLINE_ASKED, '1')
  const text = params.toString()
  return text ? `?${text}` : ''
}

const KNOWN_SCOPES: ReadonlySet<string> = new Set(SCOPES)

async function handle(rc: RouteContext, original: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx } = rc
  const provider = await cacheFor(ctx).get()
  let req = original
  if (rc.path === OIDC_ROUTES.token && req.method === 'POST' && ctx.config().oidcProvider.fastTokenEndpoint) {
    const served = await fastToken(rc, req, res, { provider, scopes: KNOWN_SCOPES, onHandOver: fastTokenHandOver })
    if (served === true) return
    req = served
  }
  const resolved = await resolveRequestSession(rc, { disableRefresh: true })
  const active = resolved.status === 'active' ? resolved.data : null
  // A token request's writes are committed at once, with its audit entries, before the answer.
  const batch = rc.path === OIDC_ROUTES.token && req.method === 'POST' ? new WriteBatch() : undefined
  requestState.set(req, {
    userId: active?.user.id ?? null,
    signedInAt: active?.session.createdAt.getTime() ?? null,
    session: active?.session ?? null,
    meta: rc.meta,
    pending: [],
    batch,
  })
  return gatehouseRequest.run({ sessionId: active?.session.id ?? null, batch }, () => serve(rc, provider, req, res))
}

async function serve(rc: RouteContext, provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx } = rc
  if (rc.path.startsWith(INTERACTION_PREFIX)) return handleInteraction(ctx, provider, rc.path, req, res)
  if (rc.path === OIDC_ROUTES.jwks && req.method === 'GET') {
    // The jwt feature's JWKS: every published key, including retired ones in their grace period.
    const body = await jwksJSON(ctx)
    res.statusCode = 200
    res.setHeader('content-type', 'application/json; charset=utf-8')
    res.setHeader('cache-control', `public, max-age=${ctx.config().jwt.jwks.cacheMaxAge}`)
    res.end(body)
    return
  }
  if (rc.path === OIDC_ROUTES.registration && req.method === 'POST' && ctx.config().oidcProvider.registration.enabled) {
    // RFC 7591 §3: the initial access token, checked (and a use spent) here; oidc-provider sees an internal one.
    const presented = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1]
    const spent = presented ? await spendRegistration(ctx, presented) : ({ refused: 'invalid' } as const)
    if (!('tokenId' in spent)) {
      const description = spent.refused === 'client-limit' ? OIDC_ERRORS.REGISTRATION_CLIENT_LIMIT : 'invalid initial access token'
      res.statusCode = 401
      res.setHeader('content-type', 'application/json; charset=utf-8')
      res.setHeader('cache-control', 'no-store')
      res.setHeader('www-authenticate', `Bearer realm="registration", error="invalid_token", error_description="${description}"`)
      res.end(JSON.stringify({ error: 'invalid_token', error_description: description }))
      return
    }
    const { tokenId } = spent
    req.headers.authorization = `Bearer ${internalRegistrationToken(ctx.secret)}`
    const mountedReq = req as IncomingMessage & { originalUrl?: string }
    mountedReq.originalUrl = `${ctx.config().basePath}${rc.path}`
    mountedReq.url = rc.path
    // A use is taken before oidc-provider checks the metadata (two registrations never share the
    // last one) and given back when no client was created.
    await registrationRequest.run({ tokenId }, () => callbackOf(provider)(req, res))
    if (res.statusCode !== 201) await refundRegistration(ctx, tokenId)
    return
  }
  const ssoCookie = rc.cookies.get('_session')
  if (rc.path === OIDC_ROUTES.authorization && ssoCookie) await dropEndedSession(ctx, ssoCookie)
  // oidc-provider routes relative to its mount; the issuer's path is the base path.
  const path = rc.path === AS_METADATA ? DISCOVERY : rc.path
  const url = `${path}${rc.path === OIDC_ROUTES.authorization ? markOfflineAsked(rc.url.searchParams) : rc.url.search}`
  const mounted = req as IncomingMessage & { originalUrl?: string }
  mounted.originalUrl = `${ctx.config().basePath}${url}`
  mounted.url = url
  await callbackOf(provider)(req, res)
}

/** Gatehouse as an OpenID Connect provider (panva's oidc-provider), under the base path. */
export const oidcProviderFeature = defineFeature({
  id: 'oidc-provider',
  config: configSections,
  tables,
  errors: OIDC_ERRORS,
  metrics: oidcMetrics,
  routes: oidcProviderRoutes,
  // Dynamic registration: its own count per source (IPv4 address, IPv6 /64) by the HTTP limiter.
  rateLimit: [
    { pathMatcher: (path) => path === OIDC_ROUTES.registration, rule: (ctx) => ctx.config().oidcProvider.registration.rateLimit },
  ],
  panel: oidcPanel,
  mount: {
    handles: (ctx, path) => ctx.config().oidcProvider.enabled && isOidcPath(path),
    handle,
    directPosts: [OIDC_ROUTES.token],
  },
  sessionsEnded: queueEndedSessions,
  start: (runtime) => {
    logger = runtime.logger
    const { ctx } = runtime
    // Back-channel logout deliveries (the outbox engine): soon after a notice is queued, and every
    // few seconds for retries (and notices queued by another instance or before a restart). Runs
    // may overlap: each client is served by one lane at a time, so one hanging RP holds up no other.
    const outbox = logoutOutboxOf(ctx)
    setDeliveryWaker(ctx, () => outbox.wake())
    outbox.poll(DELIVERY_POLL_MS)
    // Expired codes, tokens, sessions and interactions are removed hourly.
    const timer = setInterval(() => {
      // One instance at a time when several share a PostgreSQL database.
      runtime.ctx.storage
        .exclusive('oidc-cleanup', async () => {
          const now = runtime.ctx.clock.now()
          await deleteExpiredModels(runtime.ctx, new Date(now))
          const maxRetryAge = runtime.ctx.config().oidcProvider.backchannelLogout.maxRetryAge * 1000
          await deleteOldLogoutDeliveries(runtime.ctx, new Date(now - 86_400_000), new Date(now - maxRetryAge))
          runtime.ctx.events.jobSucceeded('oidc-cleanup')
        })
        .catch((error) => runtime.logger.error('OIDC cleanup failed:', error))
    }, 3_600_000)
    timer.unref()
    return async () => {
      clearInterval(timer)
      setDeliveryWaker(ctx, undefined)
      // Once stopped no run starts; the ones under way are awaited before the database closes.
      await stopDeliveries(ctx)
    }
  },
})
