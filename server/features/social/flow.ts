import { decodeJwt, errors as joseErrors, jwtVerify } from 'jose'
import * as oauth from 'oauth4webapi'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import type { UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { secondFactorStepURL } from '../../http/sign-in.js'
import { encryptSecret, revealSecret } from '../../crypto/encrypt.js'
import {
  accountProviderNotConfigured,
  type CallbackErrorCode,
  flowErrorToAPI,
  OAuthFlowError,
  providerNotSupported,
  refreshNotSupported,
  socialError,
} from './errors.js'
import { KeySetUnavailable, keySetsFor } from './jwks.js'
import { findOrCreateOAuthUser, linkOAuthAccount, openToken, tokenColumns } from './linking.js'
import { resolveExtraProvider } from '../../extra-oauth-providers.js'
import { randomString } from '../../crypto/random.js'
import { extraDefinition, extraOptions } from './extra.js'
import { CLIENT_SECRET_PURPOSE, isProviderId, type ProviderOptions } from './options.js'
import { providers } from './providers/index.js'
import { consumeState, createState, generateCodeVerifier, isTestState, recordTestResult, type StateData } from './state.js'
import { type AccountRow, listSocialAccounts, updateAccount } from './store.js'
import type { OAuthTokens, ProfileContext, ProviderDefinition, ProviderProfile } from './types.js'

/** Outgoing provider calls give up after this long. */
const PROVIDER_TIMEOUT_MS = 10_000
const USER_AGENT = 'Gatehouse'
/** SPEC §9: refresh when the access token expires in under 5000 ms. */

/** Seals a provider client secret for config.json (AES-256-GCM, key derived from the auth secret); the flow opens it. */
export const sealClientSecret = (ctx: AuthContext, plaintext: string): string => encryptSecret(ctx.secret, plaintext, CLIENT_SECRET_PURPOSE)

export const REFRESH_THRESHOLD_MS = 5_000
/** Leeway for ID-token expiry checks. */
const CLOCK_TOLERANCE_S = 60
/** better-auth 1.7's skew for verified ID tokens (exp, nbf, iat), as oauth4webapi's. */
const ID_TOKEN_CLOCK_TOLERANCE_S = 30
/** better-auth 1.7's generateIdTokenNonce: 32 characters of the URL-safe alphabet. */
const NONCE_LENGTH = 32
const NONCE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

export interface ResolvedProvider {
  /** The provider id: one of the 18, or one a feature adds (Feature.oauthProviders). */
  id: string
  def: ProviderDefinition
  options: ProviderOptions
  clientId: string
  clientSecret: string | null
  endpoints: Record<string, string>
  redirectURI: string
}

/**
 * The configured, enabled provider `id` with its endpoints resolved, or null (SPEC §8: 404). A
 * provider a feature adds (generic OAuth) comes first, shadowing a built-in one of the same id as
 * in better-auth 1.7 (its plugin puts its providers before the built-in ones).
 */
export async function resolveProvider(ctx: AuthContext, id: string, evenIfOff = false): Promise<ResolvedProvider | null> {
  const extra = await resolveExtraProvider(ctx, id)
  if (extra) {
    const def = extraDefinition(extra)
    const options = extraOptions(extra)
    return {
      id,
      def,
      options,
      clientId: extra.clientId,
      clientSecret: extra.clientSecret,
      endpoints: def.endpoints(options),
      redirectURI: extra.redirectURI ?? `${ctx.baseURL}/callback/${id}`,
    }
  }
  return resolveBuiltInProvider(ctx, id, evenIfOff)
}

/** One of the 18 built-in providers, configured (and enabled unless `evenIfOff`), or null. */
export function resolveBuiltInProvider(ctx: AuthContext, id: string, evenIfOff = false): ResolvedProvider | null {
  if (!isProviderId(id)) return null
  const options: ProviderOptions | undefined = ctx.config().socialProviders[id]
  if (!options || (!options.enabled && !evenIfOff)) return null
  const def = providers[id] as ProviderDefinition
  const defaults = def.endpoints(options)
  const endpoints: Record<string, string> = { ...defaults }
  for (const [name, url] of Object.entries(options.endpoints ?? {})) if (url) endpoints[name] = url
  return {
    id,
    def,
    options,
    clientId: options.clientId ?? '',
    clientSecret: revealSecret(ctx.secret, options.clientSecret, CLIENT_SECRET_PURPOSE),
    endpoints,
    redirectURI: options.redirectURI ?? `${ctx.baseURL}/callback/${id}`,
  }
}

export async function requireProvider(ctx: AuthContext, id: string): Promise<ResolvedProvider> {
  const resolved = await resolveProvider(ctx, id)
  if (!resolved) throw socialError('PROVIDER_NOT_FOUND')
  return resolved
}

// ---------------------------------------------------------------- authorization request

export interface AuthorizationInput {
  callbackURL?: string
  errorCallbackURL?: string
  newUserCallbackURL?: string
  scopes?: string[]
  loginHint?: string
  requestSignUp?: boolean
  link?: { userId: string; email: string }
  /** A test sign-in from the control panel (see testCallback). */
  test?: boolean
}

function scopesFor(rp: ResolvedProvider, extra: string[] = []): string[] {
  const all = [...(rp.options.disableDefaultScope ? [] : rp.def.scopes), ...rp.options.scope, ...extra]
  return [...new Set(all)]
}

/**
 * Starts the redirect flow (SPEC §7 Outgoing calls): a single-use state stored for 10 minutes
 * with a 128-character PKCE verifier, and the provider's authorization URL.
 */
export async function startAuthorization(
  ctx: AuthContext,
  rp: ResolvedProvider,
  input: AuthorizationInput,
): Promise<{ url: string; state: string }> {
  const { def, options } = rp
  if (def.requireClientSecret && (!options.clientId || !rp.clientSecret)) {
    throw socialError('CLIENT_ID_AND_SECRET_REQUIRED')
  }
  const pkce = options.pkce ?? def.pkce
  const codeVerifier = generateCodeVerifier()
  // OpenID providers verified against their key set bind the ID token to this request (OIDC Core §3.1.2.1).
  const idTokenNonce = def.idTokenVerification?.nonce ? randomString(NONCE_LENGTH, NONCE_ALPHABET) : undefined
  const state = await createState(ctx, {
    providerId: rp.id,
    idTokenNonce,
    callbackURL: input.callbackURL || new URL(ctx.baseURL).origin,
    codeVerifier,
    errorURL: input.errorCallbackURL || undefined,
    newUserURL: input.newUserCallbackURL || undefined,
    link: input.link,
    requestSignUp: input.requestSignUp || undefined,
    test: input.test || undefined,
  })
  const url = new URL(rp.endpoints.authorization as string)
  const params = url.searchParams
  params.set('response_type', def.responseType ?? 'code')
  const clientIdParam = def.clientIdParam ?? 'client_id'
  params.set(clientIdParam, clientIdParam === 'client_key' ? (options.clientKey ?? rp.clientId) : rp.clientId)
  params.set('state', state)
  const scopes = scopesFor(rp, input.scopes)
  if (scopes.length > 0) params.set('scope', scopes.join(def.scopeSeparator ?? ' '))
  params.set('redirect_uri', rp.redirectURI)
  const extra = { prompt: options.prompt, ...def.authorizationParams?.(options, { loginHint: input.loginHint }) }
  for (const [key, value] of Object.entries(extra)) if (value !== undefined && value !== '') params.set(key, value)
  if (idTokenNonce) params.set('nonce', idTokenNonce)
  if (pkce) {
    params.set('code_challenge_method', 'S256')
    params.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier))
  }
  return { url: url.toString(), state }
}

