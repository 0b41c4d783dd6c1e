import { createHash, timingSafeEqual } from 'node:crypto'
import { recordAudit } from '../../core/audit.js'
import { objectChanges, refuseStale } from '../../core/object-revisions.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { randomString } from '../../crypto/random.js'
import { OIDC_ERRORS as OIDC_ERRORS_TEXT, oidcError } from './errors.js'
import type { OidcClientRow } from './schema.js'
import { existingOrganizationIds, existingTeamIds } from '../organization/store.js'
import { clientAsStored, deleteClient, findClient, insertClient, listClients, updateClient } from './store.js'

/**
 * Relying parties: created, changed and deleted here (panel and CLI). The secret is 43 random
 * characters shown once; only its SHA-256 is stored (a high-entropy secret needs no slow hash),
 * and oidc-provider compares against that hash (see provider.ts).
 */

export interface ClientInput {
  name: string
  redirectUris: string[]
  postLogoutRedirectUris?: string[]
  logo?: string | null
  public?: boolean
  /** Confidential clients only (a public client always needs PKCE). Default true. */
  pkceRequired?: boolean
  skipConsent?: boolean
  allowedOrganizations?: string[]
  allowedTeams?: string[]
  /** May introspect every client's tokens (default false: only its own). */
  resourceServer?: boolean
  /** The ID token's signing algorithm (default RS256). */
  idTokenSignedResponseAlg?: IdTokenAlg
  /** Back-channel logout: where logout tokens are posted (null: none). */
  backchannelLogoutUri?: string | null
  /** Authorization requests only through PAR (RFC 9126). */
  requirePar?: boolean
  /** The `sub` its tokens carry: `public` (default for admin-created clients) or `pairwise`. */
  subjectType?: SubjectType
  /**
   * The grants it may use (default: authorization_code and refresh_token, with client_credentials
   * for a confidential client). authorization_code always (its response type is code).
   */
  grantTypes?: GrantType[]
}

/** The grants an admin may give a client (a self-registered one may hold what it registered). */
export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'] as const
export type GrantType = (typeof GRANT_TYPES)[number]

export const SUBJECT_TYPES = ['public', 'pairwise'] as const
export type SubjectType = (typeof SUBJECT_TYPES)[number]

/** The algorithms an ID token may be signed with (keys from the jwt feature). */
export const ID_TOKEN_ALGS = ['RS256', 'ES256', 'EdDSA'] as const
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number]

export interface ClientView {
  clientId: string
  name: string
  logo: string | null
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  public: boolean
  pkceRequired: boolean
  skipConsent: boolean
  allowedOrganizations: string[]
  allowedTeams: string[]
  resourceServer: boolean
  idTokenSignedResponseAlg: IdTokenAlg
  backchannelLogoutUri: string | null
  requirePar: boolean
  subjectType: SubjectType
  /** The grants it may use at the token endpoint (oidc-provider's `grant_types`). */
  grantTypes: string[]
  /** Back-channel logout deliveries to it fail since then (ms; null: not failing), with the last error. */
  backchannelFailingSince: number | null
  backchannelLastError: string | null
  /** A self-registered client (RFC 7591): the id of the initial access token it registered with. */
  registeredByToken: string | null
  createdAt: number
  updatedAt: number
  secretRotatedAt: number | null
}

export interface By {
  via: 'panel' | 'cli'
  actorUserId?: string | null
  meta?: RequestMeta | null
}

const SECRET_PREFIX = 'sha256:'

export const hashClientSecret = (secret: string): string => `${SECRET_PREFIX}${createHash('sha256').update(secret).digest('base64url')}`

/** Constant-time comparison of a presented secret with the stored hash. */
export function secretMatches(stored: string | null | undefined, presented: string): boolean {
  if (!stored || !presented) return false
  const a = Buffer.from(stored)
  const b = Buffer.from(hashClientSecret(presented))
  return a.length === b.length && timingSafeEqual(a, b)
}

const newSecret = (): string => randomString(43)
const newClientId = (): string => randomString(24, 'abcdefghijklmnopqrstuvwxyz0123456789')

/**
 * A redirect URI: absolute, no fragment; http(s) or a private-use scheme (RFC 8252: `app.immich:/…`,
 * `com.example.app:/callback`). javascript:, data: and file: are refused.
 */
