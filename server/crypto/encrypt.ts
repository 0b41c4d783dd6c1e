import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/**
 * Encryption at rest for secrets Gatehouse must be able to read back (provider tokens, OAuth client
 * secrets, the SMTP password): AES-256-GCM with a key derived from the auth secret by HKDF-SHA256.
 *
 * Sealed form: `enc:v1:<iv base64url>.<ciphertext+tag base64url>`. The `purpose` is bound as
 * additional authenticated data, so a value sealed for one use cannot be replayed in another.
 * Rotating the auth secret makes earlier sealed values unreadable (decrypt returns null).
 */
const PREFIX = 'enc:v1:'
const IV_BYTES = 12
const TAG_BYTES = 16
const HKDF_SALT = 'gatehouse/encrypt'
const HKDF_INFO = 'aes-256-gcm v1'

const keys = new Map<string, Buffer>()

function keyFor(secret: string): Buffer {
  let key = keys.get(secret)
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, HKDF_INFO, 32))
    keys.set(secret, key)
  }
  return key
}

export const isSealed = (value: string): boolean => value.startsWith(PREFIX)

export function encryptSecret(secret: string, plaintext: string, purpose = 'default'): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret), iv)
  cipher.setAAD(Buffer.from(purpose))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${PREFIX}${iv.toString('base64url')}.${body.toString('base64url')}`
}

/** The plaintext of a sealed value, or null when it is malformed, tampered with or sealed under another key/purpose. */
export function decryptSecret(secret: string, sealed: string, purpose = 'default'): string | null {
  if (!isSealed(sealed)) return null
  const [ivPart, bodyPart] = sealed.slice(PREFIX.length).split('.')
  if (!ivPart || !bodyPart) return null
  const iv = Buffer.from(ivPart, 'base64url')
  const body = Buffer.from(bodyPart, 'base64url')
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) return null
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(secret), iv)
    decipher.setAAD(Buffer.from(purpose))
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES))
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8')
  } catch {
    return null
  }
}

/**
 * Reads a stored value that may be sealed or (legacy, e.g. a database imported from better-auth,
 * or a secret typed into a config file) in clear. A sealed value that does not open gives null.
 */
export function revealSecret(secret: string, stored: string | null | undefined, purpose = 'default'): string | null {
  if (stored === null || stored === undefined) return null
  return isSealed(stored) ? decryptSecret(secret, stored, purpose) : stored
}
