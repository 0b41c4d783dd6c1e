import type { IncomingMessage, ServerResponse } from 'node:http'
import { parse as parseQuery } from 'node:querystring'
import { Readable } from 'node:stream'
import type Provider from 'oidc-provider'
import type { AdapterPayload, ClientInstance } from 'oidc-provider'
import type { AuthContext } from '../../core/context.js'
import type { RouteContext } from '../../http/route.js'
import type { UserRow } from '../../core/sessions.js'
import { accountFor, userClaims } from './accounts.js'
import { findModelPayload, findModelPayloadByUid, modelRow } from './adapter.js'
import { WriteBatch } from './batch.js'
import { commitTokenBatch } from './provider.js'
import type { OidcClientRow } from './schema.js'
import { findClient } from './store.js'
import { countToken } from './metrics.js'

/**
 * The token endpoint's plain cases without oidc-provider's Koa stack: a rotating
 * `grant_type=refresh_token` and a `grant_type=client_credentials`, authenticated with the client's
 * secret (HTTP Basic or `client_secret` in the body) or, for a public client's refresh, its
 * `client_id` alone. It reads the refresh token, its grant and (for a token that expires with its
 * SSO session) that session by uid the way the adapter does, through the request's write batch
 * passed explicitly (adapter.ts findModelPayload, findModelPayloadByUid: `batch.read`, so the
 * consume stays conditional at commit), and has oidc-provider's models check and instantiate them
 * (verify, instantiate, Session#grantIdFor: its checkSessionBinding). It signs with its IdToken,
 * builds client credentials with its ClientCredentials model, and puts the rotated refresh token,
 * the access token and the client credentials in the batch as the rows the adapter would store
 * (adapter.ts modelRow: same members, same order, same ids): what it stores and signs is what
 * oidc-provider's handler would (tests/features/oidc-provider/oidc-token-fast.api.test.ts compares the two). It leaves
 * out the HTTP and middleware layers (Koa, parameter assembly, the client-authentication chain),
 * the Gatehouse session lookup (a token request does not use it), AsyncLocalStorage (neither
 * Gatehouse's request scope nor oidc-provider's is run: both switch themselves off while no
 * request is in oidc-provider's hands, so a process serving only these has no promise hooks) and
 * the model events nobody listens to (`refresh_token.saved`, …); it writes the audit entry of
 * `grant.success`.
 *
 * It answers only a request it is sure to honour. Anything else goes to oidc-provider unchanged
 * (the body it read is replayed): every refusal (unknown client, wrong secret, unknown, expired,
 * consumed or foreign refresh token, revoked grant, banned user, a scope not granted — including
 * reuse detection, which revokes the grant), DPoP or attestation headers, sender-constrained
 * tokens, `resource`, `authorization_details`, client assertions, duplicated or unknown
 * parameters, another charset or content type, grant types other than these two. Nothing is
 * written before it has decided to answer, so handing over is always safe.
 *
 * `oidcProvider.fastTokenEndpoint: false` sends every token request to oidc-provider.
 */

const FORM = /^application\/x-www-form-urlencoded\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i
/** oidc-provider's own body limit (lib/shared/selective_body.js). */
const LIMIT = 56 * 1024
const PARAMS = new Set(['grant_type', 'refresh_token', 'scope', 'client_id', 'client_secret'])
/** RFC 6749's scope syntax, as oidc-provider checks it (lib/helpers/is_valid_scope.js). */
const SCOPE_SYNTAX = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/u
/** Claims a grant cannot reject (oidc-provider's consts/non_rejectable_claims.js). */
const NON_REJECTABLE_CLAIMS = new Set(['sub', 'sid', 'auth_time', 'acr', 'amr', 'iss'])
/** Control characters oidc-provider refuses in a Basic client id or secret (consts/client_attributes.js noVSCHAR). */
const NO_VSCHAR = /[^\x20-\x7E]/

// ------------------------------------------------------------------ oidc-provider's models (what is used here)

