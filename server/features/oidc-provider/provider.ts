import type { AsyncLocalStorage } from 'node:async_hooks'
import { createHmac } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type Provider from 'oidc-provider'
import type { ClientInstance, Configuration, KoaContextWithOIDC } from 'oidc-provider'
import type { GatehouseConfig } from '../../config/schema.js'
import { recordAudit } from '../../core/audit.js'
import type { SessionRow } from '../../core/sessions.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { idleOff } from '../../idle-scope.js'
import type { Logger } from '../../log.js'
import { providerSigningJwks } from '../jwt/keys.js'
import { accountFor, userClaims } from './accounts.js'
import { databaseAdapter } from './adapter.js'
import { ConsumedMeanwhile, type WriteBatch } from './batch.js'
import { ID_TOKEN_ALGS, registrationRefusal, secretMatches } from './clients.js'
import { attachGrant, rememberedConsent } from './consent.js'
import { nodeSigningKeys } from './signing.js'
import { pairwiseSubject, type SectorSource, sectorOf } from './subject.js'
import { commitWithOthers } from './commit.js'
import { originalSenders, queueLogout, type SendLogout, trustedDelivery, undeliverableReason } from './backchannel.js'
import { deleteGrantAndTokens } from './store.js'
import { countToken } from './metrics.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

/**
 * panva's oidc-provider (OpenID certified), configured for Gatehouse: issuer = the API's base URL,
 * storage = Gatehouse's database, signing keys = the jwt feature's (an RS256 key always among
 * them), sign-in and consent = Gatehouse's session and hosted pages. One instance per issuer,
 * key set and configuration, rebuilt when one of them changes.
 */

/** Paths of oidc-provider's endpoints under the base path (better-auth's oauth-provider names). */
export const OIDC_ROUTES = {
  authorization: '/oauth2/authorize',
  token: '/oauth2/token',
  userinfo: '/oauth2/userinfo',
  jwks: '/oauth2/jwks',
  revocation: '/oauth2/revoke',
  introspection: '/oauth2/introspect',
  end_session: '/oauth2/endsession',
  pushed_authorization_request: '/oauth2/par',
  registration: '/oauth2/register',
}

/**
 * The initial access token oidc-provider checks: a per-secret value the mount puts in place of the
 * caller's token once it has spent a use of a valid one (registration.ts); never seen outside.
 */
export const internalRegistrationToken = (secret: string): string =>
  createHmac('sha256', secret).update('gatehouse oidc-provider registration').digest('base64url')

/** oidc-provider's routes of dynamic registration and management (RFC 7591 / 7592). */
const REGISTRATION_ROUTES = new Set(['registration', 'client', 'client_update', 'client_delete'])

export const INTERACTION_PREFIX = '/oidc/interaction/'

/** What the mount learned about the request before handing it to oidc-provider. */
export interface GatehouseRequestState {
  /** The Gatehouse session's user (null: none, signed out or expired). */
  userId: string | null
  /** When that session was signed in (ms, Gatehouse's clock): auth_time and max_age count from it. */
  signedInAt?: number | null
  /** That session (the admission rule asks whether it is an impersonation or an API key's). */
  session?: SessionRow | null
  meta: RequestMeta
  /** Audit writes of this request's events, awaited before the answer leaves (see auditOf). */
  pending: Promise<void>[]
  /** A token request's writes and audit entries, committed at once before the answer (batch.ts). */
  batch?: WriteBatch
}

export const requestState = new WeakMap<IncomingMessage, GatehouseRequestState>()

export const SCOPES = ['openid', 'offline_access', 'email', 'profile', 'groups']

export const CLAIMS: Record<string, string[]> = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name', 'picture', 'preferred_username', 'updated_at'],
  groups: ['groups'],
}

const PKCE_REQUIRED = 'gatehouse_pkce_required'
const SKIP_CONSENT = 'gatehouse_skip_consent'
const RESOURCE_SERVER = 'gatehouse_resource_server'