// ---------------------------------------------------------------- token endpoint

class TokenEndpointError extends Error {}

function clientAuth(rp: ResolvedProvider): oauth.ClientAuth {
  const secret = rp.clientSecret
  switch (rp.def.tokenAuth) {
    case 'basic':
      return oauth.ClientSecretBasic(secret ?? '')
    case 'tiktok':
      return (_as, _client, body) => {
        body.delete('client_id')
        body.set('client_key', rp.options.clientKey ?? rp.clientId)
        if (secret) body.set('client_secret', secret)
      }
    default:
      return secret ? oauth.ClientSecretPost(secret) : oauth.None()
  }
}

function authorizationServer(rp: ResolvedProvider): oauth.AuthorizationServer {
  const issuer = rp.def.idTokenIssuer?.(rp.options)?.[0] ?? new URL(rp.endpoints.token as string).origin
  return { issuer, token_endpoint: rp.endpoints.token }
}

const requestOptions = (additional: Record<string, string | undefined> = {}, headers: Record<string, string> = {}) => {
  const additionalParameters: Record<string, string> = {}
  for (const [k, v] of Object.entries(additional)) if (v !== undefined) additionalParameters[k] = v
  return {
    additionalParameters,
    headers: { ...headers, 'user-agent': USER_AGENT },
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    [oauth.allowInsecureRequests]: true,
  }
}