export function isValidRedirectUri(value: string): boolean {
  if (value.length > 2048 || /\s/.test(value)) return false
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return false
  }
  if (url.hash || value.includes('#')) return false
  const scheme = url.protocol.slice(0, -1).toLowerCase()
  if (scheme === 'http' || scheme === 'https') return url.hostname !== ''
  if (['javascript', 'data', 'file', 'blob', 'vbscript', 'about'].includes(scheme)) return false
  return /^[a-z][a-z0-9+.-]*$/.test(scheme)
}

function normaliseUris(values: string[] | undefined, required: boolean): string[] {
  const uris = [...new Set((values ?? []).map((v) => v.trim()).filter(Boolean))]
  if (required && uris.length === 0) throw oidcError(400, 'REDIRECT_URI_REQUIRED')
  for (const uri of uris) if (!isValidRedirectUri(uri)) throw oidcError(400, 'INVALID_REDIRECT_URI')
  return uris
}

/** Host names that are on this machine or the local network (plain http is accepted there). */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost') || (!host.includes('.') && !host.includes(':'))) return true
  if (/\.(local|lan|home\.arpa|internal)$/.test(host)) return true
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host)
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])]
    return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254)
  }
  return host === '::1' || /^f[cd][0-9a-f]{2}:/.test(host) || /^fe[89ab][0-9a-f]:/.test(host)
}

/**
 * A back-channel logout URI: absolute http(s) without a fragment, its query kept
 * (mod_auth_openidc's is `…/redirect_uri?logout=backchannel`); plain http only on this machine and
 * the local network. It need not share an origin with the redirect URIs.
 */
export function checkBackchannelUri(value: string | null | undefined): string | null {
  const uri = value?.trim()
  if (!uri) return null
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    throw oidcError(400, 'INVALID_BACKCHANNEL_LOGOUT_URI')
  }
  if (uri.length > 2048 || url.hash || uri.includes('#') || !url.hostname) throw oidcError(400, 'INVALID_BACKCHANNEL_LOGOUT_URI')
  if (url.protocol === 'https:') return uri
  if (url.protocol === 'http:' && isLocalHost(url.hostname)) return uri
  throw oidcError(400, 'INVALID_BACKCHANNEL_LOGOUT_URI')
}

/**
 * A pairwise client's redirect URIs name one host (its sector, OpenID Connect Core §8.1); several
 * hosts would need a sector_identifier_uri, which only self-registered clients give.
 */
function checkSector(subjectType: SubjectType, redirectUris: readonly string[]): void {
  if (subjectType !== 'pairwise') return
  if (new Set(redirectUris.map((uri) => new URL(uri).host.toLowerCase())).size > 1) throw oidcError(400, 'PAIRWISE_NEEDS_ONE_HOST')
}

/**
 * The grants an admin gives a client, in GRANT_TYPES order: authorization_code always (response
 * type code needs it), client_credentials only with a secret (RFC 6749 §4.4).
 */
function checkGrantTypes(grantTypes: readonly GrantType[], isPublic: boolean): GrantType[] {
  if (!grantTypes.includes('authorization_code')) throw oidcError(400, 'AUTHORIZATION_CODE_GRANT_REQUIRED')
  if (isPublic && grantTypes.includes('client_credentials')) throw oidcError(400, 'PUBLIC_CLIENT_CREDENTIALS')
  return GRANT_TYPES.filter((grant) => grantTypes.includes(grant))
}

function checkLogo(logo: string | null | undefined): string | null {
  if (!logo) return null
  try {
    const url = new URL(logo)
    if (url.protocol === 'https:' || url.protocol === 'http:') return logo
  } catch {}
  throw oidcError(400, 'INVALID_LOGO')
}

async function checkGroups(ctx: AuthContext, orgs: string[], teams: string[]): Promise<void> {
  const foundOrgs = new Set(await existingOrganizationIds(ctx, orgs))
  if (orgs.some((id) => !foundOrgs.has(id))) throw oidcError(400, 'UNKNOWN_ORGANIZATION')
  const foundTeams = new Set(await existingTeamIds(ctx, teams))
  if (teams.some((id) => !foundTeams.has(id))) throw oidcError(400, 'UNKNOWN_TEAM')
}