/**
 * Set by the mount (never taken from the caller) on an authorization request whose scope asks for
 * offline_access without prompt=consent: oidc-provider drops that scope before the grant is known,
 * and keeps this parameter through sign-in, so loadExistingGrant can restore it when a remembered
 * consent covers it.
 */
export const OFFLINE_ASKED = 'gatehouse_offline_asked'

/**
 * Who may introspect (RFC 7662) a token: the client it was issued to, or a client marked as a
 * resource server (it checks tokens other clients present to it). Anyone else is answered
 * `{"active": false}`, as for an unknown token.
 */
export const mayIntrospect = (client: ClientInstance, token: { clientId?: string }): boolean =>
  client[RESOURCE_SERVER] === true || token.clientId === client.clientId

export const clientSkipsConsent = (client: ClientInstance | undefined): boolean => client?.[SKIP_CONSENT] === true

function cookieKeys(secret: string): string[] {
  return [createHmac('sha256', secret).update('gatehouse oidc-provider cookies').digest('base64url')]
}

/**
 * oidc-provider emits its events synchronously; the audit write each one starts is kept on the
 * request and awaited by answerAfterCommit (below) before the answer is sent, so an acknowledged
 * action (a token issued, a sign-out) always has its audit entry, and a failed write fails the
 * request instead of being lost.
 */
function auditOf(ctx: AuthContext) {
  return (koa: KoaContextWithOIDC, event: Parameters<typeof recordAudit>[1]): void => {
    const state = requestState.get(koa.req)
    if (state?.batch && !state.batch.closed) {
      state.batch.audits.push({ meta: state.meta, ...event })
      return
    }
    const write = recordAudit(ctx, { meta: state?.meta ?? null, ...event })
    if (state) state.pending.push(write)
    else write.catch(() => {})
  }
}

/**
 * Commits a token request's batch: its model writes and audit entries in one transaction (shared
 * with the other token requests of the same turn of the event loop, commit.ts). When a
 * model it consumed (a refresh token, a code) was consumed by a concurrent request first, nothing
 * of it is kept: the grant is revoked, as oidc-provider does when a consumed token is presented
 * again, and the error answer (invalid_grant) to send instead is returned.
 */
export async function commitTokenBatch(
  ctx: AuthContext,
  batch: WriteBatch,
  request: { clientId: string | null; grantType: string | null; actorUserId: string | null; route: string | null; meta: RequestMeta },
): Promise<{ error: string; error_description: string } | undefined> {
  batch.closed = true
  if (batch.writes.length === 0 && batch.audits.length === 0) return undefined
  try {
    await commitWithOthers(ctx, batch)
    return undefined
  } catch (error) {
    if (!(error instanceof ConsumedMeanwhile)) throw error
    const { clientId: client, grantType, actorUserId, meta } = request
    await ctx.storage.transaction(async () => {
      if (error.grantId) await deleteGrantAndTokens(ctx, error.grantId)
      await recordAudit(ctx, {
        type: 'oidc.token-refused',
        outcome: 'failure',
        actorUserId,
        target: client,
        meta,
        detail: { grantType, error: 'invalid_grant', description: 'grant request is invalid', reason: `${error.kind} already used` },
      })
      if (error.grantId)
        await recordAudit(ctx, {
          type: 'oidc.grant-revoked',
          actorUserId,
          target: client,
          meta,
          detail: { grantId: error.grantId, route: request.route },
        })
    })
    return { error: 'invalid_grant', error_description: 'grant request is invalid' }
  }
}

async function commitBatch(ctx: AuthContext, koa: KoaContextWithOIDC, state: GatehouseRequestState, batch: WriteBatch): Promise<void> {
  const refused = await commitTokenBatch(ctx, batch, {
    clientId: koa.oidc?.client?.clientId ?? null,
    grantType: (koa.oidc?.params?.grant_type as string | undefined) ?? null,
    actorUserId: accountIdOf(koa),
    route: koa.oidc?.route ?? null,
    meta: state.meta,
  })
  if (refused) {
    koa.status = 400
    koa.body = refused
  }
}