interface Client extends ClientInstance {
  clientSecretExpiresAt?: number
  tlsClientCertificateBoundAccessTokens?: boolean
  dpopBoundAccessTokens?: boolean
  scope?: string
  subjectType?: string
  idTokenEncryptedResponseAlg?: string
  compareClientSecret(actual: string): boolean | Promise<boolean>
}

interface Token {
  jti: string
  clientId: string
  accountId?: string
  grantId?: string
  scope?: string
  readonly scopes: Set<string>
  readonly expiration: number
  readonly isExpired: boolean
  readonly tokenType: string
  claims?: Record<string, Record<string, unknown> | undefined>
  [field: string]: unknown
  readonly remainingTTL: number
  generateTokenId(): string
  getValueAndPayload(): Promise<{ value: string; payload: AdapterPayload }>
  emit(event: string): void
}

interface Grant {
  accountId: string
  clientId: string
  readonly isExpired: boolean
  getOIDCScopeFiltered(filter: Set<string>): string
  getOIDCClaimsFiltered(filter: Set<string>): string[]
  getRejectedOIDCClaims(): string[]
}

interface IdToken {
  scope: string
  mask: Record<string, unknown>
  rejected: string[]
  set(key: string, value: unknown): void
  issue(options: { use: 'idtoken' }): Promise<string>
}

/** A stored model's class: its check of a stored payload (expiry, format) and its instantiation. */
interface StoredModel<T> {
  verify(stored: AdapterPayload, options?: { ignoreExpiration?: boolean }): Promise<AdapterPayload>
  instantiate(payload: AdapterPayload): T
}

/** A token model class: its lifetime (ttl.<Model>) and token id generator. */
interface TokenModel extends StoredModel<Token> {
  new (fields: Record<string, unknown>): Token
  expiresIn(): number
  prototype: { generateTokenId(this: { kind: string }): string }
}

interface Session {
  accountId?: string
  grantIdFor(clientId: string): string | undefined
}

interface Models {
  /** The provider's EventEmitter side: whether anyone listens to a model event. */
  listenerCount(event: string): number
  Client: { find(id: string): Promise<Client | undefined> }
  Grant: StoredModel<Grant>
  Session: StoredModel<Session>
  RefreshToken: TokenModel
  AccessToken: TokenModel
  ClientCredentials: new (fields: Record<string, unknown>) => Token
  IdToken: new (available: Record<string, unknown>, options: { client: Client }) => IdToken
}

// ------------------------------------------------------------------ the request

/** Why the fast path handed over (kept for tests and the profile; never shown to the caller). */
class HandOver extends Error {}
const handOver = (why: string): never => {
  throw new HandOver(why)
}

/**
 * The request again, its body replayed, for oidc-provider to read as if nothing had touched it:
 * an object whose prototype is the request (headers, socket, url…) with its own stream state.
 */
function replay(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = Object.create(req) as IncomingMessage
  Readable.call(copy as unknown as Readable, {
    read() {},
    destroy(error: Error | null, callback: (error: Error | null) => void) {
      callback(error)
    },
  })
  copy.push(body)
  copy.push(null)
  return copy
}

/** The body as sent (reading stops past oidc-provider's limit; a length mismatch is handed over). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  // Listeners rather than the stream's async iterator: a token request's body is one small chunk.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    const done = () => {
      req.off('data', onData)
      req.off('end', done)
      req.off('error', reject)
      resolve(Buffer.concat(chunks, received))
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      chunks.push(chunk)
      if (received > LIMIT) {
        req.pause()
        done()
      }
    }
    req.on('data', onData)
    req.once('end', done)
    req.once('error', reject)
  })
}

type Params = Partial<Record<'grant_type' | 'refresh_token' | 'scope' | 'client_id' | 'client_secret', string>>

function paramsOf(body: Buffer): Params {
  const parsed = parseQuery(body.toString('utf8'))
  const params: Params = {}
  for (const [key, value] of Object.entries(parsed)) {
    if (!PARAMS.has(key)) handOver(`parameter ${key}`)
    if (typeof value !== 'string' || value === '') handOver(`${key} repeated or empty`)
    params[key as keyof Params] = value as string
  }
  return params
}

/** oidc-provider's decoding of one half of a Basic credential (lib/shared/client_auth.js). */
function basicPart(part: string): string {
  const decoded = decodeURIComponent(part.replace(/\+/g, '%20'))
  if (NO_VSCHAR.test(decoded)) handOver('basic credential characters')
  return decoded
}

