import { createHmac, webcrypto } from 'node:crypto'

/**
 * Independent implementations of the signed and sealed values Gatehouse writes, from the spec and
 * the better-auth wire reference, never from the production code under test. Tests verify what the
 * server produced with these.
 */

/** The secret every in-process test server signs with (tests/helpers/server.ts). */
export const TEST_SECRET = 'test-secret-0123456789-abcdefghijkl'

/**
 * better-auth's signed cookie value (reference §2): `value.base64(HMAC-SHA256(secret, value))`,
 * standard base64 with padding, then percent-encoded as a cookie value.
 */
export function signedCookie(secret: string, value: string): string {
  return encodeURIComponent(`${value}.${createHmac('sha256', secret).update(value).digest('base64')}`)
}

/**
 * The value a signed cookie carries when its signature verifies, else null. Accepts the
 * percent-encoded form the server sets.
 */
export function verifySignedCookie(secret: string, cookieValue: string): string | null {
  const raw = decodeURIComponent(cookieValue)
  const dot = raw.lastIndexOf('.')
  if (dot < 1) return null
  const value = raw.slice(0, dot)
  return raw.slice(dot + 1) === createHmac('sha256', secret).update(value).digest('base64') ? value : null
}

/**
 * Opens a session_data cookie (reference §2.3): base64url JSON `{session, expiresAt, signature}`
 * where signature = base64url_nopad(HMAC-SHA256(secret, JSON.stringify({...session, expiresAt}))).
 * Returns the payload when the signature verifies, else null.
 */
export function openSessionData(secret: string, cookieValue: string): { session: Record<string, unknown>; expiresAt: number } | null {
  const payload = JSON.parse(Buffer.from(decodeURIComponent(cookieValue), 'base64url').toString('utf8')) as {
    session: Record<string, unknown>
    expiresAt: number
    signature: string
  }
  const expected = createHmac('sha256', secret)
    .update(JSON.stringify({ ...payload.session, expiresAt: payload.expiresAt }))
    .digest('base64url')
  return payload.signature === expected ? { session: payload.session, expiresAt: payload.expiresAt } : null
}

/**
 * Opens a sealed secret `enc:v1:<iv>.<ciphertext+tag>` with WebCrypto (not node's cipher API the
 * server uses): AES-256-GCM, key = HKDF-SHA256(secret, salt "gatehouse/encrypt", info
 * "aes-256-gcm v1"), the purpose as additional data. Null when it does not open.
 */
export async function openSealed(secret: string, sealed: string, purpose: string): Promise<string | null> {
  const match = /^enc:v1:([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(sealed)
  if (!match) return null
  const subtle = webcrypto.subtle
  const ikm = await subtle.importKey('raw', new TextEncoder().encode(secret), 'HKDF', false, ['deriveKey'])
  const key = await subtle.deriveKey(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: new TextEncoder().encode('gatehouse/encrypt'),
      info: new TextEncoder().encode('aes-256-gcm v1'),
    },
    ikm,
    { name: 'AES-GCM', length: 256 },
    false,
    ['decrypt'],
  )
  try {
    const plain = await subtle.decrypt(
      {
        name: 'AES-GCM',
        iv: Buffer.from(match[1] as string, 'base64url'),
        additionalData: new TextEncoder().encode(purpose),
        tagLength: 128,
      },
      key,
      Buffer.from(match[2] as string, 'base64url'),
    )
    return new TextDecoder().decode(plain)
  } catch {
    return null
  }
}