/** Settles every audit write the request started (rethrowing the first failure). */
export async function settleAudit(state: GatehouseRequestState | undefined): Promise<void> {
  if (!state) return
  while (state.pending.length > 0) {
    const batch = state.pending.splice(0)
    const results = await Promise.allSettled(batch)
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }
}

function accountIdOf(koa: KoaContextWithOIDC): string | null {
  const entities = koa.oidc?.entities as Record<string, { accountId?: string } | undefined> | undefined
  return entities?.Account?.accountId ?? entities?.Grant?.accountId ?? koa.oidc?.session?.accountId ?? null
}

interface Built {
  key: string
  provider: Provider
}

/** oidc-provider's module, loaded on first use (buildProvider). */
type OidcModule = typeof import('oidc-provider')
type ProviderConf = GatehouseConfig['oidcProvider']
type ProviderKeys = Awaited<ReturnType<typeof providerSigningJwks>>['keys']

/**
 * oidc-provider's interaction policy with one check added to the login step: SSO follows the
 * Gatehouse session, so signed out of Gatehouse (or signed in as someone else) means signed out
 * here too, and the login step runs again.
 */
function loginFollowsSession(interactionPolicy: OidcModule['interactionPolicy']) {
  const policy = interactionPolicy.base() as { get(name: string): { checks: { unshift(check: unknown): void } } }
  policy.get('login').checks.unshift(
    new interactionPolicy.Check('gatehouse_session', 'The Gatehouse session ended or changed', 'login_required', (koa) => {
      const state = requestState.get(koa.req)
      const accountId = koa.oidc.session?.accountId
      if (!accountId) return false
      return !koa.oidc.account || !state || state.userId !== accountId
    }),
  )
  return policy
}

/**
 * The check of a self-registered client's metadata (dynamic registration and its management): it
 * never sets Gatehouse's privileges, and its URIs pass the checks of `oidc client create`.
 */
function registrationValidator(conf: ProviderConf, errors: OidcModule['errors'], isSpecialUseIP: (address: string) => boolean) {
  return (koa: KoaContextWithOIDC | undefined, key: string, _value: unknown, metadata: Record<string, unknown>) => {
    const route = koa?.oidc?.route
    if (!route || !REGISTRATION_ROUTES.has(route) || key !== PKCE_REQUIRED) return
    const body = (koa.oidc as unknown as { body?: Record<string, unknown> }).body ?? {}
    // Self-registered clients are pairwise unless they ask for public (an update keeps what the client had).
    if (body.subject_type === undefined && route === 'registration') metadata.subject_type = 'pairwise'
    else if (body.subject_type === undefined && route === 'client_update')
      metadata.subject_type = koa.oidc.client?.subjectType ?? 'pairwise'
    if (metadata.subject_type === 'pairwise' && !metadata.sector_identifier_uri && Array.isArray(metadata.redirect_uris)) {
      const hosts = new Set(metadata.redirect_uris.map((uri) => (typeof uri === 'string' && URL.canParse(uri) ? new URL(uri).host : uri)))
      if (hosts.size > 1)
        throw new errors.InvalidClientMetadata(
          'redirect_uris name several hosts: a pairwise client (the default) needs a sector_identifier_uri, or register subject_type public',
        )
    }
    const privileged = Object.keys(body).find((name) => name.startsWith('gatehouse_'))
    if (privileged) throw new errors.InvalidClientMetadata(`${privileged} cannot be registered`)
    const refused = registrationRefusal(metadata, conf.registration.redirectHosts)
    if (refused?.error === 'invalid_redirect_uri') {
      // Its constructor takes no description (it has a fixed one about authorization requests).
      const error = new errors.InvalidRedirectUri()
      error.error_description = refused.description
      throw error
    }
    if (refused) throw new errors.InvalidClientMetadata(refused.description)
    // A back-channel URI the delivery would refuse is refused now, with the reason (not
    // accepted and then never delivered).
    const backchannel = metadata.backchannel_logout_uri
    const undeliverable =
      typeof backchannel === 'string' ? undeliverableReason(backchannel, conf.registration.allowedHosts, isSpecialUseIP) : undefined
    if (undeliverable) throw new errors.InvalidClientMetadata(undeliverable)
  }
}