function isValidBase64(input: string): boolean {
  const match = /^([A-Za-z0-9+/]*)(={0,2})$/u.exec(input)
  if (!match?.[1]) return false
  const remainder = match[1].length % 4
  if (!match[2]) return remainder !== 1
  return (match[1].length + match[2].length) % 4 === 0 && match[2].length === 4 - remainder
}

const clientInstances = new WeakMap<Models, WeakMap<OidcClientRow, Client>>()

/** The client, authenticated as oidc-provider would accept it (anything else: hand over). */
async function authenticate(
  ctx: AuthContext,
  models: Models,
  req: IncomingMessage,
  params: Params,
): Promise<{ client: Client; row: OidcClientRow }> {
  const authorization = req.headers.authorization
  let clientId = params.client_id
  let secret: string | undefined
  if (params.client_secret !== undefined) {
    if (authorization !== undefined) handOver('two client authentications')
    secret = params.client_secret
  } else if (authorization !== undefined) {
    const parts = authorization.split(' ')
    if (parts.length !== 2 || parts[0]?.toLowerCase() !== 'basic' || !isValidBase64(parts[1] ?? '')) handOver('authorization header')
    const basic = Buffer.from(parts[1] as string, 'base64').toString('utf8')
    const i = basic.indexOf(':')
    if (i === -1) handOver('basic credential')
    let id: string
    try {
      id = basicPart(basic.slice(0, i))
      secret = basicPart(basic.slice(i + 1))
    } catch {
      return handOver('basic credential encoding')
    }
    if (clientId !== undefined && clientId !== id) handOver('client_id mismatch')
    clientId = id
    if (!secret) handOver('empty secret')
  }
  if (!clientId) return handOver('no client')
  const row = await findClient(ctx, clientId)
  if (!row) return handOver('unknown client')
  // oidc-provider's Client for this stored row (the row object stays the same until the client changes).
  let byRow = clientInstances.get(models)
  if (!byRow) {
    byRow = new WeakMap()
    clientInstances.set(models, byRow)
  }
  let client = byRow.get(row)
  if (!client) {
    client = await models.Client.find(clientId)
    if (!client) return handOver('unknown client')
    byRow.set(row, client)
  }
  const method = client.clientAuthMethod
  if (secret !== undefined) {
    if (method !== 'client_secret_basic' && method !== 'client_secret_post') handOver('auth method')
    if (client.clientSecretExpiresAt) handOver('expiring secret')
    if (!(await client.compareClientSecret(secret))) handOver('wrong secret')
  } else if (method !== 'none') handOver('auth method')
  if (client.dpopBoundAccessTokens || client.tlsClientCertificateBoundAccessTokens) handOver('sender-constrained client')
  // A pairwise client's `sub` is worked out by the IdToken's claims mask (pairwiseIdentifier), as oidc-provider's.
  if (client.idTokenEncryptedResponseAlg) handOver('client ID token settings')
  return { client, row }
}

interface Answer {
  body: Record<string, unknown>
  audit: { actorUserId: string | null; grantType: string; clientId: string }
}

const answer = (fields: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))

/** A stored token payload: iat, exp, then the fields that have a value, in order. */
function payloadOf(now: number, ttl: number, fields: Record<string, unknown>): Record<string, unknown> {
  const payload: Record<string, unknown> = { iat: now, exp: now + ttl }
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) payload[key] = value
  return payload
}