const asDate = (ctx: AuthContext, seconds: unknown): Date | undefined => {
  const n = typeof seconds === 'string' ? Number.parseFloat(seconds) : seconds
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? new Date(ctx.clock.now() + n * 1000) : undefined
}

/**
 * Reads a token endpoint answer. Providers differ (GitHub answers errors with 200, some omit
 * token_type), so this is lenient about shape and strict about errors.
 */
async function readTokenResponse(ctx: AuthContext, response: Response, defaultExpiresIn?: number): Promise<OAuthTokens> {
  const text = await response.text()
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    body = Object.fromEntries(new URLSearchParams(text))
  }
  if (!response.ok || typeof body !== 'object' || body === null || body.error) {
    throw new TokenEndpointError(String(body?.error ?? `HTTP ${response.status}`))
  }
  // TikTok nests the tokens under `data` in some API versions.
  const data = (typeof body.data === 'object' && body.data !== null && !('access_token' in body) ? body.data : body) as Record<
    string,
    unknown
  >
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)
  const accessToken = str(data.access_token)
  const idToken = str(data.id_token)
  if (!accessToken && !idToken) throw new TokenEndpointError('no token in response')
  const scope = data.scope
  const scopes = Array.isArray(scope) ? scope.map(String) : typeof scope === 'string' && scope ? scope.split(' ') : []
  return {
    tokenType: str(data.token_type),
    accessToken,
    refreshToken: str(data.refresh_token),
    idToken,
    accessTokenExpiresAt: asDate(ctx, data.expires_in ?? (accessToken ? defaultExpiresIn : undefined)),
    refreshTokenExpiresAt: asDate(ctx, data.refresh_token_expires_in ?? data.refresh_expires_in),
    scopes,
    raw: data,
  }
}

/** The authorization code exchange (SPEC §7): form-encoded, with the PKCE verifier and client credentials. */
export async function exchangeCode(
  ctx: AuthContext,
  rp: ResolvedProvider,
  code: string,
  codeVerifier: string,
  callback: Record<string, string>,
): Promise<OAuthTokens> {
  const as = authorizationServer(rp)
  const client: oauth.Client = { client_id: rp.clientId }
  const params = oauth.validateAuthResponse(as, client, new URLSearchParams({ code }), oauth.skipStateCheck)
  const verifier = (rp.options.pkce ?? rp.def.pkce) ? codeVerifier : oauth.nopkce
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    clientAuth(rp),
    params,
    rp.redirectURI,
    verifier,
    requestOptions(rp.def.tokenParams?.(callback), rp.def.tokenHeaders),
  )
  return readTokenResponse(ctx, response, rp.def.accessTokenExpiresIn)
}

/** grant_type=refresh_token at the provider's token endpoint. */
export async function refreshProviderTokens(
  ctx: AuthContext,
  rp: ResolvedProvider,
  refreshToken: string,
  scopes: string[],
): Promise<OAuthTokens> {
  const as = authorizationServer(rp)
  const client: oauth.Client = { client_id: rp.clientId }
  const response = await oauth.refreshTokenGrantRequest(
    as,
    client,
    clientAuth(rp),
    refreshToken,
    requestOptions(rp.def.refreshParams?.(scopes), rp.def.tokenHeaders),
  )
  return readTokenResponse(ctx, response, rp.def.accessTokenExpiresIn)
}

// ---------------------------------------------------------------- profile

/**
 * Claims of an ID token received straight from the provider's token endpoint (OIDC Core §3.1.3.7:
 * the TLS channel authenticates it, so no signature check): audience, expiry, and the issuer
 * where the provider has a fixed one.
 */