/** The oidc-provider features Gatehouse turns on, with the rules it sets for them. */
function providerFeatures(ctx: AuthContext, conf: ProviderConf, errors: OidcModule['errors']): Configuration['features'] {
  return {
    devInteractions: { enabled: false },
    // The live keys sign through node:crypto directly (signing.ts).
    externalSigningSupport: { enabled: true, ack: 'experimental-01' },
    revocation: {
      enabled: true,
      // A client revokes only its own tokens (RFC 7009): oidc-provider's default rule, stated here
      // because its default prints an "oidc-provider NOTICE" on stdout at the first revocation
      // (mod_auth_openidc revokes at every sign-out). Another client's token: a confidential
      // client is refused, a public one answered 200 with the token left alone.
      allowedPolicy: async (_koa: KoaContextWithOIDC, client: ClientInstance, token: { clientId?: string }) => {
        if (token.clientId === client.clientId) return true
        if (client.clientAuthMethod === 'none') return false
        throw new errors.InvalidRequest('client is not authorized to revoke the presented token')
      },
    },
    introspection: {
      enabled: true,
      allowedPolicy: async (_koa: KoaContextWithOIDC, client: ClientInstance, token: { clientId?: string }) => mayIntrospect(client, token),
    },
    clientCredentials: { enabled: true },
    registration: {
      enabled: conf.registration.enabled,
      initialAccessToken: internalRegistrationToken(ctx.secret),
      issueRegistrationAccessToken: true,
    },
    registrationManagement: { enabled: conf.registration.enabled, rotateRegistrationAccessToken: false },
    userinfo: { enabled: true },
    // Every notice is queued and sent by the delivery job (backchannel.ts): see patchClientModel.
    backchannelLogout: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      // The sign-out confirmation and the signed-out page are Gatehouse's hosted pages.
      logoutSource: async (koa: KoaContextWithOIDC, form: string) => {
        const action = /action="([^"]+)"/.exec(form)?.[1] ?? ''
        const xsrf = /name="xsrf" value="([^"]+)"/.exec(form)?.[1] ?? ''
        const target = new URL(hostedPageURL(ctx, 'sign-out'))
        target.searchParams.set('action', action.replace(/&amp;/g, '&'))
        target.searchParams.set('xsrf', xsrf)
        koa.redirect(target.href)
      },
      postLogoutSuccessSource: async (koa: KoaContextWithOIDC) => {
        koa.redirect(hostedPageURL(ctx, 'sign-out', { done: '1' }))
      },
    },
  }
}

/**
 * The grant an authorization request starts from: that of a remembered consent (per user and
 * client, across sessions and browsers); skip-consent (first-party) clients get the requested
 * scopes granted without a screen. `providerOf` is the provider being built (its Grant model).
 */
