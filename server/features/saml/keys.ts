import { createPrivateKey, generateKeyPair as generateKeyPairCb, type KeyObject, X509Certificate } from 'node:crypto'
import { promisify } from 'node:util'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { decryptSecret, encryptSecret } from '../../crypto/encrypt.js'
import { generateId } from '../../crypto/random.js'
import { certificateBody, selfSignedCertificate } from './cert.js'
import { samlError } from './errors.js'
import type { SamlKeyRow } from './schema.js'
import { activateKey, allKeys, insertKey, retireKeys } from './store.js'

/**
 * The identity provider's signing keys: an RSA-2048 key and a self-signed certificate valid ten
 * years, made at first use and kept in `samlKey` with the private key sealed by the auth secret (as
 * the jwt feature seals its keys). Every live key is published in the metadata; the newest one whose
 * `activatesAt` has come signs. `gatehouse saml cert rotate` publishes a next key that signs only
 * `saml.keyRolloverDays` later or at `--activate` (service providers that re-read the metadata trust it
 * first); `cert retire` then retires the older ones.
 */

const SEAL_PURPOSE = 'saml-signing-key'
const VALID_YEARS = 10
const generateKeyPair = promisify(generateKeyPairCb)

export interface SigningKey {
  id: string
  /** PEM. */
  certificate: string
  /** Base64 DER, for `<ds:X509Certificate>`. */
  certificateBody: string
  privateKey: KeyObject
  privateKeyPem: string
}

export interface CertificateView {
  id: string
  createdAt: number
  notAfter: string
  fingerprint256: string
  /** Signs now. */
  signing: boolean
  /** Published, signing from `activatesAt` (or `cert rotate --activate`). */
  next: boolean
  /** When it signs (or signed) from, epoch ms. */
  activatesAt: number
}

const minting = new WeakMap<AuthContext['db'], Promise<SamlKeyRow>>()

/** A new key and certificate, not stored yet (key generation stays outside any transaction). */
async function newKey(ctx: AuthContext): Promise<SamlKeyRow> {
  const { privateKey } = await generateKeyPair('rsa', { modulusLength: 2048 })
  const now = new Date(ctx.clock.now())
  const notAfter = new Date(now)
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALID_YEARS)
  const certificate = selfSignedCertificate({
    privateKey,
    commonName: new URL(ctx.baseURL).hostname,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter,
  })
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
  const row: SamlKeyRow = {
    id: generateId(),
    certificate,
    privateKey: encryptSecret(ctx.secret, pem, SEAL_PURPOSE),
    createdAt: now,
    retiredAt: null,
    activatesAt: null,
  }
  return row
}

const live = (rows: SamlKeyRow[]): SamlKeyRow[] => rows.filter((r) => !r.retiredAt)

/** The live keys, newest last; one is made when there is none (first use). */
async function liveKeys(ctx: AuthContext): Promise<SamlKeyRow[]> {
  const rows = live(await allKeys(ctx))
  if (rows.length) return rows
  let pending = minting.get(ctx.db)
  if (!pending) {
    // Instances racing at first use: the transaction stores one key, the others read it.
    pending = newKey(ctx)
      .then((row) =>
        ctx.storage.transaction(async () => {
          const again = live(await allKeys(ctx)).at(-1)
          if (again) return again
          await insertKey(ctx, row)
          return row
        }),
      )
      .finally(() => minting.delete(ctx.db))
    minting.set(ctx.db, pending)
  }
  return [await pending]
}

const opened = new Map<string, KeyObject>()

function open(ctx: AuthContext, row: SamlKeyRow): SigningKey {
  const pem = decryptSecret(ctx.secret, row.privateKey, SEAL_PURPOSE)
  if (pem === null)
    throw new Error(
      'Failed to decrypt the SAML signing key: the auth secret is not the one it was sealed with. Rotate it (gatehouse saml cert rotate --activate --retire).',
    )
  let key = opened.get(row.id)
  if (!key) {
    key = createPrivateKey(pem)
    opened.set(row.id, key)
  }
  return {
    id: row.id,
    certificate: row.certificate,
    certificateBody: certificateBody(row.certificate),
    privateKey: key,
    privateKeyPem: pem,
  }
}

/** When a key starts signing: its `activatesAt`, or its creation for keys made before rollovers. */
const activeFrom = (row: SamlKeyRow): number => (row.activatesAt ?? row.createdAt).getTime()

/**
 * Which live key signs at `now` (the newest whose time has come; the oldest live key if none has,
 * which cannot happen through rotate) and which are published but not signing yet ("next").
 */