export function checkedIdTokenClaims(
  ctx: AuthContext,
  rp: ResolvedProvider,
  idToken: string | undefined,
  options: { ignoreExpiry?: boolean } = {},
): Record<string, unknown> | null {
  if (!idToken) return null
  let claims: Record<string, unknown>
  try {
    claims = decodeJwt(idToken) as Record<string, unknown>
  } catch {
    return null
  }
  const audiences = [rp.clientId, rp.options.appBundleIdentifier].filter((a): a is string => Boolean(a))
  const aud = claims.aud
  const audOk = Array.isArray(aud) ? aud.some((a) => audiences.includes(String(a))) : audiences.includes(String(aud))
  if (!audOk) return null
  const now = ctx.clock.now() / 1000
  if (typeof claims.exp !== 'number') return null
  if (!options.ignoreExpiry && claims.exp + CLOCK_TOLERANCE_S < now) return null
  const issuers = rp.def.idTokenIssuer?.(rp.options)
  if (issuers && !issuers.includes(String(claims.iss))) return null
  return claims
}

export function profileContext(
  ctx: AuthContext,
  rp: ResolvedProvider,
  tokens: OAuthTokens,
  callback: Record<string, string>,
  /** account-info reads the ID token stored at sign-in, which may have expired since. */
  storedTokens = false,
): ProfileContext {
  const send = async (url: string, init: Parameters<ProfileContext['fetchJson']>[1] = {}) => {
    const headers = new Headers({ accept: 'application/json', 'user-agent': USER_AGENT, ...init.headers })
    if (init.bearer !== false && tokens.accessToken) headers.set('authorization', `Bearer ${tokens.accessToken}`)
    return fetch(url, { method: init.method ?? 'GET', headers, body: init.body, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) })
  }
  return {
    ctx,
    options: rp.options,
    clientId: rp.clientId,
    endpoints: rp.endpoints as ProfileContext['endpoints'],
    tokens,
    callback,
    async fetchJson(url, init) {
      const response = await send(url, init)
      if (!response.ok) throw new Error(`${url} answered ${response.status}`)
      return response.json()
    },
    async fetchBytes(url) {
      const response = await send(url)
      return response.ok ? Buffer.from(await response.arrayBuffer()) : null
    },
    idTokenClaims: () => checkedIdTokenClaims(ctx, rp, tokens.idToken, { ignoreExpiry: storedTokens }),
  }
}

async function fetchProfile(
  ctx: AuthContext,
  rp: ResolvedProvider,
  tokens: OAuthTokens,
  callback: Record<string, string>,
  storedTokens = false,
): Promise<ProviderProfile | null> {
  try {
    return await rp.def.getUserInfo(profileContext(ctx, rp, tokens, callback, storedTokens))
  } catch {
    return null
  }
}

// ---------------------------------------------------------------- callback

export interface CallbackInput {
  providerId: string
  params: Record<string, string>
  /** The state the browser's signed `state` cookie carries, or null. */
  browserState: string | null
  meta: RequestMeta
}

export interface CallbackOutcome {
  location: string
  /** The user the callback identified: the route finishes the sign-in through the pipeline. */
  signIn?: SignInAttempt
  /** Where a refused sign-in is sent (`errorCallbackURL`, else the default error page). */
  errorURL?: string
  /** The state was looked at: the browser's state cookie is spent. */
  stateUsed: boolean
}

export function errorLocation(base: string, code: CallbackErrorCode | (string & {}), description?: string): string {
  let out = `${base}${base.includes('?') ? '&' : '?'}error=${encodeURIComponent(code)}`
  if (description !== undefined) out += `&error_description=${encodeURIComponent(description)}`
  return out
}

type VerifiedCallback =
  | { ok: true; rp: ResolvedProvider; tokens: OAuthTokens; profile: ProviderProfile }
  | { ok: false; code: CallbackErrorCode | (string & {}); description?: string; profile?: ProviderProfile['user'] }

/**
 * The checks every callback makes once its state is consumed, in order: the state's provider, the
 * provider's own error, a code, the provider configured, the issuer (RFC 9207), the code
 * exchange, the profile and its email. Shared by real and panel test sign-ins (the one rule).
 */
