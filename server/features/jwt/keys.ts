import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { toPublicUser } from '../../core/users.js'
import { decryptSecret, encryptSecret } from '../../crypto/encrypt.js'
import { generateId } from '../../crypto/random.js'
import type { ChangeSignal } from '../../db/storage.js'
import type { SessionAnswer } from '../../feature.js'
import { durationSeconds, type JwtConfig } from './config.js'
import type { KeypairRow } from './schema.js'
import { findMembership } from '../organization/store.js'
import { allKeypairs, deleteKeypairsRetiredBefore, insertKeypair, retireKeypair, retireLiveKeypairs } from './store.js'

/**
 * Signing keys and tokens, as better-auth's jwt plugin: one live key signs (the newest of the
 * configured algorithm, minted on first use); a rotation retires it, a retired key stays in the
 * JWKS for the grace period and is then deleted. Private keys are sealed with the auth secret.
 *
 * The keys are read once and kept in memory with their imported private key; a change made here
 * drops that at once, another process's (`gatehouse jwt rotate` on the data directory) is seen
 * within 250 ms through the storage's change signal (SQLite: `PRAGMA data_version`).
 */

const SEAL_PURPOSE = 'jwt-signing-key'
const DEFAULT_ALG = 'EdDSA'

interface KeyState {
  rows: KeypairRow[]
  /** Other processes' commits (`gatehouse jwt rotate` on the data directory). */
  signal: ChangeSignal
  checkedAt: number
  stale: boolean
  privateKeys: Map<string, CryptoKey>
  /** Serialises key creation so concurrent first requests mint one key. */
  minting: Promise<KeypairRow> | null
  jwks: { ids: string; json: string } | null
}

const states = new WeakMap<AuthContext['db'], KeyState>()

async function state(ctx: AuthContext): Promise<KeyState> {
  let s = states.get(ctx.db)
  if (!s) {
    s = {
      rows: [],
      signal: ctx.storage.changeSignal(),
      checkedAt: Number.NEGATIVE_INFINITY,
      stale: true,
      privateKeys: new Map(),
      minting: null,
      jwks: null,
    }
    states.set(ctx.db, s)
  }
  const now = performance.now()
  if (now - s.checkedAt >= 250) {
    s.checkedAt = now
    if (s.signal.changed()) s.stale = true
  }
  if (s.stale) {
    s.rows = await allKeypairs(ctx)
    s.stale = false
    s.jwks = null
  }
  return s
}

const invalidate = (ctx: AuthContext): void => {
  const s = states.get(ctx.db)
  if (s) s.stale = true
}

const conf = (ctx: AuthContext): JwtConfig => ctx.config().jwt
const algOf = (row: KeypairRow): string => row.alg ?? DEFAULT_ALG
const isLive = (row: KeypairRow, now: number): boolean => !row.expiresAt || row.expiresAt.getTime() > now

/** Generates and stores a key pair of the configured algorithm; the private JWK is sealed. */
async function mintKey(ctx: AuthContext, alg: string = conf(ctx).jwks.keyPairConfig.alg): Promise<KeypairRow> {
  const pair = { ...conf(ctx).jwks.keyPairConfig, alg }
  const { publicKey, privateKey } =
    pair.alg === 'RS256'
      ? await generateKeyPair('RS256', { modulusLength: pair.modulusLength, extractable: true })
      : pair.alg === 'ES256'
        ? await generateKeyPair('ES256', { extractable: true })
        : await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })
  const publicJwk = await exportJWK(publicKey)
  const privateJwk = await exportJWK(privateKey)
  const row: KeypairRow = {
    id: generateId(),
    publicKey: JSON.stringify(publicJwk),
    privateKey: encryptSecret(ctx.secret, JSON.stringify(privateJwk), SEAL_PURPOSE),
    createdAt: new Date(ctx.clock.now()),
    alg: pair.alg,
    crv: typeof publicJwk.crv === 'string' ? publicJwk.crv : null,
    expiresAt: null,
  }
  await insertKeypair(ctx, row)
  invalidate(ctx)
  return row
}

async function mintOnce(ctx: AuthContext): Promise<KeypairRow> {
  const s = await state(ctx)
  if (!s.minting) {
    s.minting = mintKey(ctx).finally(() => {
      s.minting = null
    })
  }
  return s.minting
}