function existingGrantLoader(ctx: AuthContext, providerOf: () => Provider) {
  return async (koa: KoaContextWithOIDC) => {
    const provider = providerOf()
    const oidc = koa.oidc as KoaContextWithOIDC['oidc'] & {
      result?: { consent?: { grantId?: string } }
      session: { grantIdFor(clientId: string): string | undefined; accountId?: string }
      client: ClientInstance
      requestParamOIDCScopes: Set<string>
      requestParamClaims: Set<string>
      params: Record<string, unknown>
    }
    const accountId = oidc.session.accountId
    const clientId = oidc.client.clientId
    const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(clientId)
    let found = grantId ? await provider.Grant.find(grantId) : undefined
    const remembered = accountId ? await rememberedConsent(ctx, accountId, clientId) : undefined
    if (accountId && remembered && (!found || found.jti !== remembered.grantId) && !oidc.result?.consent?.grantId) {
      found = remembered.grantId ? await provider.Grant.find(remembered.grantId) : undefined
      if (!found || found.accountId !== accountId) {
        found = new provider.Grant({ accountId, clientId })
        found.addOIDCScope(remembered.scopes.join(' '))
        if (remembered.claims.length > 0) found.addOIDCClaims(remembered.claims)
        await attachGrant(ctx, accountId, clientId, await found.save())
      }
    }
    // OIDC Core drops offline_access unless prompt=consent; a remembered consent that covers
    // it counts as that consent, so the refresh token outlives the session.
    const scope = String(oidc.params.scope ?? '')
    if (
      oidc.params[OFFLINE_ASKED] === '1' &&
      !scope.split(' ').includes('offline_access') &&
      remembered?.scopes.includes('offline_access') &&
      oidc.client.grantTypeAllowed('refresh_token')
    ) {
      oidc.params.scope = `${scope} offline_access`.trim()
    }
    if (!clientSkipsConsent(oidc.client) || !accountId) return found
    const grant = found ?? new provider.Grant({ accountId, clientId })
    grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(' '))
    if (oidc.requestParamClaims.size > 0) grant.addOIDCClaims([...oidc.requestParamClaims])
    await grant.save()
    return grant
  }
}

/**
 * oidc-provider's outgoing requests. It refuses loopback and private addresses; Gatehouse serves
 * the LAN, so deliveries to admin-registered clients (and allowed hosts) lift that guard.
 */
function outgoingFetch(url: URL | string, options: RequestInit & { dispatcher?: unknown }) {
  const delivery = trustedDelivery.getStore()
  if (delivery?.trusted === true) delete options.dispatcher
  // A back-channel delivery: the outbox engine's signal, its time limit (one per POST, so one hanging RP costs one) or the server stopping.
  if (delivery) options.signal = delivery.signal
  return globalThis.fetch(url, options)
}