async function verifyCallback(ctx: AuthContext, input: CallbackInput, data: StateData, evenIfOff: boolean): Promise<VerifiedCallback> {
  const { params } = input
  if (data.providerId !== input.providerId) return { ok: false, code: 'state_mismatch' }
  if (params.error) return { ok: false, code: params.error, description: params.error_description }
  if (!params.code) return { ok: false, code: 'no_code' }
  const rp = await resolveProvider(ctx, input.providerId, evenIfOff)
  if (!rp) return { ok: false, code: 'oauth_provider_not_found' }
  const issuers = rp.def.idTokenIssuer?.(rp.options)
  if (params.iss && issuers && !issuers.includes(params.iss)) return { ok: false, code: 'issuer_mismatch' }
  const verification = rp.def.idTokenVerification
  if (verification?.nonce && !data.idTokenNonce) return { ok: false, code: 'nonce_binding_missing' }
  let tokens: OAuthTokens
  try {
    tokens = await exchangeCode(ctx, rp, params.code, data.codeVerifier, params)
  } catch {
    return { ok: false, code: 'invalid_code' }
  }
  // An ID token of a provider with a key set: signature, issuer, audience, age and the request's nonce.
  if (verification && tokens.idToken && !(await idTokenVerified(ctx, rp, tokens.idToken, data.idTokenNonce))) {
    return { ok: false, code: 'unable_to_get_user_info' }
  }
  const profile = await fetchProfile(ctx, rp, tokens, params)
  if (!profile) return { ok: false, code: 'unable_to_get_user_info' }
  if (!profile.user.email) return { ok: false, code: 'email_not_found', profile: profile.user }
  return { ok: true, rp, tokens, profile }
}

/**
 * GET|POST /callback/{id} (SPEC §7, §8): checks the state (bound to the browser, single use,
 * 10 minutes), exchanges the code, reads the profile, signs in or links, and says where to send
 * the browser. Every failure is a redirect with an `error` code.
 */
export async function handleCallback(ctx: AuthContext, input: CallbackInput): Promise<CallbackOutcome> {
  const defaultError = `${ctx.baseURL}/error`
  const { params, meta } = input
  const { state, error } = params
  if (!state) {
    if (error) return { location: errorLocation(defaultError, error, params.error_description), stateUsed: false }
    return { location: errorLocation(defaultError, 'state_not_found'), stateUsed: false }
  }
  // A panel test state is bound to no browser (the panel is on another origin): it signs nobody in.
  if ((!input.browserState || input.browserState !== state) && !(await isTestState(ctx, state))) {
    return { location: errorLocation(defaultError, 'state_mismatch'), stateUsed: false }
  }
  const data = await consumeState(ctx, state)
  if (!data) return { location: errorLocation(defaultError, 'please_restart_the_process'), stateUsed: true }
  if (data.test) return testCallback(ctx, input, state, data)
  const errorURL = data.errorURL ?? defaultError
  const fail = (c: CallbackErrorCode | (string & {}), description?: string): CallbackOutcome => ({
    location: errorLocation(errorURL, c, description),
    stateUsed: true,
  })
  const verified = await verifyCallback(ctx, input, data, false)
  if (!verified.ok) return fail(verified.code, verified.description)
  const { rp, tokens, profile } = verified
  if (!data.callbackURL) return fail('no_callback_url')

  try {
    if (data.link) {
      await linkOAuthAccount(ctx, { providerId: rp.id, profile: profile.user, tokens, link: data.link, meta })
      return { location: data.callbackURL, stateUsed: true }
    }
    const { user, isNew } = await findOrCreateOAuthUser(ctx, {
      providerId: rp.id,
      options: rp.options,
      profile: profile.user,
      tokens,
      requestSignUp: data.requestSignUp ?? false,
      meta,
    })
    return {
      location: isNew && data.newUserURL ? data.newUserURL : data.callbackURL,
      signIn: socialSignIn(user, rp.id),
      errorURL,
      stateUsed: true,
    }
  } catch (e) {
    if (e instanceof OAuthFlowError) return fail(e.code)
    // SPEC §8 / reference §7.3: a database failure while signing in still ends in a redirect.
    return { location: errorLocation(defaultError, 'internal_server_error'), stateUsed: true }
  }
}

/**
 * The callback of a test sign-in started in the control panel: the same checks, code exchange and
 * profile read as a real one, then the outcome is kept for the panel (providers.testResult) and
 * audited. No user, account or session is created.
 */
