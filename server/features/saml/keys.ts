import { createPrivateKey, generateKeyPair as generateKeyPairCb, type KeyObject, X509Certificate } from 'node:crypto'
import { promisify } from 'node:util'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { decryptSecret, encryptSecret } from '../../crypto/encrypt.js'
import { generateId } from '../../crypto/random.js'
import { certificateBody, selfSignedCertificate } from './cert.js'
import { samlError } from './errors.js'
import type { SamlKeyRow } from './schema.js'
import { allKeys, insertKey, retireKeys } from './store.js'

/**
 * The identity provider's signing keys: an RSA-2048 key and a self-signed certificate valid ten
 * years, made at first use and kept in `samlKey` with the private key sealed by the auth secret (as
 * the jwt feature seals its keys). The newest live key signs; every live key is published in the
 * metadata, so `gatehouse saml cert rotate` adds a key beside the old one (service providers that
 * re-read the metadata trust both) until `--retire` retires the older ones.
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
  signing: boolean
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
  }
  return row
}

async function mintKey(ctx: AuthContext): Promise<SamlKeyRow> {
  const row = await newKey(ctx)
  await insertKey(ctx, row)
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
      'Failed to decrypt the SAML signing key: the auth secret is not the one it was sealed with. Rotate it (gatehouse saml cert rotate --retire).',
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

/** The key that signs now (the newest live one). */
export async function signingKey(ctx: AuthContext): Promise<SigningKey> {
  const rows = await liveKeys(ctx)
  return open(ctx, rows.at(-1) as SamlKeyRow)
}

/** The certificates published in the metadata (every live key), as base64 DER. */
export async function publishedCertificates(ctx: AuthContext): Promise<string[]> {
  return (await liveKeys(ctx)).map((r) => certificateBody(r.certificate))
}

function view(row: SamlKeyRow, signingId: string | undefined): CertificateView {
  const x = new X509Certificate(row.certificate)
  return {
    id: row.id,
    createdAt: row.createdAt.getTime(),
    notAfter: new Date(x.validTo).toISOString(),
    fingerprint256: x.fingerprint256,
    signing: row.id === signingId,
  }
}

export async function listCertificates(ctx: AuthContext): Promise<CertificateView[]> {
  const rows = await liveKeys(ctx)
  const signingId = rows.at(-1)?.id
  return rows.map((r) => view(r, signingId))
}

interface By {
  via: 'cli' | 'panel'
  actorUserId?: string | null
  meta?: RequestMeta | null
}

/**
 * `gatehouse saml cert rotate`: a new key that signs from now on, published beside the older ones;
 * with `retire`, the older ones are retired at once (no longer published).
 */
export async function rotateCertificate(ctx: AuthContext, options: { retire: boolean }, by: By): Promise<CertificateView[]> {
  const before = live(await allKeys(ctx))
  const row = await mintKey(ctx)
  if (options.retire)
    await retireKeys(
      ctx,
      before.map((r) => r.id),
      new Date(ctx.clock.now()),
    )
  await recordAudit(ctx, {
    type: 'saml.certificate-rotated',
    actorUserId: by.actorUserId ?? null,
    target: row.id,
    detail: { via: by.via, retired: options.retire ? before.map((r) => r.id) : [] },
    meta: by.meta ?? null,
  })
  return listCertificates(ctx)
}

/** `gatehouse saml cert retire`: every live key but the newest stops being published. */
export async function retireOlderCertificates(ctx: AuthContext, by: By): Promise<CertificateView[]> {
  const rows = await liveKeys(ctx)
  const older = rows.slice(0, -1).map((r) => r.id)
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