/** oidc-provider's filter_claims: the requested claims the grant covers. */
function filterClaims(source: Token['claims'], target: string, grant: Grant): Record<string, unknown> {
  const claims = { ...source?.[target] }
  const requested = Object.keys(claims)
  const granted = new Set(grant.getOIDCClaimsFiltered(new Set(requested)))
  for (const claim of requested) if (!NON_REJECTABLE_CLAIMS.has(claim) && !granted.has(claim)) delete claims[claim]
  return claims
}

/**
 * oidc-provider's Model.find (base_model.js) read through the request's batch: the stored payload
 * (its expiry by Gatehouse's clock), checked by the model's verify and instantiated by the model;
 * undefined when absent or refused.
 */
async function findStored<T>(
  ctx: AuthContext,
  batch: WriteBatch,
  model: StoredModel<T>,
  kind: string,
  id: string,
  options?: { ignoreExpiration: boolean },
): Promise<T | undefined> {
  const stored = await findModelPayload(ctx, batch, kind, id)
  if (!stored) return undefined
  try {
    return model.instantiate(await model.verify(stored, options))
  } catch {
    return undefined
  }
}

/**
 * oidc-provider's checkSessionBinding (models/token_helpers.js): a token that expires with its SSO
 * session is valid only while that session (read by uid, as the adapter's findByUid does: gone once
 * its Gatehouse session has ended) is there with the same account and the same grant for the client.
 */
async function sessionBound(ctx: AuthContext, batch: WriteBatch, models: Models, token: Token): Promise<boolean> {
  if (!token.expiresWithSession) return true
  if (typeof token.sessionUid !== 'string') return false
  const stored = await findModelPayloadByUid(ctx, batch, 'Session', token.sessionUid)
  if (!stored) return false
  let session: Session
  try {
    session = models.Session.instantiate(await models.Session.verify(stored))
  } catch {
    return false
  }
  return token.accountId === session.accountId && token.grantId === session.grantIdFor(token.clientId)
}