async function testCallback(ctx: AuthContext, input: CallbackInput, state: string, data: StateData): Promise<CallbackOutcome> {
  const { meta } = input
  const report = async (
    code: CallbackErrorCode | (string & {}) | null,
    profile: ProviderProfile['user'] | null = null,
  ): Promise<CallbackOutcome> => {
    const outcome = code ? 'failure' : 'success'
    await recordTestResult(ctx, state, {
      outcome,
      code,
      profile: profile ? { id: profile.id, name: profile.name, email: profile.email ?? null, emailVerified: profile.emailVerified } : null,
    })
    await recordAudit(ctx, {
      type: 'provider.test-sign-in',
      outcome,
      detail: { provider: data.providerId, ...(code ? { reason: code } : {}) },
      meta,
    })
    return {
      location: code ? errorLocation(data.errorURL ?? `${ctx.baseURL}/error`, code) : data.callbackURL,
      stateUsed: false,
    }
  }
  const verified = await verifyCallback(ctx, input, data, true)
  if (!verified.ok) return report(verified.code, verified.profile ?? null)
  return report(null, verified.profile.user)
}

/** A provider's word identifies the user: the sign-in pipeline (server/http/sign-in.ts) does the rest. */
function socialSignIn(user: UserRow, providerId: string): SignInAttempt {
  return { user, method: 'social', secondFactor: 'due', detail: { provider: providerId } }
}

/**
 * Where a callback whose sign-in the pipeline refused or held for a second factor sends the
 * browser: the hosted sign-in page's second step (its two_factor cookie is set), or the error
 * URL with better-auth's callback code.
 */
export function signInStoppedLocation(
  ctx: AuthContext,
  outcome: CallbackOutcome,
  stop: unknown,
  challenge: Record<string, unknown> = {},
): string {
  const errorURL = outcome.errorURL ?? `${ctx.baseURL}/error`
  if (stop === 'second-factor')
    return secondFactorStepURL(ctx, outcome.location, challenge) ?? errorLocation(errorURL, 'two_factor_required')
  if (stop instanceof APIError && stop.code === 'BANNED_USER') return errorLocation(`${ctx.baseURL}/error`, 'banned', stop.message)
  const refusal = stop instanceof APIError ? CALLBACK_REFUSALS[stop.code] : undefined
  // SPEC §8 / reference §7.3: a database failure while signing in still ends in a redirect.
  return errorLocation(errorURL, refusal ?? 'unable_to_create_session')
}

/** The pipeline's refusals as better-auth's callback error codes. */
const CALLBACK_REFUSALS: Record<string, string> = {
  EMAIL_NOT_VERIFIED: 'email_not_verified',
  TOO_MANY_REQUESTS: 'too_many_requests',
  TWO_FACTOR_ENROLLMENT_REQUIRED: 'two_factor_enrollment_required',
}

/**
 * Whether an ID token from the token endpoint of a provider with a key set is genuine (better-auth
 * 1.7's verifyProviderIdToken): signed by a key of the set with an allowed algorithm, from the
 * issuer, for this client, not expired, and echoing the nonce sent with the authorization request.
 */
async function idTokenVerified(ctx: AuthContext, rp: ResolvedProvider, token: string, nonce: string | undefined): Promise<boolean> {
  const check = rp.def.idTokenVerification
  if (!check) return false
  try {
    const { payload } = await jwtVerify(token, keySetsFor(ctx).resolver(check.jwksUrl), {
      issuer: check.issuer,
      audience: rp.clientId,
      algorithms: check.algorithms,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      clockTolerance: ID_TOKEN_CLOCK_TOLERANCE_S,
      currentDate: new Date(ctx.clock.now()),
    })
    return !nonce || payload.nonce === nonce
  } catch {
    return false
  }
}

// ---------------------------------------------------------------- ID-token sign-in

export interface IdTokenInput {
  token: string
  nonce?: string
  accessToken?: string
  refreshToken?: string
  /** Access token expiry, ms since the epoch (better-auth's client sends a number). */
  expiresAt?: number
}

