import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/** HMAC-SHA256 of `value` keyed by the secret, standard base64 with padding (44 chars). */
export function hmacBase64(secret: string, value: string): string {
  return createHmac('sha256', secret).update(value).digest('base64')
}

export function hmacBase64Url(secret: string | Buffer, value: string): string {
  return createHmac('sha256', secret).update(value).digest('base64url')
}

const purposeKeys = new Map<string, Buffer>()

/**
 * A 32-byte key for one purpose, derived from the auth secret by HKDF-SHA256 (salt `gatehouse/<purpose>`),
 * so a keyed hash made for one use is no signature of another. Memoized per secret and purpose.
 */
export function purposeKey(secret: string, purpose: string): Buffer {
  const slot = `${purpose}\u0000${secret}`
  let key = purposeKeys.get(slot)
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, `gatehouse/${purpose}`, 'hmac-sha256 v1', 32))
    if (purposeKeys.size > 100) purposeKeys.clear()
    purposeKeys.set(slot, key)
  }
  return key
}

/** better-auth's signed cookie value: `value.base64(hmac)` (not yet percent-encoded). */
export function signValue(secret: string, value: string): string {
  return `${value}.${hmacBase64(secret, value)}`
}

/**
 * Verified signed values, per secret. The mapping is deterministic, so a cookie presented again
 * (every request of a session) skips the HMAC: creating a native Hmac per request costs far more
 * under load than in a loop. Bounded, so a flood of forged values cannot grow it.
 */
const verified = new Map<string, Map<string, string | null>>()
const MAX_VERIFIED = 10_000

/**
 * Reverses signValue. Accepts the percent-encoded and decoded forms. Returns the value, or null
 * if the signature is missing, malformed or wrong.
 */
export function unsignValue(secret: string, signed: string): string | null {
  let memo = verified.get(secret)
  if (!memo) {
    memo = new Map()
    verified.set(secret, memo)
  }
  const known = memo.get(signed)
  if (known !== undefined) return known
  const value = verifySignedValue(secret, signed)
  if (memo.size >= MAX_VERIFIED) memo.clear()
  memo.set(signed, value)
  return value
}

function verifySignedValue(secret: string, signed: string): string | null {
  let raw = signed
  if (raw.includes('%')) {
    try {
      raw = decodeURIComponent(raw)
    } catch {
      return null
    }
  }
  const dot = raw.lastIndexOf('.')
  if (dot < 1) return null
  const value = raw.slice(0, dot)
  const signature = raw.slice(dot + 1)
  if (signature.length !== 44 || !signature.endsWith('=')) return null
  return safeEqual(signature, hmacBase64(secret, value)) ? value : null
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  return ab.length === bb.length && timingSafeEqual(ab, bb)
}