/** oidc-provider's configuration for Gatehouse: storage, keys, claims, clients, features, TTLs, pages. */
function providerConfiguration(
  ctx: AuthContext,
  conf: ProviderConf,
  keys: ProviderKeys,
  oidc: Pick<OidcModule, 'ExternalSigningKey' | 'errors'>,
  extra: { basePath: string; policy: unknown; isSpecialUseIP: (address: string) => boolean; providerOf: () => Provider },
): Configuration {
  return {
    adapter: databaseAdapter(ctx),
    jwks: { keys: nodeSigningKeys(oidc.ExternalSigningKey, keys) as Record<string, unknown>[] },
    findAccount: async (koa, sub) => {
      const user = await accountFor(ctx, sub, koa.oidc?.client?.clientId)
      if (!user) return undefined
      return {
        accountId: user.id,
        claims: async (_use: string, scope: string, requested?: unknown) =>
          (await userClaims(ctx, user, scope, (requested ?? undefined) as Record<string, unknown> | undefined)) as { sub: string },
      }
    },
    claims: CLAIMS,
    scopes: SCOPES,
    subjectTypes: ['public', 'pairwise'],
    pairwiseIdentifier: async (_koa: unknown, accountId: string, client: ClientInstance) =>
      pairwiseSubject(ctx.secret, sectorOf(client as unknown as SectorSource), accountId),
    conformIdTokenClaims: false,
    routes: OIDC_ROUTES,
    responseTypes: ['code'],
    cookies: { keys: cookieKeys(ctx.secret) },
    clientDefaults: { id_token_signed_response_alg: 'RS256', grant_types: ['authorization_code'], response_types: ['code'] },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'ES256', 'EdDSA'],
      userinfoSigningAlgValues: ['RS256', 'ES256', 'EdDSA'],
      introspectionSigningAlgValues: ['RS256', 'ES256', 'EdDSA'],
      authorizationSigningAlgValues: ['RS256', 'ES256', 'EdDSA'],
    },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    extraParams: [OFFLINE_ASKED],
    extraClientMetadata: {
      properties: [PKCE_REQUIRED, SKIP_CONSENT, RESOURCE_SERVER],
      validator: registrationValidator(conf, oidc.errors, extra.isSpecialUseIP),
    },
    pkce: {
      required: (_koa, client) => client.clientAuthMethod === 'none' || client[PKCE_REQUIRED] !== false,
    },
    features: providerFeatures(ctx, conf, oidc.errors),
    interactions: {
      url: (_koa: KoaContextWithOIDC, interaction: { uid: string }) => `${extra.basePath}${INTERACTION_PREFIX}${interaction.uid}`,
      policy: extra.policy,
    },
    loadExistingGrant: existingGrantLoader(ctx, extra.providerOf),
    rotateRefreshToken: true,
    issueRefreshToken: async (_koa: KoaContextWithOIDC, client: ClientInstance) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: conf.ttl.accessToken,
      AuthorizationCode: conf.ttl.authorizationCode,
      ClientCredentials: conf.ttl.clientCredentials,
      IdToken: conf.ttl.idToken,
      RefreshToken: conf.ttl.refreshToken,
      Session: conf.ttl.session,
      Grant: conf.ttl.grant,
      Interaction: conf.ttl.interaction,
    },
    fetch: outgoingFetch,
    // Errors shown to a browser land on Gatehouse's hosted error page.
    renderError: async (koa: KoaContextWithOIDC, out: Record<string, string>) => {
      const target = new URL(hostedPageURL(ctx, 'error'))
      target.searchParams.set('error', out.error ?? 'server_error')
      if (out.error_description) target.searchParams.set('error_description', out.error_description)
      koa.redirect(target.href)
    },
  }
}

/**
 * Where Gatehouse's clients differ from oidc-provider's model: hashed secrets, mixed redirect
 * URI kinds, post-logout redirection only with an ID token, back-channel notices queued.
 */
function patchClientModel(ctx: AuthContext, provider: Provider, als: AsyncLocalStorage<unknown>): void {
  // Secrets are stored as their SHA-256: compare the presented one's hash.
  provider.Client.prototype.compareClientSecret = function compare(this: { clientSecret?: string }, actual: string) {
    return secretMatches(this.clientSecret, actual)
  }
  // Redirect URIs were validated when the client was saved: http(s) and private-use schemes
  // (app.immich:///oauth-callback) may sit in one list, which oidc-provider's web/native split forbids.
  const Schema = (provider.Client as unknown as { Schema: { prototype: Record<string, unknown> } }).Schema
  Schema.prototype.redirectUris = function redirectUris() {}
  provider.proxy = ctx.baseURL.startsWith('https:')
  // oidc-provider's end-session sends back-channel notices itself, while it answers: they are
  // queued instead, with those of Gatehouse's other sign-outs (at most one per client and sid).
  const clientPrototype = provider.Client.prototype as unknown as {
    backchannelLogout: SendLogout
    postLogoutRedirectUriAllowed(this: ClientInstance, value: string): boolean
  }
  // RP-Initiated Logout 1.0 §3: without an ID token the client was issued (id_token_hint, which
  // oidc-provider validates and takes the client from), post-logout redirection is not performed:
  // the person ends on the hosted signed-out page. Else `?client_id=…&post_logout_redirect_uri=`
  // of any registered URI would send anyone's browser there without a click.
  const postLogoutAllowed = clientPrototype.postLogoutRedirectUriAllowed
  clientPrototype.postLogoutRedirectUriAllowed = function checked(this: ClientInstance, value: string) {
    const params = (als.getStore() as KoaContextWithOIDC | undefined)?.oidc?.params as Record<string, unknown> | undefined
    if (!params) return false
    if (!params.id_token_hint) {
      params.post_logout_redirect_uri = undefined
      return true
    }
    return postLogoutAllowed.call(this, value)
  }
  originalSenders.set(provider, clientPrototype.backchannelLogout)
  clientPrototype.backchannelLogout = function queued(this: ClientInstance, sub: string, sid: string) {
    return queueLogout(ctx, this.clientId, sub, sid)
  }
}