/** Verifies an ID token an app obtained itself (signature with the provider's key set, issuer, audience, age, nonce). */
export async function verifyIdToken(
  ctx: AuthContext,
  rp: ResolvedProvider,
  token: string,
  nonce?: string,
): Promise<Record<string, unknown>> {
  const check = rp.def.idTokenSignIn
  if (!check) throw socialError('ID_TOKEN_NOT_SUPPORTED')
  if (rp.options.disableIdTokenSignIn) throw socialError('INVALID_TOKEN')
  try {
    const { payload } = await jwtVerify(token, keySetsFor(ctx).resolver(rp.endpoints[check.jwksEndpoint] as string), {
      issuer: check.issuers(rp.options),
      audience: check.audiences(rp.options, rp.clientId),
      algorithms: check.algorithms,
      maxTokenAge: check.maxTokenAge,
      clockTolerance: CLOCK_TOLERANCE_S,
      currentDate: new Date(ctx.clock.now()),
    })
    if (nonce !== undefined && payload.nonce !== nonce) throw socialError('INVALID_TOKEN')
    return payload as Record<string, unknown>
  } catch (e) {
    if (e instanceof KeySetUnavailable && check.keysUnavailable) throw socialError(check.keysUnavailable)
    if (e instanceof APIError) throw e
    if (e instanceof joseErrors.JOSEError || e instanceof KeySetUnavailable || e instanceof TypeError) throw socialError('INVALID_TOKEN')
    throw e
  }
}

async function profileFromIdToken(
  ctx: AuthContext,
  rp: ResolvedProvider,
  input: IdTokenInput,
): Promise<{ profile: ProviderProfile; tokens: OAuthTokens }> {
  const claims = await verifyIdToken(ctx, rp, input.token, input.nonce)
  const profile = rp.def.profileFromIdToken?.(claims, rp.options) ?? null
  if (!profile) throw socialError('FAILED_TO_GET_USER_INFO')
  if (!profile.user.email) throw socialError('USER_EMAIL_NOT_FOUND')
  const tokens: OAuthTokens = {
    accessToken: input.accessToken,
    refreshToken: input.refreshToken,
    idToken: input.token,
    accessTokenExpiresAt: input.expiresAt ? new Date(input.expiresAt) : undefined,
    scopes: [],
    raw: {},
  }
  return { profile, tokens }
}

/** /sign-in/social with `idToken`: verified token → find or create the user (the pipeline makes the session). */
export async function signInWithIdToken(
  ctx: AuthContext,
  rp: ResolvedProvider,
  input: IdTokenInput,
  requestSignUp: boolean,
  meta: RequestMeta,
): Promise<SignInAttempt> {
  const { profile, tokens } = await profileFromIdToken(ctx, rp, input)
  try {
    const { user } = await findOrCreateOAuthUser(ctx, {
      providerId: rp.id,
      options: rp.options,
      profile: profile.user,
      tokens,
      requestSignUp,
      meta,
    })
    return socialSignIn(user, rp.id)
  } catch (e) {
    if (e instanceof OAuthFlowError) throw flowErrorToAPI(e)
    throw e
  }
}

/** /link-social with `idToken` (better-auth 1.7). */
export async function linkWithIdToken(
  ctx: AuthContext,
  rp: ResolvedProvider,
  input: IdTokenInput,
  link: { userId: string; email: string },
  meta: RequestMeta,
): Promise<void> {
  const { profile, tokens } = await profileFromIdToken(ctx, rp, input)
  try {
    await linkOAuthAccount(ctx, { providerId: rp.id, profile: profile.user, tokens, link, meta })
  } catch (e) {
    if (e instanceof OAuthFlowError) throw flowErrorToAPI(e)
    throw e
  }
}

// ---------------------------------------------------------------- provider tokens of an account

export interface AccountSelector {
  providerId?: string
  /** The internal account id (better-auth 1.7) or the provider's account id (1.2). */
  accountId?: string
}

/** The user's social account matching the selector; SPEC §6: only the user's own accounts. */
export async function findUserAccount(ctx: AuthContext, userId: string, selector: AccountSelector): Promise<AccountRow> {
  if (!selector.providerId && !selector.accountId) throw socialError('ACCOUNT_NOT_FOUND')
  const rows = await listSocialAccounts(ctx, userId)
  const found = rows.find(
    (a) =>
      (!selector.providerId || a.providerId === selector.providerId) &&
      (!selector.accountId || a.id === selector.accountId || a.accountId === selector.accountId),
  )
  if (!found) throw socialError('ACCOUNT_NOT_FOUND')
  return found
}