/** The key that signs now: the newest live key of the configured algorithm, minted if there is none or it is due for rotation. */
async function signingKey(ctx: AuthContext): Promise<KeypairRow> {
  const c = conf(ctx)
  const now = ctx.clock.now()
  const alg = c.jwks.keyPairConfig.alg
  let live: KeypairRow | undefined
  for (const row of (await state(ctx)).rows) {
    if (algOf(row) === alg && isLive(row, now) && (!live || row.createdAt >= live.createdAt)) live = row
  }
  if (live && c.jwks.rotationInterval && live.createdAt.getTime() + c.jwks.rotationInterval * 1000 <= now) {
    await retireKeypair(ctx, live.id, new Date(now))
    invalidate(ctx)
    await recordAudit(ctx, { type: 'jwt.key-rotated', target: live.id, detail: { via: 'rotationInterval', alg } })
    live = undefined
  }
  return live ?? (await mintOnce(ctx))
}

async function privateKeyOf(ctx: AuthContext, row: KeypairRow): Promise<CryptoKey> {
  const s = await state(ctx)
  let key = s.privateKeys.get(row.id)
  if (!key) {
    const jwk = decryptSecret(ctx.secret, row.privateKey, SEAL_PURPOSE)
    if (jwk === null) {
      throw new Error(
        'Failed to decrypt the JWT signing key: the auth secret is not the one it was sealed with. Rotate the signing key (gatehouse jwt rotate).',
      )
    }
    key = (await importJWK(JSON.parse(jwk) as JWK, algOf(row))) as CryptoKey
    s.privateKeys.set(row.id, key)
  }
  return key
}

const baseOrigin = (ctx: AuthContext): string => new URL(ctx.baseURL).origin

/** The token's claims: the user's fields (better-auth's default payload), `sub`, and the configured extras. */
export async function tokenPayload(ctx: AuthContext, answer: SessionAnswer): Promise<Record<string, unknown>> {
  const claims = conf(ctx).jwt.claims
  // A user row from the database carries configured fields as one JSON column: flatten it as the wire does.
  const user = 'additionalFields' in answer.user ? toPublicUser(answer.user as unknown as UserRow) : answer.user
  const payload: Record<string, unknown> = { ...user }
  const orgId = answer.session.activeOrganizationId ?? null
  if (claims.activeOrganization || claims.teams) {
    const membership = orgId ? await findMembership(ctx, orgId, answer.user.id) : undefined
    if (claims.activeOrganization) {
      payload.activeOrganizationId = orgId
      payload.organizationRole = membership?.role ?? null
    }
    if (claims.teams) payload.teams = membership?.teamId ? [membership.teamId] : []
  }
  return payload
}

/** Signs a token for a session: EdDSA by default, `iss`/`aud` the base URL's origin, `sub` the user id, 15 minutes. */
export async function signSessionToken(ctx: AuthContext, answer: SessionAnswer): Promise<string> {
  const c = conf(ctx)
  const row = await signingKey(ctx)
  const key = await privateKeyOf(ctx, row)
  const iat = Math.floor(ctx.clock.now() / 1000)
  const origin = baseOrigin(ctx)
  return new SignJWT(await tokenPayload(ctx, answer))
    .setProtectedHeader({ alg: algOf(row), kid: row.id })
    .setIssuedAt(iat)
    .setExpirationTime(iat + durationSeconds(c.jwt.expirationTime))
    .setIssuer(c.jwt.issuer ?? origin)
    .setAudience(c.jwt.audience ?? origin)
    .setSubject(answer.user.id)
    .sign(key)
}

/** Deletes keys whose grace period is over. */
async function pruneRetired(ctx: AuthContext): Promise<void> {
  const cutoff = new Date(ctx.clock.now() - conf(ctx).jwks.gracePeriod * 1000)
  const s = await state(ctx)
  if (!s.rows.some((r) => r.expiresAt && r.expiresAt < cutoff)) return
  const removed = await deleteKeypairsRetiredBefore(ctx, cutoff)
  if (removed.length > 0) {
    invalidate(ctx)
    for (const id of removed) s.privateKeys.delete(id)
    await recordAudit(ctx, { type: 'jwt.key-removed', detail: { keys: removed } })
  }
}

/** The JWKS document (JSON text): live keys and retired ones still in their grace period. */
export async function jwksJSON(ctx: AuthContext): Promise<string> {
  await pruneRetired(ctx)
  let s = await state(ctx)
  if (s.rows.length === 0) {
    await mintOnce(ctx)
    s = await state(ctx)
  }
  const ids = s.rows.map((r) => r.id).join(',')
  if (s.jwks?.ids !== ids) {
    const keys = s.rows.map((row) => ({
      alg: algOf(row),
      ...(row.crv ? { crv: row.crv } : {}),
      ...(JSON.parse(row.publicKey) as JWK),
      kid: row.id,
    }))
    s.jwks = { ids, json: JSON.stringify({ keys }) }
  }
  return s.jwks.json
}