/** An oidc-provider error event's fields that the audit entry keeps. */
type ProviderError = { error?: string; error_description?: string; error_detail?: string }

/** Every token, code, grant revocation, client registration and sign-out oidc-provider reports gets its audit entry (and the token metric). */
function auditProviderEvents(ctx: AuthContext, provider: Provider): void {
  const audit = auditOf(ctx)
  provider.on('grant.success', (koa: KoaContextWithOIDC) => {
    countToken(ctx, String(koa.oidc.params?.grant_type ?? 'unknown'))
    audit(koa, {
      type: 'oidc.token-issued',
      actorUserId: accountIdOf(koa),
      target: koa.oidc.client?.clientId ?? null,
      detail: { grantType: koa.oidc.params?.grant_type ?? null },
    })
  })
  provider.on('grant.error', (koa: KoaContextWithOIDC, error: ProviderError) => {
    audit(koa, {
      type: 'oidc.token-refused',
      outcome: 'failure',
      actorUserId: accountIdOf(koa),
      target: koa.oidc?.client?.clientId ?? null,
      detail: {
        grantType: koa.oidc?.params?.grant_type ?? null,
        error: error.error ?? null,
        description: error.error_description ?? null,
        reason: error.error_detail ?? null,
      },
    })
  })
  provider.on('authorization.success', (koa: KoaContextWithOIDC) => {
    audit(koa, { type: 'oidc.code-issued', actorUserId: accountIdOf(koa), target: koa.oidc.client?.clientId ?? null })
  })
  provider.on('authorization.error', (koa: KoaContextWithOIDC, error: ProviderError) => {
    audit(koa, {
      type: 'oidc.authorization-refused',
      outcome: 'failure',
      actorUserId: accountIdOf(koa),
      target: koa.oidc?.client?.clientId ?? null,
      detail: { error: error.error ?? null, description: error.error_description ?? null, reason: error.error_detail ?? null },
    })
  })
  provider.on('grant.revoked', (koa: KoaContextWithOIDC, grantId: string) => {
    audit(koa, {
      type: 'oidc.grant-revoked',
      actorUserId: accountIdOf(koa),
      target: koa.oidc?.client?.clientId ?? null,
      detail: { grantId, route: koa.oidc?.route ?? null },
    })
  })
  // Registered clients: audited; their stored secret hash is never answered (only the POST's issued secret is, see answerAfterCommit).
  provider.on('registration_create.success', (koa: KoaContextWithOIDC, client: ClientInstance) => {
    audit(koa, { type: 'oidc.client-registered', actorUserId: null, target: client.clientId, detail: { via: 'registration' } })
  })
  provider.on('registration_update.success', (koa: KoaContextWithOIDC, client: ClientInstance) => {
    audit(koa, { type: 'oidc.client-updated', actorUserId: null, target: client.clientId, detail: { via: 'registration' } })
  })
  provider.on('registration_delete.success', (koa: KoaContextWithOIDC, client: ClientInstance) => {
    audit(koa, { type: 'oidc.client-deleted', actorUserId: null, target: client.clientId, detail: { via: 'registration' } })
  })
  provider.on('end_session.success', (koa: KoaContextWithOIDC) => {
    audit(koa, { type: 'oidc.signed-out', actorUserId: accountIdOf(koa), target: koa.oidc?.client?.clientId ?? null })
  })
}