function roles(rows: SamlKeyRow[], now: number): { signing: SamlKeyRow; next: SamlKeyRow[] } {
  const active = rows.filter((r) => activeFrom(r) <= now)
  const signing =
    active.reduce<SamlKeyRow | undefined>(
      (best, r) =>
        !best || activeFrom(r) > activeFrom(best) || (activeFrom(r) === activeFrom(best) && r.createdAt > best.createdAt) ? r : best,
      undefined,
    ) ?? (rows[0] as SamlKeyRow)
  return { signing, next: rows.filter((r) => activeFrom(r) > now) }
}

/** The key that signs now: the newest live key whose activation time has come (the injected clock). */
export async function signingKey(ctx: AuthContext): Promise<SigningKey> {
  return open(ctx, roles(await liveKeys(ctx), ctx.clock.now()).signing)
}

/** The certificates published in the metadata (every live key: the signing one, the next one, the older ones until retired), as base64 DER. */
export async function publishedCertificates(ctx: AuthContext): Promise<string[]> {
  return (await liveKeys(ctx)).map((r) => certificateBody(r.certificate))
}

function view(row: SamlKeyRow, signingId: string, now: number): CertificateView {
  const x = new X509Certificate(row.certificate)
  return {
    id: row.id,
    createdAt: row.createdAt.getTime(),
    notAfter: new Date(x.validTo).toISOString(),
    fingerprint256: x.fingerprint256,
    signing: row.id === signingId,
    next: activeFrom(row) > now,
    activatesAt: activeFrom(row),
  }
}

export async function listCertificates(ctx: AuthContext): Promise<CertificateView[]> {
  const rows = await liveKeys(ctx)
  const now = ctx.clock.now()
  const { signing } = roles(rows, now)
  return rows.map((r) => view(r, signing.id, now))
}

interface By {
  via: 'cli' | 'panel'
  actorUserId?: string | null
  meta?: RequestMeta | null
}

/**
 * `gatehouse saml cert rotate`: a new key, published in the metadata at once and signing only
 * `saml.keyRolloverDays` later, so service providers that re-read the metadata trust it before it
 * signs (one that pinned the certificate is given the new one meanwhile). With `activate`, the next
 * key (the one published by an earlier rotate, else a new one) signs from now. With `retire` (which
 * activates), every other key stops being published at once: for a key that must go now.
 */
export async function rotateCertificate(
  ctx: AuthContext,
  options: { activate?: boolean; retire?: boolean },
  by: By,
): Promise<CertificateView[]> {
  const activate = Boolean(options.activate || options.retire)
  const now = ctx.clock.now()
  const before = await liveKeys(ctx)
  const pending = roles(before, now).next.at(-1)
  if (pending && !activate) throw samlError(400, 'NEXT_KEY_PENDING')
  let row: SamlKeyRow
  if (pending) {
    await activateKey(ctx, pending.id, new Date(now))
    row = pending
  } else {
    row = await newKey(ctx)
    const days = ctx.config().saml.keyRolloverDays
    row.activatesAt = new Date(activate ? now : now + days * 86_400_000)
    await insertKey(ctx, row)
  }
  const retired = options.retire ? before.filter((r) => r.id !== row.id).map((r) => r.id) : []
  await retireKeys(ctx, retired, new Date(now))
  await recordAudit(ctx, {
    type: pending ? 'saml.certificate-activated' : 'saml.certificate-rotated',
    actorUserId: by.actorUserId ?? null,
    target: row.id,
    detail: { via: by.via, activatesAt: row.activatesAt?.toISOString() ?? null, activated: activate, retired },
    meta: by.meta ?? null,
  })
  return listCertificates(ctx)
}

/** `gatehouse saml cert retire`: the keys older than the signing one stop being published (a next key stays). */
export async function retireOlderCertificates(ctx: AuthContext, by: By): Promise<CertificateView[]> {
  const rows = await liveKeys(ctx)
  const { signing, next } = roles(rows, ctx.clock.now())
  const older = rows.filter((r) => r.id !== signing.id && !next.includes(r)).map((r) => r.id)
  if (!older.length) throw samlError(400, 'LAST_KEY')
  await retireKeys(ctx, older, new Date(ctx.clock.now()))
  await recordAudit(ctx, {
    type: 'saml.certificate-retired',
    actorUserId: by.actorUserId ?? null,
    target: older.join(','),
    detail: { via: by.via },
    meta: by.meta ?? null,
  })
  return listCertificates(ctx)
}