/** oidc-provider's refresh_token grant with rotation (lib/actions/grants/refresh_token.js), for the plain case. */
async function refreshGrant(
  ctx: AuthContext,
  batch: WriteBatch,
  models: Models,
  client: Client,
  row: OidcClientRow,
  params: Params,
): Promise<Answer> {
  const value = params.refresh_token
  if (!value) return handOver('no refresh_token')
  const old = await findStored(ctx, batch, models.RefreshToken, 'RefreshToken', value, { ignoreExpiration: true })
  if (!old || !(await sessionBound(ctx, batch, models, old))) return handOver('refresh token not found')
  if (old.clientId !== client.clientId || old.isExpired || old.consumed) handOver('refresh token refused')
  for (const bound of ['x5t#S256', 'jkt', 'attestationJkt', 'rar', 'resource'])
    if (old[bound] !== undefined) handOver(`refresh token with ${bound}`)
  const grant = await findStored(ctx, batch, models.Grant, 'Grant', String(old.grantId), { ignoreExpiration: true })
  if (!grant || grant.isExpired || grant.clientId !== client.clientId) return handOver('grant refused')
  let requested: Set<string> | undefined
  if (params.scope) {
    requested = new Set(params.scope.split(' '))
    const held = old.scopes
    for (const scope of requested) if (!held.has(scope)) handOver('scope not held')
  }
  const user: UserRow | undefined = await accountFor(ctx, String(old.accountId), client.clientId, row)
  if (!user) return handOver('account refused')
  if (old.accountId !== grant.accountId) handOver('account mismatch')

  // oidc-provider's RefreshToken#consume is the adapter's consume plus a `refresh_token.consumed`
  // event (its name worked out with a regular expression each time): the event only when someone listens.
  batch.consume('RefreshToken', old.jti, new Date(ctx.clock.now()))
  if (models.listenerCount('refresh_token.consumed') > 0) old.emit('consumed')
  // The rotated refresh token and the access token, stored as oidc-provider's RefreshToken and
  // AccessToken save them (formats/opaque.js getValueAndPayload: iat, exp, then the model's
  // payload fields in the order its constructor sets them, undefined ones left out), built here
  // without the model instances, as the adapter's rows (modelRow). Its token ids come from
  // oidc-provider's own generator.
  const now = Math.floor(Date.now() / 1000)
  let gty = old.gty
  if (typeof gty === 'string' && !gty.endsWith('refresh_token')) gty = `${gty} refresh_token`
  const rtTtl = models.RefreshToken.expiresIn()
  const refreshToken = models.RefreshToken.prototype.generateTokenId.call({ kind: 'RefreshToken' })
  const next = payloadOf(now, rtTtl, {
    accountId: old.accountId,
    acr: old.acr,
    amr: old.amr,
    authTime: old.authTime,
    claims: old.claims,
    expiresWithSession: old.expiresWithSession,
    iiat: old.iiat,
    grantId: old.grantId,
    gty,
    nonce: old.nonce,
    resource: old.resource,
    rotations: typeof old.rotations === 'number' ? old.rotations + 1 : 1,
    scope: old.scope,
    sessionUid: old.sessionUid,
    sid: old.sid,
    rar: old.rar,
    'x5t#S256': old['x5t#S256'],
    jkt: old.jkt,
    attestationJkt: old.attestationJkt,
    kind: 'RefreshToken',
    jti: refreshToken,
    clientId: client.clientId,
  })
  batch.upsert(modelRow(ctx, 'RefreshToken', refreshToken, next as AdapterPayload, rtTtl, null))

  const scope = requested ?? new Set(typeof next.scope === 'string' ? next.scope.split(' ') : [])
  const atScope = grant.getOIDCScopeFiltered(scope)
  const atTtl = models.AccessToken.expiresIn()
  const accessToken = models.AccessToken.prototype.generateTokenId.call({ kind: 'AccessToken' })
  const at = payloadOf(now, atTtl, {
    accountId: user.id,
    expiresWithSession: next.expiresWithSession,
    grantId: next.grantId,
    gty: next.gty,
    sessionUid: next.sessionUid,
    sid: next.sid,
    kind: 'AccessToken',
    jti: accessToken,
    clientId: client.clientId,
    claims: next.claims,
    scope: atScope,
    // oidc-provider's default extraTokenClaims (Gatehouse configures none) adds nothing.
  })
  batch.upsert(modelRow(ctx, 'AccessToken', accessToken, at as AdapterPayload, atTtl, null))

  let idToken: string | undefined
  if (scope.has('openid')) {
    const claims = filterClaims(next.claims as Token['claims'], 'id_token', grant)
    const rejected = grant.getRejectedOIDCClaims()
    const token = new models.IdToken(
      {
        ...(await userClaims(ctx, user, [...scope].join(' '), claims)),
        sub: user.id,
        acr: next.acr,
        amr: next.amr,
        auth_time: next.authTime,
      },
      { client },
    )
    token.scope = grant.getOIDCScopeFiltered(scope)
    token.mask = claims
    token.rejected = rejected
    token.set('nonce', next.nonce)
    token.set('sid', next.sid)
    idToken = await token.issue({ use: 'idtoken' })
  }

  return {
    body: answer({
      access_token: accessToken,
      expires_in: atTtl,
      id_token: idToken,
      refresh_token: refreshToken,
      scope: next.scope ? atScope : atScope || undefined,
      token_type: 'Bearer',
    }),
    audit: { actorUserId: user.id, grantType: 'refresh_token', clientId: client.clientId },
  }
}