/**
 * The answer leaves only once the writes and audit entries of the events it caused are
 * committed (a token request's in one transaction, also when it failed half-way); a registered
 * client's read or update never answers its stored secret hash.
 */
function answerAfterCommit(ctx: AuthContext, provider: Provider): void {
  provider.use(async (koa, next) => {
    const state = requestState.get(koa.req)
    try {
      await next()
    } finally {
      if (state?.batch) await commitBatch(ctx, koa, state, state.batch)
    }
    await settleAudit(state)
    const route = koa.oidc?.route
    if (route === 'client' || route === 'client_update') {
      const body = koa.body as Record<string, unknown> | undefined
      if (body && typeof body === 'object') {
        delete body.client_secret
        delete body.client_secret_expires_at
      }
    }
  })
}

/** A new oidc-provider instance for the current issuer, keys and configuration. */
async function buildProvider(
  ctx: AuthContext,
  logger: Logger,
  from: { conf: ProviderConf; keys: ProviderKeys; basePath: string },
): Promise<Provider> {
  // Loaded on first use: a server without the OIDC provider never loads Koa and oidc-provider.
  const { default: Provider, interactionPolicy, ExternalSigningKey, errors } = await import('oidc-provider')
  // oidc-provider runs its AsyncLocalStorage around every request its Koa app serves; once run it
  // would stay enabled for good, and with it async_hooks' promise hooks on every promise of the
  // process (Node 22), fast-path token requests included. Off while no request is in its hands.
  const als = (await import('oidc-provider/lib/helpers/als.js')).default
  idleOff(als)
  // oidc-provider's own test of the addresses its outgoing requests refuse (registration checks a back-channel URI with it).
  const { isSpecialUseIP } = await import('oidc-provider/lib/helpers/fetch_request.js')

  const policy = loginFollowsSession(interactionPolicy)
  const provider: Provider = new Provider(
    ctx.baseURL,
    providerConfiguration(
      ctx,
      from.conf,
      from.keys,
      { ExternalSigningKey, errors },
      {
        basePath: from.basePath,
        policy,
        isSpecialUseIP,
        providerOf: () => provider,
      },
    ),
  )
  patchClientModel(ctx, provider, als)
  auditProviderEvents(ctx, provider)
  answerAfterCommit(ctx, provider)
  provider.on('server_error', (_koa: KoaContextWithOIDC, error: unknown) => logger.error('oidc-provider error:', error))
  return provider
}

export function providerCache(ctx: AuthContext, logger: Logger) {
  let current: Built | null = null
  // Builds run one at a time (the first one may mint the RS256 key).
  let chain: Promise<unknown> = Promise.resolve()

  // What the current provider was built from (the configuration object is replaced on every change).
  let builtFrom: { conf: unknown; version: string; baseURL: string; basePath: string } | null = null

  const build = async (): Promise<Built> => {
    const conf = ctx.config().oidcProvider
    const { version, keys } = await providerSigningJwks(ctx, ID_TOKEN_ALGS)
    const basePath = ctx.config().basePath
    if (
      current &&
      builtFrom?.conf === conf &&
      builtFrom.version === version &&
      builtFrom.baseURL === ctx.baseURL &&
      builtFrom.basePath === basePath
    )
      return current
    const key = JSON.stringify([ctx.baseURL, version, conf, basePath])
    if (current?.key === key) {
      builtFrom = { conf, version, baseURL: ctx.baseURL, basePath }
      return current
    }
    current = { key, provider: await buildProvider(ctx, logger, { conf, keys, basePath }) }
    builtFrom = { conf, version, baseURL: ctx.baseURL, basePath }
    return current
  }

  return {
    /** The provider for the current issuer, keys and configuration (built on first use). */
    async get(): Promise<Provider> {
      const next = chain.then(build)
      chain = next.catch(() => {})
      return (await next).provider
    },
  }
}