export function toClientView(row: OidcClientRow): ClientView {
  return {
    clientId: row.clientId,
    name: row.name,
    logo: row.logo,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    public: row.public,
    pkceRequired: row.public || row.pkceRequired,
    skipConsent: row.skipConsent,
    allowedOrganizations: row.allowedOrganizations,
    allowedTeams: row.allowedTeams,
    resourceServer: row.resourceServer,
    idTokenSignedResponseAlg: row.idTokenSignedResponseAlg,
    backchannelLogoutUri: row.backchannelLogoutUri,
    requirePar: row.requirePar,
    subjectType: row.subjectType,
    grantTypes: clientMetadata(row).grant_types as string[],
    backchannelFailingSince: row.backchannelFailingSince ? row.backchannelFailingSince.getTime() : null,
    backchannelLastError: row.backchannelLastError ?? null,
    registeredByToken: row.registeredByToken,
    createdAt: row.createdAt.getTime(),
    updatedAt: row.updatedAt.getTime(),
    secretRotatedAt: row.secretRotatedAt ? row.secretRotatedAt.getTime() : null,
  }
}

/** Registers a client; the answer carries the secret (null for a public client), shown this once. */
export async function createClient(
  ctx: AuthContext,
  input: ClientInput,
  by: By,
): Promise<{ client: ClientView; clientSecret: string | null }> {
  const name = input.name.trim()
  if (!name) throw oidcError(400, 'NAME_REQUIRED')
  const redirectUris = normaliseUris(input.redirectUris, true)
  const postLogoutRedirectUris = normaliseUris(input.postLogoutRedirectUris, false)
  const logo = checkLogo(input.logo)
  const backchannelLogoutUri = checkBackchannelUri(input.backchannelLogoutUri)
  const allowedOrganizations = [...new Set(input.allowedOrganizations ?? [])]
  const allowedTeams = [...new Set(input.allowedTeams ?? [])]
  await checkGroups(ctx, allowedOrganizations, allowedTeams)
  checkSector(input.subjectType ?? 'public', redirectUris)
  const isPublic = input.public ?? false
  const grantTypes = input.grantTypes ? checkGrantTypes(input.grantTypes, isPublic) : null
  const secret = isPublic ? null : newSecret()
  const now = new Date(ctx.clock.now())
  const row: OidcClientRow = {
    clientId: newClientId(),
    name,
    logo,
    redirectUris,
    postLogoutRedirectUris,
    secretHash: secret ? hashClientSecret(secret) : null,
    public: isPublic,
    pkceRequired: isPublic || (input.pkceRequired ?? true),
    skipConsent: input.skipConsent ?? false,
    allowedOrganizations,
    allowedTeams,
    resourceServer: input.resourceServer ?? false,
    idTokenSignedResponseAlg: input.idTokenSignedResponseAlg ?? 'RS256',
    backchannelLogoutUri,
    requirePar: input.requirePar ?? false,
    registeredByToken: null,
    registeredMetadata: grantTypes ? { grant_types: grantTypes } : null,
    createdAt: now,
    updatedAt: now,
    secretRotatedAt: null,
    subjectType: input.subjectType ?? 'public',
    backchannelFailingSince: null,
    backchannelLastError: null,
  }
  await insertClient(ctx, row)
  await recordAudit(ctx, {
    type: 'oidc.client-created',
    actorUserId: by.actorUserId ?? null,
    target: row.clientId,
    detail: {
      via: by.via,
      name,
      public: isPublic,
      resourceServer: row.resourceServer,
      idTokenAlg: row.idTokenSignedResponseAlg,
      backchannelLogout: backchannelLogoutUri !== null,
      requirePar: row.requirePar,
      subjectType: row.subjectType,
    },
    meta: by.meta ?? null,
  })
  return { client: toClientView(row), clientSecret: secret }
}

export async function getClient(ctx: AuthContext, clientId: string): Promise<ClientView> {
  const row = await findClient(ctx, clientId)
  if (!row) throw oidcError(404, 'CLIENT_NOT_FOUND')
  return toClientView(row)
}

export async function allClients(ctx: AuthContext): Promise<ClientView[]> {
  return (await listClients(ctx)).map(toClientView)
}

export type ClientPatch = Partial<Omit<ClientInput, 'public'>>

/** Changes a client's settings (its id, kind and secret stay). */
/** What a change of a client records and compares: its view's fields but the times and the delivery state (none is secret). */
const NOT_SETTINGS = ['createdAt', 'updatedAt', 'secretRotatedAt', 'backchannelFailingSince', 'backchannelLastError']

/**
 * Changes the fields given. `base` (the panel): each changed field as the view read it; a field
 * another admin changed since is refused (StaleSave, 409 CONFLICT) and nothing is saved. The audit
 * event records the old and new value of every setting that changed (never the secret: it is not
 * a field of the view).
 */