/** oidc-provider's client_credentials grant (lib/actions/grants/client_credentials.js) without resource indicators. */
async function clientCredentialsGrant(
  ctx: AuthContext,
  batch: WriteBatch,
  models: Models,
  client: Client,
  params: Params,
  scopes: ReadonlySet<string>,
): Promise<Answer> {
  if (params.refresh_token !== undefined) handOver('refresh_token with client_credentials')
  if (client.scope) handOver('client scope list')
  // Without a resource, only the provider's own scopes are kept (check_resource.js filterStatics).
  const requested = params.scope === undefined ? [] : params.scope.split(' ').filter((s) => scopes.has(s))
  const token = new models.ClientCredentials({ client, scope: requested.join(' ') || undefined })
  // Its save() (base_token.js, base_model.js) with the adapter's upsert done here on the batch: the
  // ttl its remaining lifetime, the id from its generator, the payload as the model builds it.
  const ttl = token.remainingTTL
  token.jti = token.generateTokenId()
  const { value, payload } = await token.getValueAndPayload()
  batch.upsert(modelRow(ctx, 'ClientCredentials', token.jti, payload, ttl, null))
  if (models.listenerCount('client_credentials.saved') > 0) token.emit('saved')
  return {
    body: answer({ access_token: value, expires_in: token.expiration, scope: token.scope || undefined, token_type: token.tokenType }),
    audit: { actorUserId: null, grantType: 'client_credentials', clientId: client.clientId },
  }
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'cache-control': 'no-store',
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}

export interface FastTokenOptions {
  provider: Provider
  /** The scopes the provider knows (client_credentials keeps only these). */
  scopes: ReadonlySet<string>
  /** Called with the reason when the request is handed to oidc-provider (tests). */
  onHandOver?: (why: string) => void
}

/**
 * Answers `POST /oauth2/token` itself when it can: returns true once the answer is sent, else the
 * request oidc-provider should serve (the same one, or a copy whose body is replayed).
 */
export async function fastToken(
  rc: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  options: FastTokenOptions,
): Promise<true | IncomingMessage> {
  const { ctx } = rc
  const headers = req.headers
  const length = Number(headers['content-length'])
  if (
    !FORM.test(headers['content-type'] ?? '') ||
    headers.dpop !== undefined ||
    headers['oauth-client-attestation'] !== undefined ||
    headers['oauth-client-attestation-pop'] !== undefined ||
    headers['content-encoding'] !== undefined ||
    headers['transfer-encoding'] !== undefined ||
    !Number.isSafeInteger(length) ||
    length <= 0 ||
    length > LIMIT
  ) {
    options.onHandOver?.('request form')
    return req
  }
  const body = await readBody(req)
  if (body.length !== length) {
    options.onHandOver?.('body length')
    return replay(req, body)
  }
  const models = options.provider as unknown as Models
  const batch = new WriteBatch()
  let result: Answer
  try {
    const params = paramsOf(body)
    if (params.scope !== undefined && !SCOPE_SYNTAX.test(params.scope)) handOver('scope syntax')
    const { client, row } = await authenticate(ctx, models, req, params)
    if (params.grant_type === 'refresh_token' && client.grantTypeAllowed('refresh_token'))
      result = await refreshGrant(ctx, batch, models, client, row, params)
    else if (params.grant_type === 'client_credentials' && client.grantTypeAllowed('client_credentials'))
      result = await clientCredentialsGrant(ctx, batch, models, client, params, options.scopes)
    else result = handOver('grant type')
  } catch (error) {
    // Nothing written yet: oidc-provider serves the request from the start (and answers any error itself).
    if (batch.writes.length === 0) {
      options.onHandOver?.(error instanceof HandOver ? error.message : `error: ${String(error)}`)
      return replay(req, body)
    }
    // An unexpected failure after the first write (e.g. signing): nothing of it is committed, the
    // refresh token presented stays usable; the error leaves as a 500 like any other.
    throw error
  }
  const { actorUserId, grantType } = result.audit
  const { clientId } = result.audit
  // The entry oidc-provider's grant.success event writes (provider.ts).
  batch.audits.push({ type: 'oidc.token-issued', actorUserId, target: clientId, detail: { grantType }, meta: rc.meta })
  countToken(ctx, grantType)
  const refused = await commitTokenBatch(ctx, batch, { clientId, grantType, actorUserId, route: 'token', meta: rc.meta })
  if (refused) send(res, 400, refused)
  else send(res, 200, result.body)
  return true
}