export interface AccessTokenAnswer {
  accessToken: string | undefined
  accessTokenExpiresAt: Date | undefined
  scopes: string[]
  idToken: string | undefined
}

async function refreshAccount(ctx: AuthContext, rp: ResolvedProvider, row: AccountRow): Promise<AccountRow> {
  const refreshToken = openToken(ctx, row.refreshToken)
  if (!refreshToken) throw new Error('no refresh token')
  const scopes = row.scope ? row.scope.split(',') : []
  const tokens = await refreshProviderTokens(ctx, rp, refreshToken, scopes)
  const columns = { ...tokenColumns(ctx, { ...tokens, scopes: tokens.scopes }), updatedAt: new Date(ctx.clock.now()) }
  await updateAccount(ctx, row.id, columns)
  return { ...row, ...columns }
}

/**
 * POST /get-access-token: the account's access token, refreshed first when it expires within
 * 5000 ms and a refresh token exists (SPEC §5).
 */
export async function getAccessToken(ctx: AuthContext, userId: string, selector: AccountSelector): Promise<AccessTokenAnswer> {
  const row = await findUserAccount(ctx, userId, selector)
  const rp = await resolveProvider(ctx, row.providerId)
  if (!rp) throw providerNotSupported(row.providerId)
  let current = row
  const expiresAt = row.accessTokenExpiresAt?.getTime()
  const due = expiresAt === undefined || expiresAt - ctx.clock.now() < REFRESH_THRESHOLD_MS
  if (row.refreshToken && due && rp.def.refresh) {
    try {
      current = await refreshAccount(ctx, rp, row)
    } catch {
      throw socialError('FAILED_TO_GET_A_VALID_ACCESS_TOKEN')
    }
  }
  return {
    accessToken: openToken(ctx, current.accessToken) ?? undefined,
    accessTokenExpiresAt: current.accessTokenExpiresAt ?? undefined,
    scopes: current.scope ? current.scope.split(',') : [],
    idToken: openToken(ctx, current.idToken) ?? undefined,
  }
}

/** POST /refresh-token: always asks the provider. */
export async function refreshAccessToken(ctx: AuthContext, userId: string, selector: AccountSelector) {
  const row = await findUserAccount(ctx, userId, selector)
  const rp = await resolveProvider(ctx, row.providerId)
  if (!rp) throw providerNotSupported(row.providerId)
  if (!rp.def.refresh) throw refreshNotSupported(row.providerId)
  if (!row.refreshToken) throw socialError('REFRESH_TOKEN_NOT_FOUND')
  let current: AccountRow
  try {
    current = await refreshAccount(ctx, rp, row)
  } catch {
    throw socialError('FAILED_TO_REFRESH_ACCESS_TOKEN')
  }
  const scopes = current.scope ? current.scope.split(',') : []
  return {
    tokenType: 'bearer',
    accessToken: openToken(ctx, current.accessToken) ?? undefined,
    refreshToken: openToken(ctx, current.refreshToken) ?? undefined,
    accessTokenExpiresAt: current.accessTokenExpiresAt ?? undefined,
    refreshTokenExpiresAt: current.refreshTokenExpiresAt ?? undefined,
    scope: current.scope ?? undefined,
    scopes,
    idToken: openToken(ctx, current.idToken) ?? undefined,
    providerId: current.providerId,
    accountId: current.accountId,
  }
}

/** /account-info: the provider's current view of the account, read with its (refreshed) token. */
export async function accountInfo(ctx: AuthContext, userId: string, accountId: string) {
  const row = await findUserAccount(ctx, userId, { accountId })
  const rp = await resolveProvider(ctx, row.providerId)
  if (!rp) throw accountProviderNotConfigured(row.providerId)
  const access = await getAccessToken(ctx, userId, { accountId: row.id })
  const tokens: OAuthTokens = {
    accessToken: access.accessToken,
    idToken: access.idToken,
    accessTokenExpiresAt: access.accessTokenExpiresAt,
    scopes: access.scopes,
    raw: {},
  }
  const profile = await fetchProfile(ctx, rp, tokens, {}, true)
  if (!profile) throw socialError('FAILED_TO_GET_USER_INFO', 400)
  const { id, name, email, image, emailVerified } = profile.user
  return { user: { id, name, email, image, emailVerified }, data: profile.data }
}