export async function changeClient(
  ctx: AuthContext,
  clientId: string,
  patch: ClientPatch,
  by: By,
  base?: Record<string, unknown>,
): Promise<ClientView> {
  const { before, row } = await ctx.storage.transaction(async () => {
    const current = await clientAsStored(ctx, clientId)
    if (!current) throw oidcError(404, 'CLIENT_NOT_FOUND')
    const before = toClientView(current)
    await refuseStale(ctx, { type: 'oidc.client-', target: clientId }, { ...before }, { ...patch }, base)
    const next: Partial<OidcClientRow> = { updatedAt: new Date(ctx.clock.now()) }
    if (patch.name !== undefined) {
      next.name = patch.name.trim()
      if (!next.name) throw oidcError(400, 'NAME_REQUIRED')
    }
    if (patch.redirectUris !== undefined) next.redirectUris = normaliseUris(patch.redirectUris, true)
    if (patch.postLogoutRedirectUris !== undefined) next.postLogoutRedirectUris = normaliseUris(patch.postLogoutRedirectUris, false)
    if (patch.logo !== undefined) next.logo = checkLogo(patch.logo)
    if (patch.pkceRequired !== undefined) next.pkceRequired = current.public || patch.pkceRequired
    if (patch.skipConsent !== undefined) next.skipConsent = patch.skipConsent
    if (patch.allowedOrganizations !== undefined) next.allowedOrganizations = [...new Set(patch.allowedOrganizations)]
    if (patch.allowedTeams !== undefined) next.allowedTeams = [...new Set(patch.allowedTeams)]
    if (patch.resourceServer !== undefined) next.resourceServer = patch.resourceServer
    if (patch.idTokenSignedResponseAlg !== undefined) next.idTokenSignedResponseAlg = patch.idTokenSignedResponseAlg
    if (patch.backchannelLogoutUri !== undefined) next.backchannelLogoutUri = checkBackchannelUri(patch.backchannelLogoutUri)
    if (patch.requirePar !== undefined) next.requirePar = patch.requirePar
    if (patch.subjectType !== undefined) next.subjectType = patch.subjectType
    if (patch.grantTypes !== undefined)
      next.registeredMetadata = { ...current.registeredMetadata, grant_types: checkGrantTypes(patch.grantTypes, current.public) }
    checkSector(next.subjectType ?? current.subjectType, next.redirectUris ?? current.redirectUris)
    await checkGroups(ctx, next.allowedOrganizations ?? [], next.allowedTeams ?? [])
    const row = await updateClient(ctx, clientId, next)
    if (!row) throw oidcError(404, 'CLIENT_NOT_FOUND')
    return { before, row }
  })
  const after = toClientView(row)
  const changes = objectChanges({ ...before }, { ...after }, { ignore: NOT_SETTINGS })
  await recordAudit(ctx, {
    type: 'oidc.client-updated',
    actorUserId: by.actorUserId ?? null,
    target: clientId,
    detail: { via: by.via, fields: changes.map((c) => c.key), changes },
    meta: by.meta ?? null,
  })
  return after
}

/** A new secret for a confidential client; the old one stops working at once. */
export async function rotateClientSecret(
  ctx: AuthContext,
  clientId: string,
  by: By,
): Promise<{ client: ClientView; clientSecret: string }> {
  const current = await findClient(ctx, clientId)
  if (!current) throw oidcError(404, 'CLIENT_NOT_FOUND')
  if (current.public) throw oidcError(400, 'PUBLIC_CLIENT_HAS_NO_SECRET')
  const secret = newSecret()
  const now = new Date(ctx.clock.now())
  const row = await updateClient(ctx, clientId, { secretHash: hashClientSecret(secret), secretRotatedAt: now, updatedAt: now })
  if (!row) throw oidcError(404, 'CLIENT_NOT_FOUND')
  await recordAudit(ctx, {
    type: 'oidc.client-secret-rotated',
    actorUserId: by.actorUserId ?? null,
    target: clientId,
    // The secret is named, never written; no setting of the client changed.
    detail: { via: by.via, changes: [{ key: 'secret', from: '(secret)', to: '(secret)' }] },
    meta: by.meta ?? null,
  })
  return { client: toClientView(row), clientSecret: secret }
}

export async function removeClient(ctx: AuthContext, clientId: string, by: By): Promise<void> {
  if (!(await deleteClient(ctx, clientId))) throw oidcError(404, 'CLIENT_NOT_FOUND')
  await recordAudit(ctx, {
    type: 'oidc.client-deleted',
    actorUserId: by.actorUserId ?? null,
    target: clientId,
    detail: { via: by.via },
    meta: by.meta ?? null,
  })
}