export interface SigningKeyView {
  id: string
  alg: string
  crv: string | null
  createdAt: number
  /** When it stopped signing (null: live). */
  retiredAt: number | null
  /** When it leaves the JWKS (retiredAt + grace period). */
  removedAt: number | null
  signing: boolean
}

/** The keys as the panel shows them (no private material). */
export async function listSigningKeys(ctx: AuthContext): Promise<SigningKeyView[]> {
  await pruneRetired(ctx)
  const c = conf(ctx)
  const now = ctx.clock.now()
  const rows = (await state(ctx)).rows
  let signing: KeypairRow | undefined
  for (const row of rows) {
    if (algOf(row) === c.jwks.keyPairConfig.alg && isLive(row, now) && (!signing || row.createdAt >= signing.createdAt)) signing = row
  }
  return rows
    .map((row) => ({
      id: row.id,
      alg: algOf(row),
      crv: row.crv,
      createdAt: row.createdAt.getTime(),
      retiredAt: row.expiresAt ? row.expiresAt.getTime() : null,
      removedAt: row.expiresAt ? row.expiresAt.getTime() + c.jwks.gracePeriod * 1000 : null,
      signing: row === signing,
    }))
    .reverse()
}

/**
 * Rotation: every live key is retired now (it stays in the JWKS for the grace period) and a new
 * key of the configured algorithm signs from now on.
 */
export async function rotateSigningKey(
  ctx: AuthContext,
  by: { via: 'panel' | 'cli'; actorUserId?: string | null; meta?: RequestMeta | null },
): Promise<{ id: string; alg: string; retired: string[] }> {
  const retired = await retireLiveKeypairs(ctx, new Date(ctx.clock.now()))
  invalidate(ctx)
  const row = await mintKey(ctx)
  await pruneRetired(ctx)
  await recordAudit(ctx, {
    type: 'jwt.key-rotated',
    actorUserId: by.actorUserId ?? null,
    target: row.id,
    detail: { via: by.via, alg: algOf(row), retired },
    meta: by.meta ?? null,
  })
  return { id: row.id, alg: algOf(row), retired }
}

/**
 * The private JWKs (with `kid` and `alg`) the OpenID provider feature signs and verifies with:
 * every live key, newest first, then every retired key still in the JWKS (marked
 * `key_ops: ['verify']`, so it verifies what it signed, an `id_token_hint` for one, until it leaves
 * the JWKS, and never signs again). A live key of each algorithm in `algs` is minted when there is
 * none (relying parties default to RS256; a client may ask for ES256 or EdDSA); it is published in
 * the JWKS like every other key. `version` changes whenever the set of keys or their state does.
 */
type ProviderJwk = JWK & { kid: string; alg: string; key_ops?: string[] }
type ProviderJwks = { version: string; keys: ProviderJwk[] }
const providerJwksCache = new WeakMap<KeypairRow[], Map<string, ProviderJwks>>()

export async function providerSigningJwks(ctx: AuthContext, algs: readonly string[] = ['RS256']): Promise<ProviderJwks> {
  await pruneRetired(ctx)
  const now = ctx.clock.now()
  let rows = (await state(ctx)).rows
  for (const alg of algs) {
    if (!rows.some((row) => algOf(row) === alg && isLive(row, now))) {
      await mintKey(ctx, alg)
      rows = (await state(ctx)).rows
    }
  }
  const liveIds = rows.filter((row) => isLive(row, now)).map((row) => row.id)
  const version = `${rows.map((row) => row.id).join(',')}|${liveIds.join(',')}`
  // Decrypted once per set of keys (the rows array is replaced whenever the keys change).
  let byVersion = providerJwksCache.get(rows)
  const cached = byVersion?.get(version)
  if (cached) return cached
  const ordered = [...rows].sort((a, b) => {
    const live = Number(isLive(b, now)) - Number(isLive(a, now))
    return live !== 0 ? live : b.createdAt.getTime() - a.createdAt.getTime()
  })
  const keys = ordered.map((row): ProviderJwk => {
    const jwk = decryptSecret(ctx.secret, row.privateKey, SEAL_PURPOSE)
    if (jwk === null) throw new Error('Failed to decrypt a JWT signing key: the auth secret is not the one it was sealed with.')
    return { ...(JSON.parse(jwk) as JWK), kid: row.id, alg: algOf(row), ...(isLive(row, now) ? {} : { key_ops: ['verify'] }) }
  })
  const result = { version, keys }
  if (!byVersion) {
    byVersion = new Map()
    providerJwksCache.set(rows, byVersion)
  }
  byVersion.set(version, result)
  return result
}