/** Registered metadata a self-registered client's record never takes from its stored copy. */
const OWN_METADATA = new Set(['client_id', 'client_secret', 'client_secret_expires_at'])

/** oidc-provider's client metadata for a stored client (read through the store's client cache at each use). */
export function clientMetadata(row: OidcClientRow): Record<string, unknown> {
  const registered = row.registeredMetadata
    ? Object.fromEntries(Object.entries(row.registeredMetadata).filter(([key]) => !OWN_METADATA.has(key) && !key.startsWith('gatehouse_')))
    : {}
  return {
    ...registered,
    client_id: row.clientId,
    client_name: row.name,
    ...(row.logo ? { logo_uri: row.logo } : {}),
    redirect_uris: row.redirectUris,
    post_logout_redirect_uris: row.postLogoutRedirectUris,
    grant_types: row.public ? ['authorization_code', 'refresh_token'] : ['authorization_code', 'refresh_token', 'client_credentials'],
    response_types: ['code'],
    id_token_signed_response_alg: row.idTokenSignedResponseAlg,
    subject_type: row.subjectType,
    token_endpoint_auth_method: row.public ? 'none' : 'client_secret_basic',
    // Custom schemes (app.immich:///oauth-callback) are native-app redirects.
    application_type: row.redirectUris.some((u) => !/^https?:/i.test(u)) ? 'native' : 'web',
    ...(registered.token_endpoint_auth_method ? { token_endpoint_auth_method: registered.token_endpoint_auth_method } : {}),
    // A public client never has client_credentials (registrationRefusal; also for one stored before that check).
    ...(Array.isArray(registered.grant_types)
      ? {
          grant_types:
            (registered.token_endpoint_auth_method ?? (row.public ? 'none' : undefined)) === 'none'
              ? registered.grant_types.filter((g) => g !== 'client_credentials')
              : registered.grant_types,
        }
      : {}),
    ...(registered.application_type ? { application_type: registered.application_type } : {}),
    ...(row.secretHash ? { client_secret: row.secretHash } : {}),
    ...(row.backchannelLogoutUri ? { backchannel_logout_uri: row.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
    require_pushed_authorization_requests: row.requirePar,
    gatehouse_pkce_required: row.public || row.pkceRequired,
    gatehouse_skip_consent: row.skipConsent,
    gatehouse_resource_server: row.resourceServer,
  }
}

// ------------------------------------------------------------------ self-registered clients (RFC 7591 / 7592)

/** 127.0.0.0/8, [::1] and localhost: the only hosts a self-registered client may name with plain http (RFC 8252 §7.3). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host === '::1') return true
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host)
  return v4 !== null && Number(v4[1]) === 127
}

/**
 * A self-registered client's redirect URI (already a valid one, isValidRedirectUri): https; plain
 * http only on loopback; a private-use scheme only reverse-DNS style (RFC 8252 §7.1) and for a
 * client registered with application_type native. The code of the refusal, or undefined.
 */
export function registeredRedirectRefusal(
  uri: string,
  native: boolean,
): 'REGISTERED_REDIRECT_HTTP' | 'REGISTERED_REDIRECT_SCHEME' | undefined {
  const url = new URL(uri)
  const scheme = url.protocol.slice(0, -1).toLowerCase()
  if (scheme === 'https') return undefined
  if (scheme === 'http') return isLoopbackHost(url.hostname) ? undefined : 'REGISTERED_REDIRECT_HTTP'
  return native && /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/.test(scheme) ? undefined : 'REGISTERED_REDIRECT_SCHEME'
}

/**
 * Why a self-registered client's metadata is refused (undefined: accepted): its redirect URIs pass
 * the checks of `oidc client create` and registeredRedirectRefusal's, within
 * `oidcProvider.registration.redirectHosts` when set; its back-channel logout URI the same as an admin's.
 */
export function registrationRefusal(
  metadata: Record<string, unknown>,
  redirectHosts: readonly string[],
): { error: 'invalid_redirect_uri' | 'invalid_client_metadata'; description: string } | undefined {
  const lists = [
    ['redirect_uris', metadata.redirect_uris],
    ['post_logout_redirect_uris', metadata.post_logout_redirect_uris],
  ] as const
  const native = metadata.application_type === 'native'
  for (const [name, value] of lists) {
    if (value === undefined) continue
    if (!Array.isArray(value) || value.some((uri) => typeof uri !== 'string' || !isValidRedirectUri(uri)))
      return { error: 'invalid_redirect_uri', description: `${name}: ${OIDC_ERRORS_TEXT.INVALID_REDIRECT_URI}` }
    for (const uri of value as string[]) {
      const refused = registeredRedirectRefusal(uri, native)
      if (refused) return { error: 'invalid_redirect_uri', description: `${name}: ${OIDC_ERRORS_TEXT[refused]} (${uri})` }
    }
    if (redirectHosts.length > 0) {
      const hosts = new Set(redirectHosts.map((h) => h.toLowerCase()))
      for (const uri of value as string[]) {
        const host = new URL(uri).hostname.toLowerCase()
        if (!hosts.has(host))
          return { error: 'invalid_redirect_uri', description: `${name}: ${OIDC_ERRORS_TEXT.REDIRECT_HOST_NOT_ALLOWED}` }
      }
    }
  }
  // RFC 6749 §4.4: client credentials are for confidential clients only (a public client's id is
  // no secret: anyone could mint its tokens).
  if (
    metadata.token_endpoint_auth_method === 'none' &&
    Array.isArray(metadata.grant_types) &&
    metadata.grant_types.includes('client_credentials')
  )
    return { error: 'invalid_client_metadata', description: OIDC_ERRORS_TEXT.PUBLIC_CLIENT_CREDENTIALS }
  if (metadata.backchannel_logout_uri !== undefined) {
    try {
      checkBackchannelUri(typeof metadata.backchannel_logout_uri === 'string' ? metadata.backchannel_logout_uri : '#')
    } catch {
      return { error: 'invalid_client_metadata', description: OIDC_ERRORS_TEXT.INVALID_BACKCHANNEL_LOGOUT_URI }
    }
  }
  return undefined
}

/**
 * The stored row of a client oidc-provider registered or updated (its metadata as it saves it): the
 * issued secret is stored as its hash (an update hands back the stored hash, kept as it is), and
 * Gatehouse's own privileges (skip-consent, resource server, PKCE relaxation, group restrictions)
 * are never taken from the registration.
 */
export function registeredClientRow(
  id: string,
  metadata: Record<string, unknown>,
  existing: OidcClientRow | undefined,
  tokenId: string | null,
  now: Date,
): OidcClientRow {
  const secret = metadata.client_secret
  const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [])
  const alg = metadata.id_token_signed_response_alg
  const logo = typeof metadata.logo_uri === 'string' && /^https?:\/\//i.test(metadata.logo_uri) ? metadata.logo_uri : null
  const kept = Object.fromEntries(
    Object.entries(metadata).filter(([key]) => key !== 'client_secret' && key !== 'client_id' && !key.startsWith('gatehouse_')),
  )
  const isPublic = metadata.token_endpoint_auth_method === 'none'
  return {
    clientId: id,
    name:
      typeof metadata.client_name === 'string' && metadata.client_name.trim()
        ? metadata.client_name.trim().slice(0, 200)
        : 'Registered client',
    logo,
    redirectUris: strings(metadata.redirect_uris),
    postLogoutRedirectUris: strings(metadata.post_logout_redirect_uris),
    secretHash:
      typeof secret === 'string' && secret && !isPublic ? (secret.startsWith(SECRET_PREFIX) ? secret : hashClientSecret(secret)) : null,
    public: isPublic,
    pkceRequired: true,
    skipConsent: false,
    allowedOrganizations: existing?.allowedOrganizations ?? [],
    allowedTeams: existing?.allowedTeams ?? [],
    resourceServer: false,
    idTokenSignedResponseAlg: (ID_TOKEN_ALGS as readonly unknown[]).includes(alg) ? (alg as IdTokenAlg) : 'RS256',
    backchannelLogoutUri: typeof metadata.backchannel_logout_uri === 'string' ? metadata.backchannel_logout_uri : null,
    requirePar: metadata.require_pushed_authorization_requests === true,
    registeredByToken: existing?.registeredByToken ?? tokenId,
    registeredMetadata: kept,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
    secretRotatedAt: existing?.secretRotatedAt ?? null,
    subjectType: metadata.subject_type === 'pairwise' ? 'pairwise' : 'public',
    backchannelFailingSince: existing?.backchannelFailingSince ?? null,
    backchannelLastError: existing?.backchannelLastError ?? null,
  }
}
